//! Static expansion of one shell word: quote removal, escapes, ANSI-C strings, tildes, constant
//! variables and literal brace lists. Whatever only the running shell could know (unknown
//! variables, command substitutions, arithmetic) is kept as written and flagged, and the bodies
//! of command substitutions are handed back so the walker can analyse them as scripts.

use brush_parser::ParserOptions;
use brush_parser::word::{Parameter, ParameterExpr, WordPiece, WordPieceWithSource};
use std::collections::HashMap;

/// Variables whose value is known statically (from `a=rm` earlier in the same line).
pub type Env = HashMap<String, String>;

/// Stands where an unquoted `$IFS` splits a word (`rm${IFS}-rf${IFS}/` is `rm -rf /`); the
/// walker splits on it. A private-use character, so it never collides with real input that
/// matters and is not a control character.
pub const IFS_SPLIT: char = '\u{F8FF}';

/// Most words a single brace expression may expand to before we stop expanding.
const MAX_BRACE_WORDS: usize = 64;

/// The result of expanding one word.
#[derive(Debug, Default, Clone)]
pub struct Expanded {
    /// The value where static; dynamic parts appear as their source text (`$HOME`, `$(cmd)`).
    pub text: String,
    /// Some part is only known at run time.
    pub dynamic: bool,
    /// A parameter expansion that may be empty comes first and is followed by `/`
    /// (`"$DIR/"*`): if the variable is unset the word names the root or a system directory.
    pub root_risk: bool,
    /// Start of the text after that leading expansion (what the word becomes if it is empty).
    pub after_leading_param: Option<usize>,
    /// Bodies of `$(…)` and backticks inside the word.
    pub substitutions: Vec<String>,
    /// Any part was quoted (quoted words are not brace-expanded or globbed).
    pub quoted: bool,
    /// The word could not be parsed as a word.
    pub malformed: bool,
}

/// Expands `raw` with the constants in `env`.
pub fn expand(raw: &str, env: &Env, opts: &ParserOptions) -> Expanded {
    // Fast path: without `$`, a backquote, a quote or a backslash, brush's word parser yields
    // the word unchanged (plain text, tildes as written; globs and braces are left to the
    // caller), so skip it: it copies every word into a global cache.
    if !raw
        .bytes()
        .any(|b| matches!(b, b'$' | b'`' | b'\'' | b'"' | b'\\'))
    {
        return Expanded {
            text: raw.to_string(),
            ..Expanded::default()
        };
    }
    expand_parsed(raw, env, opts)
}

/// [`expand`] without its fast path: every word through brush's word parser.
fn expand_parsed(raw: &str, env: &Env, opts: &ParserOptions) -> Expanded {
    let mut out = Expanded::default();
    match brush_parser::word::parse(raw, opts) {
        Ok(pieces) => {
            let mut first = true;
            pieces_into(raw, &pieces, env, &mut out, false, &mut first);
            if let Some(at) = out.after_leading_param {
                let rest = out.text.get(at..).unwrap_or("");
                out.root_risk = rest.starts_with('/') && names_root_if_empty(rest);
            }
        }
        Err(_) => {
            out.malformed = true;
            out.dynamic = true;
            out.text.push_str(raw);
        }
    }
    out
}

