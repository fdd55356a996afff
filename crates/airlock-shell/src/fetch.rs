//! Fetch targets: is fetching this URL something an agent should not do alone?
//!
//! Used by the policy for `network_fetch` actions and web-fetch tool calls (the hook's
//! `WebFetch`/`web_fetch`, REST tool calls). Two questions, answered by string work alone (no
//! DNS, no regex, so the hook can call it without compiling rules):
//!
//! - **Where it goes.** Loopback (the daemon's own API on 127.0.0.1:7373 among it), link-local
//!   and the cloud metadata addresses (`169.254.169.254`, `fd00:ec2::254`,
//!   `metadata.google.internal`, `100.100.100.200`), private and shared ranges, and IP
//!   literals spelt the ways URL parsers and `inet_aton` accept but people do not read:
//!   `2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1`, `[::ffff:127.0.0.1]`, `localhost.`,
//!   percent-escapes in the host. An IP written in dotted decimal and a name are read as they
//!   are; a name that embeds an internal address (`127.0.0.1.nip.io`) counts as that address.
//! - **What it carries.** Query parameters whose names say secret (`api_key`, `token`,
//!   `password`, `signature`, …) with a value, values that look like credentials (`sk-…`,
//!   `ghp_…`, `AKIA…`, a JWT, …) or are long and random, and a user and password in the URL.
//!
//! Each is an ask: a person decides whether the agent may reach that place or send that value.

use std::net::{Ipv4Addr, Ipv6Addr};

use airlock_core::{Decision, Finding, ReasonCode, Severity, Tier};

/// The port `airlock serve` listens on by default.
const DAEMON_PORT: u16 = 7373;

/// Where a host is, when it is not simply a public name or address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Loopback,
    /// Link-local addresses and the cloud metadata services.
    Metadata,
    LinkLocal,
    /// Private, shared (CGNAT), unspecified, multicast and broadcast addresses.
    Private,
    /// A public address in a spelling other than dotted decimal.
    OddSpelling,
}

impl Place {
    fn rule_id(self) -> &'static str {
        match self {
            Place::Loopback => "fetch.loopback",
            Place::Metadata => "fetch.metadata",
            Place::LinkLocal => "fetch.link_local",
            Place::Private => "fetch.private",
            Place::OddSpelling => "fetch.ip_spelling",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Place::Loopback => {
                "this machine (loopback), where local services such as airlock's own API listen"
            }
            Place::Metadata => {
                "a cloud metadata service, which hands out the machine's credentials"
            }
            Place::LinkLocal => "a link-local address (the local network segment)",
            Place::Private => "a private or internal network address",
            Place::OddSpelling => {
                "an IP address written in an unusual form (decimal, hex, octal or shortened)"
            }
        }
    }
}

/// The host of `url` (lowercased, percent-escapes decoded, one trailing dot dropped, IPv6
/// brackets removed) and the port if one is given; `None` when there is no `scheme://host`.
pub fn host_of(url: &str) -> Option<(String, Option<u16>)> {
    let (_, rest) = url.trim().split_once("://")?;
    let authority = rest.split(['/', '?', '#', '\\']).next()?;
    let hostport = authority.rsplit('@').next()?;
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (h, after) = v6.split_once(']')?;
        (h, after.strip_prefix(':'))
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        }
    };
    let host = percent_decode(host).to_ascii_lowercase();
    let host = host.strip_suffix('.').unwrap_or(&host).to_string();
    if host.is_empty() {
        return None;
    }
    let port = port.and_then(|p| p.parse().ok());
    Some((host, port))
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(v) = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// An IPv4 address as `inet_aton` and URL parsers read it: one to four parts, each decimal,
/// hex (`0x`) or octal (leading `0`), the last filling the remaining bytes. `odd` is true for
/// anything but four decimal parts.
fn parse_v4(host: &str) -> Option<(Ipv4Addr, bool)> {
    let parts: Vec<&str> = host.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut nums = Vec::with_capacity(parts.len());
    let mut odd = parts.len() != 4;
    for p in &parts {
        let (digits, radix) = if let Some(h) = p.strip_prefix("0x").or(p.strip_prefix("0X")) {
            (h, 16)
        } else if p.len() > 1 && p.starts_with('0') {
            (&p[1..], 8)
        } else {
            (*p, 10)
        };
        if radix != 10 {
            odd = true;
        }
        if digits.is_empty() {
            if radix == 16 {
                nums.push(0u64);
                continue;
            }
            return None;
        }
        if !digits.chars().all(|c| c.is_digit(radix)) {
            return None;
        }
        nums.push(u64::from_str_radix(digits, radix).ok()?);
    }
    let (last, head) = nums.split_last()?;
    let mut value: u64 = 0;
    for n in head {
        if *n > 255 {
            return None;
        }
        value = (value << 8) | n;
    }
    let rest_bits = 8 * (4 - head.len() as u32);
    if *last >= (1u64 << rest_bits) {
        return None;
    }
    value = (value << rest_bits) | last;
    Some((Ipv4Addr::from(u32::try_from(value).ok()?), odd))
}

