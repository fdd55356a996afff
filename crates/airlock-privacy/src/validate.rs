//! The checks a match must pass beyond its pattern: checksums (Luhn, IBAN mod 97, national id
//! keys), address ranges that are not personal (private, loopback, documentation), and the
//! shape of a random secret (entropy, mixed characters) against hashes, UUIDs and placeholders.

use std::ops::Range;

use super::rules::Check;

/// Whether the match `m` of `text` (its replaced part `part`) passes `check`.
pub(crate) fn passes(check: Check, text: &str, m: Range<usize>, part: Range<usize>) -> bool {
    let Some(v) = text.get(part.clone()) else {
        return false;
    };
    match check {
        Check::Entropy => entropy(v) >= 3.5,
        Check::Mixed => mixed(v),
        Check::NotPlaceholder => !placeholder(v),
        Check::AssignedSecret => assigned_secret(v),
        Check::Email => email(v) && !in_url(text, m.start),
        Check::Phone => phone(text, m),
        Check::Luhn => luhn(v) && !in_number(text, m),
        Check::Iban => iban(v),
        Check::PublicIpv4 => public_ipv4(text, m),
        Check::PublicIpv6 => public_ipv6(v),
        Check::UsSsn => us_ssn(v),
        Check::EsDni => es_dni(v),
        Check::FrNir => fr_nir(v),
        Check::UkNino => uk_nino(v),
        Check::Elfproef => elfproef(v),
    }
}

/// Shannon entropy in bits per byte.
pub fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    if n == 0.0 {
        return 0.0;
    }
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Upper case, lower case and digits all present (random tokens have them; words do not).
fn mixed(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_digit())
        && s.bytes().any(|b| b.is_ascii_lowercase())
        && s.bytes().any(|b| b.is_ascii_uppercase())
}

/// A value written in place of a secret: a variable, a template, a mask, a well-known word,
/// a run of the alphabet or of digits. Every secret rule checks it.
pub(crate) fn placeholder(v: &str) -> bool {
    let l = v.to_ascii_lowercase();
    let words = [
        "changeme",
        "change_me",
        "change-me",
        "example",
        "placeholder",
        "dummy",
        "redacted",
        "your_",
        "your-",
        "yourpass",
        "xxxx",
        "****",
        "<",
        "${",
        "$(",
        "{{",
        "%(",
        "abcd",
        "1234",
        "0123",
    ];
    v.starts_with('$')
        || words.iter().any(|w| l.contains(w))
        || matches!(
            l.as_str(),
            "password" | "pass" | "secret" | "passwd" | "pwd" | "test" | "root" | "admin"
        )
}

fn hex(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `8-4-4-4-12` hexadecimal.
fn uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts.iter().all(|p| hex(p))
}

/// The value of a `NAME_SECRET=value` assignment: random-looking, not a hash (hexadecimal), a
/// UUID, a path, a reference or a placeholder.
fn assigned_secret(v: &str) -> bool {
    let v = v.trim_end_matches(['.', ',']);
    v.len() >= 12
        && v.bytes().any(|b| b.is_ascii_digit())
        && v.bytes().any(|b| b.is_ascii_alphabetic())
        && !hex(v)
        && !uuid(v)
        && !v.starts_with(['/', '.', '~'])
        && !placeholder(v)
        && entropy(v) >= 3.0
}

fn email(v: &str) -> bool {
    let Some((local, domain)) = v.rsplit_once('@') else {
        return false;
    };
    let domain = domain.to_ascii_lowercase();
    let local = local.to_ascii_lowercase();
    let tld = domain.rsplit('.').next().unwrap_or_default();
    let files = [
        "png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "js", "ts", "css", "py", "rs", "go",
        "md", "json", "txt",
    ];
    let docs = ["example.com", "example.org", "example.net", "localhost"];
    let docs_tld = [
        "example",
        "test",
        "invalid",
        "localhost",
        "local",
        "internal",
    ];
    let machine = ["git", "noreply", "no-reply", "donotreply", "mailer-daemon"];
    !files.contains(&tld)
        && !docs
            .iter()
            .any(|d| domain == *d || domain.ends_with(&format!(".{d}")))
        && !docs_tld.contains(&tld)
        && !machine.contains(&local.as_str())
        && !local.ends_with("noreply")
        && !local.starts_with('.')
}