fn pieces_into(
    raw: &str,
    pieces: &[WordPieceWithSource],
    env: &Env,
    out: &mut Expanded,
    in_quotes: bool,
    first: &mut bool,
) {
    for p in pieces {
        let src = raw.get(p.start_index..p.end_index).unwrap_or("");
        let was_first = *first;
        *first = false;
        match &p.piece {
            WordPiece::Text(s) => out.text.push_str(s),
            WordPiece::SingleQuotedText(s) => {
                out.quoted = true;
                out.text.push_str(s);
            }
            WordPiece::AnsiCQuotedText(s) => {
                out.quoted = true;
                out.text.push_str(&ansi_c(s));
            }
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => {
                out.quoted = true;
                *first = was_first;
                pieces_into(raw, inner, env, out, true, first);
            }
            WordPiece::TildeExpansion(_) => out.text.push_str(src),
            WordPiece::EscapeSequence(s) => {
                let body = s.strip_prefix('\\').unwrap_or(s);
                if body == "\n" {
                    // line continuation
                } else if in_quotes && !matches!(body, "$" | "`" | "\"" | "\\") {
                    // inside double quotes only these escapes are removed
                    out.text.push_str(s);
                } else {
                    out.text.push_str(body);
                }
            }
            WordPiece::ParameterExpansion(expr) => {
                let known = match expr {
                    ParameterExpr::Parameter {
                        parameter: Parameter::Named(n),
                        indirect: false,
                    } => env.get(n),
                    _ => None,
                };
                let is_ifs = src.starts_with("$IFS") || src.starts_with("${IFS");
                match known {
                    Some(v) => out.text.push_str(v),
                    None if is_ifs && !in_quotes => out.text.push(IFS_SPLIT),
                    None => {
                        out.dynamic = true;
                        let guarded =
                            matches!(expr, ParameterExpr::IndicateErrorIfNullOrUnset { .. });
                        out.text.push_str(src);
                        if was_first && !guarded {
                            out.after_leading_param = Some(out.text.len());
                        }
                    }
                }
            }
            WordPiece::CommandSubstitution(body)
            | WordPiece::BackquotedCommandSubstitution(body) => {
                out.substitutions.push(body.clone());
                match constant_echo(body) {
                    // `$(echo rm) -rf /` runs `rm`: the output is known, and unquoted it is
                    // split into words like any expansion
                    Some(words) if in_quotes => out.text.push_str(&words.join(" ")),
                    Some(words) => out.text.push_str(&words.join(&IFS_SPLIT.to_string())),
                    None => {
                        out.dynamic = true;
                        out.text.push_str(src);
                    }
                }
            }
            WordPiece::ArithmeticExpression(_) => {
                out.dynamic = true;
                out.text.push_str(src);
            }
        }
    }
}

/// The words a command substitution prints when its body is a plain `echo` of literal words
/// (`$(echo rm)`, `` `echo hello` ``): known without running anything. `None` for anything
/// else (options, quotes, expansions, globs, several commands).
fn constant_echo(body: &str) -> Option<Vec<&str>> {
    if body.contains(['\n', '\r']) {
        return None;
    }
    let mut words = body.split_ascii_whitespace();
    if words.next()? != "echo" {
        return None;
    }
    let words: Vec<&str> = words.collect();
    let literal = |w: &&str| {
        w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./:=+,@%-".contains(&b))
    };
    // echo reads options only at the start
    let first_is_option = words.first().is_some_and(|w| w.starts_with('-'));
    (!words.is_empty() && !first_is_option && words.iter().all(literal)).then_some(words)
}

/// Whether a path (what a word becomes when its leading variable is empty) is the root, all of
/// it, or a top-level system directory.
fn names_root_if_empty(rest: &str) -> bool {
    let trimmed = rest.trim_end_matches(['*', '/', '.']);
    if trimmed.is_empty() {
        return true;
    }
    let Some(dir) = trimmed.strip_prefix('/') else {
        return false;
    };
    matches!(
        dir,
        "bin"
            | "boot"
            | "dev"
            | "etc"
            | "home"
            | "lib"
            | "lib32"
            | "lib64"
            | "opt"
            | "root"
            | "sbin"
            | "srv"
            | "sys"
            | "usr"
            | "var"
            | "proc"
            | "Users"
            | "System"
            | "Library"
            | "Applications"
            | "private"
    )
}