fn place_v4(ip: Ipv4Addr) -> Option<Place> {
    let o = ip.octets();
    match o {
        [127, ..] => Some(Place::Loopback),
        // 0.0.0.0 reaches this machine on most systems
        [0, ..] => Some(Place::Loopback),
        [169, 254, 169, 254] | [169, 254, 170, 2] | [100, 100, 100, 200] => Some(Place::Metadata),
        [169, 254, ..] => Some(Place::LinkLocal),
        [10, ..] | [192, 168, ..] => Some(Place::Private),
        [172, b, ..] if (16..32).contains(&b) => Some(Place::Private),
        [100, b, ..] if (64..128).contains(&b) => Some(Place::Private),
        [a, ..] if a >= 224 => Some(Place::Private),
        _ => None,
    }
}

fn place_v6(ip: Ipv6Addr) -> Option<Place> {
    if ip.is_loopback() || ip.is_unspecified() {
        return Some(Place::Loopback);
    }
    let s = ip.segments();
    // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d)
    let embedded = match s {
        [0, 0, 0, 0, 0, 0xffff, ..] | [0, 0, 0, 0, 0, 0, ..] | [0x64, 0xff9b, 0, 0, 0, 0, ..] => {
            Some(Ipv4Addr::new(
                (s[6] >> 8) as u8,
                s[6] as u8,
                (s[7] >> 8) as u8,
                s[7] as u8,
            ))
        }
        _ => None,
    };
    if let Some(v4) = embedded {
        return Some(place_v4(v4).unwrap_or(Place::OddSpelling));
    }
    if s == [0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254] {
        return Some(Place::Metadata);
    }
    match s[0] {
        x if x & 0xffc0 == 0xfe80 => Some(Place::LinkLocal),
        x if x & 0xfe00 == 0xfc00 => Some(Place::Private),
        x if x & 0xff00 == 0xff00 => Some(Place::Private),
        _ => None,
    }
}

const METADATA_NAMES: &[&str] = &[
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.azure.internal",
];

/// Where `host` (as [`host_of`] gives it) is, when it is not a public name or address.
pub fn place(host: &str) -> Option<Place> {
    if host == "localhost"
        || host.ends_with(".localhost")
        || host == "ip6-localhost"
        || host == "ip6-loopback"
    {
        return Some(Place::Loopback);
    }
    if METADATA_NAMES.contains(&host) {
        return Some(Place::Metadata);
    }
    if let Ok(v6) = host.parse::<Ipv6Addr>() {
        return place_v6(v6);
    }
    if let Some((v4, odd)) = parse_v4(host) {
        return match place_v4(v4) {
            Some(p) => Some(p),
            None if odd => Some(Place::OddSpelling),
            None => None,
        };
    }
    // wildcard DNS names that resolve to the address they embed (`127.0.0.1.nip.io`,
    // `10-0-0-1.sslip.io`)
    let labels: Vec<&str> = host.split('.').collect();
    for w in labels.windows(4) {
        if let Some((v4, false)) = parse_v4(&w.join("."))
            && let Some(p) = place_v4(v4)
        {
            return Some(p);
        }
    }
    for l in &labels {
        let dotted = l.replace('-', ".");
        if dotted.split('.').count() == 4
            && let Some((v4, false)) = parse_v4(&dotted)
            && let Some(p) = place_v4(v4)
        {
            return Some(p);
        }
    }
    None
}

/// Query parameter names that hold secrets (compared without case, `-` as `_`).
const SECRET_NAMES: &[&str] = &[
    "key",
    "apikey",
    "api_key",
    "access_key",
    "secret",
    "client_secret",
    "token",
    "access_token",
    "refresh_token",
    "id_token",
    "auth",
    "auth_token",
    "authorization",
    "password",
    "passwd",
    "pwd",
    "pass",
    "sig",
    "signature",
    "x_amz_signature",
    "x_amz_credential",
    "x_amz_security_token",
    "credential",
    "credentials",
    "private_key",
    "session_token",
    "sessionid",
    "jwt",
    "bearer",
];

/// Prefixes of well-known credential formats.
const SECRET_PREFIXES: &[&str] = &[
    "sk-",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "pk_live_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxs-",
    "akia",
    "asia",
    "aiza",
    "ya29.",
    "eyj",
    "npm_",
    "pypi-",
    "hf_",
    "shpat_",
    "sg.",
];

fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = f64::from(*c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Why a query value looks like a secret, if it does.
fn secret_value(value: &str) -> Option<&'static str> {
    let v = percent_decode(value);
    let lower = v.to_ascii_lowercase();
    let token_like = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_+/=.~".contains(&b))
    };
    if v.len() >= 16 && token_like(&v) && SECRET_PREFIXES.iter().any(|p| lower.starts_with(p)) {
        return Some("has the form of a known credential");
    }
    let letters = v.bytes().any(|b| b.is_ascii_alphabetic());
    let digits = v.bytes().any(|b| b.is_ascii_digit());
    if v.len() >= 32 && token_like(&v) && letters && digits && entropy(&v) >= 4.2 {
        return Some("is long and random, as keys and tokens are");
    }
    None
}

/// What in `url` looks like a secret sent along: a description, or `None`.
pub fn secret_in(url: &str) -> Option<String> {
    let (_, rest) = url.trim().split_once("://")?;
    let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or("");
    if let Some((userinfo, _)) = authority.rsplit_once('@')
        && userinfo.contains(':')
    {
        return Some("the URL carries a user name and password".into());
    }
    let query = rest.split_once('?')?.1;
    let query = query.split('#').next().unwrap_or("");
    for pair in query.split(['&', ';']) {
        let (name, value) = pair.split_once('=').unwrap_or(("", pair));
        if value.is_empty() {
            continue;
        }
        let norm = percent_decode(name).to_ascii_lowercase().replace('-', "_");
        if SECRET_NAMES.contains(&norm.as_str()) && percent_decode(value).trim().len() >= 4 {
            return Some(format!(
                "the query parameter `{}` names a secret",
                clip(name)
            ));
        }
        if let Some(why) = secret_value(value) {
            let shown = if name.is_empty() {
                "a query value"
            } else {
                name
            };
            return Some(format!("the value of `{}` {why}", clip(shown)));
        }
    }
    None
}

fn clip(s: &str) -> String {
    s.chars().take(40).collect()
}

/// The findings for fetching `url`: where it goes and what it carries (empty when neither
/// needs a person).
pub fn fetch_findings(url: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let shown = clip_url(url);
    if let Some((host, port)) = host_of(url)
        && let Some(p) = place(&host)
    {
        let own = p == Place::Loopback && port == Some(DAEMON_PORT);
        let mut message = format!("`{shown}` goes to {}", p.what());
        if own {
            message.push_str(" (this is airlock's own daemon port)");
        }
        message.push_str("; a person must confirm it.");
        let tier = if p == Place::Metadata || own {
            Tier::High
        } else {
            Tier::Medium
        };
        out.push(
            Finding::new(
                p.rule_id(),
                ReasonCode::NetworkInternal,
                Decision::Ask,
                tier,
                Severity::High,
                message,
            )
            .with_remediation(
                "Fetch a public address, or allow this host for the user with a `network` allow rule in ~/.config/airlock/policy.toml.",
            )
            .with_evidence(host),
        );
    }
    if let Some(why) = secret_in(url) {
        out.push(
            Finding::new(
                "fetch.secret_in_query",
                ReasonCode::SecretInUrl,
                Decision::Ask,
                Tier::High,
                Severity::High,
                format!("{why}, so fetching `{shown}` may send it to another party; a person must confirm it."),
            )
            .with_remediation("Send credentials in a header the user configured, never in a URL the agent builds."),
        );
    }
    out
}