/// Digits that continue a decimal number (`0.6511772622175621`) or a longer digit run.
fn in_number(text: &str, m: Range<usize>) -> bool {
    let b = text.as_bytes();
    let at = |i: Option<usize>| i.and_then(|i| b.get(i)).copied();
    let before = at(m.start.checked_sub(1));
    let after = at(Some(m.end));
    before.is_some_and(|c| c == b'.' || c == b',' || c.is_ascii_digit())
        || (matches!(after, Some(b'.' | b','))
            && at(Some(m.end + 1)).is_some_and(|c| c.is_ascii_digit()))
}

/// An `a:b@host` in a URL is credentials, not an address.
fn in_url(text: &str, start: usize) -> bool {
    matches!(
        start.checked_sub(1).and_then(|i| text.as_bytes().get(i)),
        Some(b':' | b'/')
    )
}

fn digits(v: &str) -> Vec<u32> {
    v.chars().filter_map(|c| c.to_digit(10)).collect()
}

/// 8 to 15 digits (E.164), not glued to more digits or a decimal point on either side.
fn phone(text: &str, m: Range<usize>) -> bool {
    let Some(v) = text.get(m.clone()) else {
        return false;
    };
    let n = digits(v).len();
    let b = text.as_bytes();
    let before = m.start.checked_sub(1).and_then(|i| b.get(i)).copied();
    let after = b.get(m.end).copied();
    let glued = |c: Option<u8>| c.is_some_and(|c| c.is_ascii_digit() || c == b'.');
    (8..=15).contains(&n)
        && !glued(before)
        && !(glued(after) && b.get(m.end + 1).is_some_and(u8::is_ascii_digit))
}

fn luhn(v: &str) -> bool {
    let d = digits(v);
    if !(13..=19).contains(&d.len()) {
        return false;
    }
    let sum: u32 = d
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &x)| {
            if i % 2 == 1 {
                let y = x * 2;
                if y > 9 { y - 9 } else { y }
            } else {
                x
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

fn iban(v: &str) -> bool {
    let s: Vec<u8> = v.bytes().filter(|b| *b != b' ').collect();
    if !(15..=34).contains(&s.len()) {
        return false;
    }
    let (head, tail) = s.split_at(4);
    let mut rem: u32 = 0;
    for &c in tail.iter().chain(head) {
        let n = match c {
            b'0'..=b'9' => u32::from(c - b'0'),
            b'A'..=b'Z' => u32::from(c - b'A') + 10,
            _ => return false,
        };
        rem = if n >= 10 {
            (rem * 100 + n) % 97
        } else {
            (rem * 10 + n) % 97
        };
    }
    rem == 1
}

/// Public unicast: not private, loopback, link-local, documentation, shared, multicast or a
/// version number (`v1.2.3.4`, `version 1.2.3.4`, more dotted parts).
fn public_ipv4(text: &str, m: Range<usize>) -> bool {
    let Some(Ok(ip)) = text.get(m.clone()).map(str::parse::<std::net::Ipv4Addr>) else {
        return false;
    };
    let b = text.as_bytes();
    let before = text.get(m.start.saturating_sub(9)..m.start).unwrap_or("");
    let before_l = before.to_ascii_lowercase();
    let dotted = |i: Option<usize>| i.and_then(|i| b.get(i)).is_some_and(|c| *c == b'.');
    let digit = |i: Option<usize>| i.and_then(|i| b.get(i)).is_some_and(u8::is_ascii_digit);
    if before_l.ends_with('v') || before_l.contains("version") || before_l.contains("ver ") {
        return false;
    }
    // `Python-3.4.2.4`: one-digit parts glued to a name are a version.
    let o = ip.octets();
    if o.iter().all(|x| *x < 10)
        && m.start
            .checked_sub(1)
            .and_then(|i| b.get(i))
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'-' || *c == b'_')
    {
        return false;
    }
    if (dotted(m.start.checked_sub(1)) && digit(m.start.checked_sub(2)))
        || (dotted(Some(m.end)) && digit(Some(m.end + 1)))
    {
        return false;
    }
    let shared = o[0] == 100 && (64..128).contains(&o[1]);
    let docs = matches!(
        (o[0], o[1], o[2]),
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113)
    ) || (o[0] == 198 && (o[1] == 18 || o[1] == 19));
    !(ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || shared
        || docs
        || o[0] == 0
        || o[0] >= 240)
}

