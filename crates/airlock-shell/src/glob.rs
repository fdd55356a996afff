//! Command words that are glob patterns (`/bin/r? -rf ~`, `[r]m`, `@(rm|ls)`): bash replaces
//! them with the matching file names before it runs anything, so the program is whichever file
//! matches. This module turns such a pattern into the known program names it could be.

use crate::rules::RuleSet;

/// Most program names a pattern is resolved to.
const MAX_CANDIDATES: usize = 12;

/// Programs the rule packs may not name as a keyword but an attacker would reach for.
const EXTRA_NAMES: &[&str] = &[
    "rm",
    "dd",
    "mv",
    "cp",
    "ln",
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "python",
    "python3",
    "perl",
    "ruby",
    "node",
    "php",
    "curl",
    "wget",
    "nc",
    "ncat",
    "socat",
    "shred",
    "wipefs",
    "mkfs",
    "chmod",
    "chown",
    "truncate",
    "find",
    "xargs",
    "sudo",
    "kill",
    "pkill",
    "killall",
    "reboot",
    "shutdown",
    "halt",
    "poweroff",
    "git",
    "tee",
    "sed",
    "awk",
    "scp",
    "rsync",
    "ssh",
    "eval",
    "env",
    "base64",
    "openssl",
    "crontab",
    "systemctl",
    "iptables",
    "useradd",
    "passwd",
];

/// The known program names a glob-pattern command word could name, or `None` when its last
/// path component holds no wildcard bash would expand (`[`, `[[`, `a[b` stay literal).
/// An empty list means the pattern matches no name airlock knows: it is still a pattern.
pub fn command_candidates(head: &str, rules: &RuleSet) -> Option<Vec<String>> {
    let base = head.rsplit('/').next().unwrap_or(head);
    let re = pattern_regex(base)?;
    // a pattern airlock cannot translate is still a pattern: asked, resolved to nothing
    let Ok(re) = regex::Regex::new(&re) else {
        return Some(Vec::new());
    };
    let mut names: Vec<String> = Vec::new();
    let keywords = rules
        .rules()
        .iter()
        .flat_map(|r| r.keywords.iter())
        .filter(|k| is_program_like(k));
    for k in EXTRA_NAMES.iter().copied().chain(keywords) {
        if names.len() >= MAX_CANDIDATES {
            break;
        }
        if re.is_match(k) && !names.iter().any(|n| n == k) {
            names.push(k.to_string());
        }
    }
    Some(names)
}

fn is_program_like(k: &str) -> bool {
    !k.is_empty()
        && !k.starts_with(['-', '.'])
        && k.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._+-".contains(&b))
}

/// The anchored regex a glob pattern (with bash's extglob forms) matches, or `None` when the
/// pattern has no wildcard.
pub fn pattern_regex(pat: &str) -> Option<String> {
    // the common case, a plain word, without building anything
    if !pat.contains(['*', '?', '[', '(']) {
        return None;
    }
    let chars: Vec<char> = pat.chars().collect();
    let mut out = String::from("^(?:");
    let mut wild = false;
    let mut i = 0;
    // extglob groups open with `?(`, `*(`, `+(`, `@(`, `!(` and close with `)`
    let mut groups: Vec<char> = Vec::new();
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '?' | '*' | '+' | '@' | '!' if next == Some('(') => {
                wild = true;
                groups.push(c);
                out.push_str(if c == '!' { "(?:.*|" } else { "(?:" });
                i += 2;
                continue;
            }
            ')' if !groups.is_empty() => {
                let g = groups.pop().unwrap_or('@');
                out.push(')');
                match g {
                    '?' => out.push('?'),
                    '*' => out.push('*'),
                    '+' => out.push('+'),
                    _ => {}
                }
            }
            '|' if !groups.is_empty() => out.push('|'),
            '?' => {
                wild = true;
                out.push('.');
            }
            '*' => {
                wild = true;
                out.push_str(".*");
            }
            '[' => match bracket(&chars[i..]) {
                Some((class, used)) => {
                    wild = true;
                    out.push_str(&class);
                    i += used;
                    continue;
                }
                None => out.push_str("\\["),
            },
            '\\' if next.is_some() => {
                out.push_str(&regex::escape(&next.unwrap_or('\\').to_string()));
                i += 2;
                continue;
            }
            c => out.push_str(&regex::escape(&c.to_string())),
        }
        i += 1;
    }
    if !wild || !groups.is_empty() {
        return None;
    }
    out.push_str(")$");
    Some(out)
}