/// Decodes the escapes of a `$'…'` string.
pub fn ansi_c(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let simple = match e {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'v' => Some('\x0b'),
            '\\' => Some('\\'),
            '\'' => Some('\''),
            '"' => Some('"'),
            '?' => Some('?'),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            continue;
        }
        // bash cuts a $'…' string at a NUL byte
        let (radix, max) = match e {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => (8, 3),
            'c' => {
                match chars.next().map(|n| (n as u32 & 0x1f) as u8) {
                    Some(0) | None => return out,
                    Some(b) => out.push(char::from(b)),
                }
                continue;
            }
            other => {
                out.push('\\');
                out.push(other);
                continue;
            }
        };
        let mut digits = String::new();
        if radix == 8 {
            digits.push(e);
        }
        while digits.len() < max {
            match chars.peek() {
                Some(d) if d.is_digit(radix) => {
                    digits.push(*d);
                    chars.next();
                }
                _ => break,
            }
        }
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some('\0') => return out,
            Some(c) => out.push(c),
            None => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    out
}

/// Expands literal brace lists and ranges in an unquoted word (`{rm,-rf,/}` → three words,
/// `/{etc,usr}` → two). Stops at [`MAX_BRACE_WORDS`]; returns `None` when nothing expands.
pub fn brace_expand(word: &str) -> Option<Vec<String>> {
    if !word.contains('{') || !word.contains('}') {
        return None;
    }
    let out = brace_rec(word, 0)?;
    if out.len() <= 1 && out.first().is_some_and(|w| w == word) {
        return None;
    }
    Some(out)
}

fn brace_rec(word: &str, depth: usize) -> Option<Vec<String>> {
    if depth > 4 {
        return Some(vec![word.to_string()]);
    }
    let bytes = word.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'{' && (i == 0 || bytes[i - 1] != b'$') {
            // find the matching close brace
            let mut level = 0usize;
            let mut j = i;
            let mut commas = Vec::new();
            while j < bytes.len() {
                match bytes[j] {
                    b'{' => level += 1,
                    b'}' => {
                        level -= 1;
                        if level == 0 {
                            break;
                        }
                    }
                    b',' if level == 1 => commas.push(j),
                    _ => {}
                }
                j += 1;
            }
            if j >= bytes.len() {
                return Some(vec![word.to_string()]);
            }
            let prefix = &word[..i];
            let inner = &word[i + 1..j];
            let suffix = &word[j + 1..];
            let alts: Vec<String> = if !commas.is_empty() {
                let mut parts = Vec::new();
                let mut start = i + 1;
                for c in commas.iter().copied().chain(std::iter::once(j)) {
                    parts.push(word[start..c].to_string());
                    start = c + 1;
                }
                parts
            } else if let Some(r) = range(inner) {
                r
            } else {
                // not a brace expression: keep `{x}` literal and continue after it
                let rest = brace_rec(suffix, depth + 1)?;
                return Some(
                    rest.into_iter()
                        .map(|r| format!("{prefix}{{{inner}}}{r}"))
                        .collect(),
                );
            };
            let tails = brace_rec(suffix, depth + 1)?;
            let mut out = Vec::new();
            for a in alts {
                for a in brace_rec(&a, depth + 1)? {
                    for t in &tails {
                        if out.len() >= MAX_BRACE_WORDS {
                            return Some(out);
                        }
                        out.push(format!("{prefix}{a}{t}"));
                    }
                }
            }
            return Some(out);
        }
        i += 1;
    }
    Some(vec![word.to_string()])
}