fn clip_url(url: &str) -> String {
    let mut s: String = url.chars().filter(|c| !c.is_control()).take(120).collect();
    if url.chars().count() > 120 {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(url: &str) -> Option<Place> {
        host_of(url).and_then(|(h, _)| place(&h))
    }

    #[test]
    fn internal_places_must_match() {
        let cases: &[(&str, Place)] = &[
            ("http://127.0.0.1:7373/v1/approvals", Place::Loopback),
            ("http://localhost/", Place::Loopback),
            ("http://LOCALHOST./x", Place::Loopback),
            ("http://app.localhost:3000", Place::Loopback),
            ("http://2130706433/", Place::Loopback),
            ("http://0x7f000001/", Place::Loopback),
            ("http://0177.0.0.1/", Place::Loopback),
            ("http://127.1/", Place::Loopback),
            ("http://0x7f.1/", Place::Loopback),
            ("http://0/", Place::Loopback),
            ("http://0.0.0.0:8080/", Place::Loopback),
            ("http://[::1]:7373/", Place::Loopback),
            ("http://[::ffff:127.0.0.1]/", Place::Loopback),
            ("http://[::ffff:7f00:1]/", Place::Loopback),
            ("http://127.0.0.%31/", Place::Loopback),
            ("http://user@127.0.0.1/", Place::Loopback),
            ("http://127.0.0.1.nip.io/", Place::Loopback),
            (
                "http://169.254.169.254/latest/meta-data/iam/",
                Place::Metadata,
            ),
            ("http://[fd00:ec2::254]/latest/", Place::Metadata),
            (
                "http://metadata.google.internal/computeMetadata/v1/",
                Place::Metadata,
            ),
            ("http://100.100.100.200/latest/meta-data/", Place::Metadata),
            ("http://2852039166/", Place::Metadata),
            ("http://[::ffff:169.254.169.254]/", Place::Metadata),
            ("http://169.254.10.1/", Place::LinkLocal),
            ("http://[fe80::1]/", Place::LinkLocal),
            ("http://10.0.0.5/", Place::Private),
            ("http://172.16.3.4/", Place::Private),
            ("http://192.168.1.1/admin", Place::Private),
            ("http://100.64.0.1/", Place::Private),
            ("http://[fd12:3456::1]/", Place::Private),
            ("http://10-0-0-1.sslip.io/", Place::Private),
            ("http://0x5db8d822/", Place::OddSpelling),
            ("http://1572395042/", Place::OddSpelling),
        ];
        for (url, want) in cases {
            assert_eq!(places(url), Some(*want), "{url}");
        }
    }

    #[test]
    fn public_places_must_not_match() {
        for url in [
            "https://docs.rs/serde",
            "https://93.184.216.34/",
            "https://[2606:4700::1111]/",
            "https://172.32.0.1/",
            "https://192.169.0.1/",
            "https://localhost.example.com/",
            "https://example.com:7373/",
            "https://v1.2.3.example.com/",
        ] {
            assert_eq!(places(url), None, "{url}");
        }
        // stricter on purpose: a label spelling an address, a three-part address
        assert_eq!(
            places("https://127-0-0-1.example.com/"),
            Some(Place::Loopback)
        );
        assert_eq!(places("https://1.2.3/"), Some(Place::OddSpelling));
        assert_eq!(host_of("not a url"), None);
        assert_eq!(host_of("http:///x"), None);
    }

    #[test]
    fn secrets_in_queries_must_match() {
        for url in [
            "https://api.example.com/v1?api_key=abcd1234efgh",
            "https://example.com/?token=s3cr3t-value",
            "https://example.com/?Access-Token=abcdef",
            "https://example.com/?password=hunter22",
            "https://x.example/?q=1&key=AIzaSyA1234567890abcdefghijklmnop",
            "https://x.example/?note=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "https://x.example/?d=sk-proj-abcdefghijklmnop1234",
            "https://x.example/?v=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc",
            "https://x.example/collect?d=q8Z3vN0pX7rT2mK9wB4yL6cH1jF5sD8gA0eU",
            "https://user:pass@example.com/",
            "https://s3.amazonaws.com/b/k?X-Amz-Signature=abcdef0123",
        ] {
            assert!(secret_in(url).is_some(), "{url}");
        }
    }

    #[test]
    fn ordinary_queries_must_not_match() {
        for url in [
            "https://www.google.com/search?q=how+to+rotate+an+api+key",
            "https://docs.rs/serde?search=Deserialize",
            "https://example.com/?page=2&sort=desc",
            "https://example.com/?token=",
            "https://example.com/?v=1.2.3",
            "https://example.com/?id=123456789012",
            "https://example.com/?utm_source=newsletter&utm_medium=email",
            "https://github.com/o/r/commit/3f2a9c1?diff=split",
            "https://example.com/?sha=3f2a9c1e5b7d9f0a2c4e6b8d0f1a3c5e7b9d1f3a",
            "https://example.com/?redirect=https://docs.rs/serde/latest/serde/index.html",
            "https://example.com/?keyword=rust",
            "https://user@example.com/",
            "https://example.com/path#token=abc",
        ] {
            assert_eq!(secret_in(url), None, "{url}");
        }
    }

    #[test]
    fn findings_ask_and_name_the_daemon() {
        let f = fetch_findings("http://127.0.0.1:7373/v1/approvals");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].decision, Decision::Ask);
        assert_eq!(f[0].code, ReasonCode::NetworkInternal);
        assert!(
            f[0].message.contains("airlock's own daemon"),
            "{}",
            f[0].message
        );
        let f = fetch_findings("http://169.254.169.254/?token=abcdefgh");
        assert_eq!(f.len(), 2);
        assert!(fetch_findings("https://docs.rs/serde").is_empty());
    }
}