fn public_ipv6(v: &str) -> bool {
    let Ok(ip) = v.parse::<std::net::Ipv6Addr>() else {
        return false;
    };
    let s = ip.segments();
    let ula = (s[0] & 0xfe00) == 0xfc00;
    let link = (s[0] & 0xffc0) == 0xfe80;
    let docs = s[0] == 0x2001 && s[1] == 0x0db8;
    // A global unicast address is 2000::/3; anything else in text is more likely a version or
    // a time than an address.
    (s[0] & 0xe000) == 0x2000 && !ula && !link && !docs && !ip.is_loopback()
}

fn us_ssn(v: &str) -> bool {
    let d: Vec<&str> = v.split('-').collect();
    let [a, g, s] = d.as_slice() else {
        return false;
    };
    *a != "000" && *a != "666" && !a.starts_with('9') && *g != "00" && *s != "0000"
}

fn es_dni(v: &str) -> bool {
    let num: String = v.chars().filter(char::is_ascii_digit).collect();
    let Some(letter) = v.chars().last() else {
        return false;
    };
    let Ok(n) = num.parse::<u64>() else {
        return false;
    };
    b"TRWAGMYFPDXBNJZSQVHLCKE"
        .get((n % 23) as usize)
        .is_some_and(|c| char::from(*c) == letter)
}

fn fr_nir(v: &str) -> bool {
    let s: String = v.chars().filter(|c| !c.is_whitespace()).collect();
    if s.len() != 15 {
        return false;
    }
    let (body, key) = s.split_at(13);
    // Corsica's departments 2A and 2B count as 19 and 18.
    let body = body.replace("2A", "19").replace("2B", "18");
    let (Ok(n), Ok(k)) = (body.parse::<u64>(), key.parse::<u64>()) else {
        return false;
    };
    97 - n % 97 == k
}

fn uk_nino(v: &str) -> bool {
    let s: String = v.chars().filter(|c| !c.is_whitespace()).collect();
    let prefix = s.get(..2).unwrap_or("");
    !matches!(prefix, "BG" | "GB" | "KN" | "NK" | "NT" | "TN" | "ZZ")
}

/// The Dutch BSN's eleven test.
fn elfproef(v: &str) -> bool {
    let d = digits(v);
    if d.len() != 9 {
        return false;
    }
    let sum: i64 = d
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let w = if i == 8 { -1 } else { 9 - i as i64 };
            w * i64::from(x)
        })
        .sum();
    sum % 11 == 0 && sum != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums() {
        assert!(luhn("4111 1111 1111 1111"));
        assert!(!luhn("4111 1111 1111 1112"));
        assert!(iban("GB82 WEST 1234 5698 7654 32"));
        assert!(!iban("GB82 WEST 1234 5698 7654 33"));
        assert!(es_dni("12345678Z"));
        assert!(elfproef("111222333"));
        assert!(fr_nir("184127645108946"));
    }

    #[test]
    fn hashes_and_uuids_are_not_assigned_secrets() {
        assert!(!assigned_secret("da39a3ee5e6b4b0d3255bfef95601890afd80709"));
        assert!(!assigned_secret("123e4567-e89b-12d3-a456-426614174000"));
        assert!(assigned_secret("kR7qLmZ2xV9pT4wN"));
        assert!(entropy("aaaa") < 0.1);
    }
}