fn range(inner: &str) -> Option<Vec<String>> {
    let (a, b) = inner.split_once("..")?;
    let b = b.split("..").next()?;
    if let (Ok(x), Ok(y)) = (a.parse::<i64>(), b.parse::<i64>()) {
        let (lo, hi) = (x.min(y), x.max(y));
        return Some(
            (lo..=hi)
                .take(MAX_BRACE_WORDS)
                .map(|n| n.to_string())
                .collect(),
        );
    }
    let (mut ca, mut cb) = (a.chars(), b.chars());
    match (ca.next(), ca.next(), cb.next(), cb.next()) {
        (Some(x), None, Some(y), None) if x.is_ascii_alphabetic() && y.is_ascii_alphabetic() => {
            let (lo, hi) = (x.min(y), x.max(y));
            Some((lo..=hi).take(MAX_BRACE_WORDS).map(String::from).collect())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(raw: &str) -> Expanded {
        expand(raw, &Env::new(), &ParserOptions::default())
    }

    #[test]
    fn a_constant_echo_substitution_is_its_output() {
        let e = ex("$(echo hello)");
        assert_eq!(e.text, "hello");
        assert!(!e.dynamic);
        assert_eq!(e.substitutions, ["echo hello"]);
        assert_eq!(ex("`echo rm -f`").text, format!("rm{IFS_SPLIT}-f"));
        assert_eq!(ex("\"$(echo a  b)\"").text, "a b");
        for raw in [
            "$(echo -e x)",
            "$(echo $HOME)",
            "$(echo 'a')",
            "$(echo a; rm x)",
            "$(echo *)",
            "$(cat f)",
            "$(echo)",
        ] {
            let e = ex(raw);
            assert!(e.dynamic, "{raw}");
            assert_eq!(e.text, raw);
        }
    }

    #[test]
    fn quotes_and_escapes_are_removed() {
        assert_eq!(ex("\"rm\"").text, "rm");
        assert_eq!(ex("'r'm").text, "rm");
        assert_eq!(ex("r\\m").text, "rm");
        assert_eq!(ex("r\"\"m").text, "rm");
        assert_eq!(ex("$'\\x72\\x6d'").text, "rm");
        assert_eq!(ex("$'\\162m'").text, "rm");
        assert_eq!(ex("re$'\\0x'boot").text, "reboot");
        assert_eq!(ex("re$'\\c@'boot").text, "reboot");
        assert_eq!(ex("rm${IFS}-rf").text, format!("rm{IFS_SPLIT}-rf"));
        assert_eq!(ex("\"a${IFS}b\"").text, "a${IFS}b");
    }

    #[test]
    fn constants_substitute_and_unknowns_stay() {
        let mut env = Env::new();
        env.insert("a".into(), "rm".into());
        let e = expand("$a", &env, &ParserOptions::default());
        assert_eq!(e.text, "rm");
        assert!(!e.dynamic);
        let e = ex("$HOME/x");
        assert_eq!(e.text, "$HOME/x");
        assert!(e.dynamic);
        assert!(!e.root_risk, "$HOME/x is /x when empty: not the root");
        assert!(ex("\"$D/\"").root_risk);
        assert!(ex("$D/*").root_risk);
        assert!(ex("\"$D\"/etc").root_risk);
        assert!(!ex("${D:?}/").root_risk);
        let e = ex("\"$(curl x)\"");
        assert_eq!(e.substitutions, vec!["curl x".to_string()]);
    }

    proptest::proptest! {
        /// The fast path answers exactly what the word parser would.
        #[test]
        fn the_fast_path_agrees_with_the_parser(raw in "[a-zA-Z0-9 ~*?!@#%^&(){}\\[\\]<>|;:,./=+-]{0,12}|\\PC{0,8}") {
            proptest::prop_assume!(!raw.bytes().any(|b| matches!(b, b'$' | b'`' | b'\'' | b'"' | b'\\')));
            let fast = ex(&raw);
            let slow = expand_parsed(&raw, &Env::new(), &ParserOptions::default());
            proptest::prop_assert_eq!(format!("{fast:?}"), format!("{slow:?}"));
        }
    }

    #[test]
    fn braces_expand() {
        assert_eq!(
            brace_expand("{rm,-rf,/}"),
            Some(vec!["rm".into(), "-rf".into(), "/".into()])
        );
        assert_eq!(
            brace_expand("/{etc,usr}/x"),
            Some(vec!["/etc/x".into(), "/usr/x".into()])
        );
        assert_eq!(brace_expand("a{1..3}").map(|v| v.len()), Some(3));
        assert_eq!(brace_expand("${x}"), None);
        assert_eq!(brace_expand("{}"), None);
    }
}