/// A bracket expression at the start of `chars` as a regex class, and how many characters it
/// used; `None` when it does not close (bash then matches `[` literally). A reversed range
/// (`[z-a]`) matches nothing, as in bash.
fn bracket(chars: &[char]) -> Option<(String, usize)> {
    let esc = |c: char| {
        if c.is_ascii_alphanumeric() || !c.is_ascii() {
            c.to_string()
        } else {
            format!("\\{c}")
        }
    };
    let mut i = 1;
    let mut negate = false;
    if matches!(chars.get(i), Some('!' | '^')) {
        negate = true;
        i += 1;
    }
    let mut items = String::new();
    // a `]` first in the set is a member
    if chars.get(i) == Some(&']') {
        items.push_str("\\]");
        i += 1;
    }
    while i < chars.len() {
        let c = chars[i];
        if c == ']' {
            let class = match (negate, items.is_empty()) {
                // nothing can match: a class no character is in
                (false, true) => "[^\\x00-\\x{10FFFF}]".to_string(),
                (true, true) => "(?s:.)".to_string(),
                (false, false) => format!("[{items}]"),
                (true, false) => format!("[^{items}]"),
            };
            return Some((class, i + 1));
        }
        if c == '[' && chars.get(i + 1) == Some(&':') {
            // a POSIX class `[:alpha:]`
            let rest: String = chars[i + 2..].iter().collect();
            if let Some((name, _)) = rest.split_once(":]")
                && matches!(
                    name,
                    "alpha"
                        | "digit"
                        | "alnum"
                        | "upper"
                        | "lower"
                        | "space"
                        | "punct"
                        | "xdigit"
                        | "word"
                        | "blank"
                        | "cntrl"
                        | "graph"
                        | "print"
                )
            {
                items.push_str(&format!("[:{name}:]"));
                i += name.chars().count() + 4;
                continue;
            }
        }
        if let (Some('-'), Some(&hi)) = (chars.get(i + 1), chars.get(i + 2))
            && hi != ']'
        {
            if c <= hi {
                items.push_str(&format!("{}-{}", esc(c), esc(hi)));
            }
            i += 3;
            continue;
        }
        items.push_str(&esc(c));
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(head: &str) -> Option<Vec<String>> {
        let rules = RuleSet::builtin().unwrap();
        command_candidates(head, &rules)
    }

    #[test]
    fn patterns_resolve_to_the_programs_they_name() {
        for (head, want) in [
            ("/bin/r?", "rm"),
            ("[r]m", "rm"),
            ("/???/r[l-n]", "rm"),
            ("r[!a]", "rm"),
            ("@(rm|ls)", "rm"),
            ("+(r)m", "rm"),
            ("shre*", "shred"),
            ("mkf?", "mkfs"),
            ("/usr/bin/cu?l", "curl"),
            ("r\\m*", "rm"),
        ] {
            let n = names(head).unwrap_or_default();
            assert!(n.iter().any(|x| x == want), "{head}: {n:?}");
        }
    }

    #[test]
    fn words_without_wildcards_are_not_patterns() {
        for head in [
            "[",
            "[[",
            "a[b",
            "ls",
            "./run.sh",
            "/usr/bin/rm",
            "g++",
            "c++",
            "x\\?",
        ] {
            assert_eq!(names(head), None, "{head}");
        }
    }

    proptest::proptest! {
        /// Any word: the translation never panics, and what it gives always compiles.
        #[test]
        fn every_translation_compiles(pat in "[a-z?*\\[\\]!@+()|^:\\\\.-]{0,16}") {
            if let Some(re) = pattern_regex(&pat) {
                proptest::prop_assert!(regex::Regex::new(&re).is_ok(), "{pat}: {re}");
            }
        }
    }

    #[test]
    fn a_pattern_naming_nothing_known_is_still_a_pattern() {
        assert_eq!(names("zzq*x"), Some(vec![]));
    }
}
