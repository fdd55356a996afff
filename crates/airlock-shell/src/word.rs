//! Static expansion of one shell word: quote removal, escapes, ANSI-C strings, tildes, constant
//! variables and literal brace lists. Whatever only the running shell could know (unknown
//! variables, command substitutions, arithmetic) is kept as written and flagged, and the bodies
//! of command substitutions are handed back so the walker can analyse them as scripts.

use brush_parser::ParserOptions;
use brush_parser::word::{
    Parameter, ParameterExpr, ParameterTestType, SubstringMatchKind, WordPiece, WordPieceWithSource,
};
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
    if !cfg!(airlock_reference)
        && !raw
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
                let known = known_value(expr, env);
                let is_ifs = src.starts_with("$IFS") || src.starts_with("${IFS");
                // `$IFS$9`: a positional parameter is empty on a command line, and serves
                // only to end the name `IFS`
                if !in_quotes
                    && out.text.ends_with(IFS_SPLIT)
                    && matches!(
                        expr,
                        ParameterExpr::Parameter {
                            parameter: Parameter::Positional(1..)
                                | Parameter::Special(
                                    brush_parser::word::SpecialParameter::AllPositionalParameters { .. }
                                ),
                            indirect: false,
                        }
                    )
                {
                    continue;
                }
                // `${x:-$(cmd)}`, `${a[$(cmd)]}`, `${x:$(cmd)}`: operands and subscripts
                // are expanded again when the line runs
                if !matches!(
                    expr,
                    ParameterExpr::Parameter {
                        parameter: Parameter::Named(_),
                        ..
                    }
                ) {
                    nested_substitutions(src, &mut out.substitutions);
                }
                // `${x@P}` expands the value like a prompt, running its substitutions
                if let ParameterExpr::Transform {
                    parameter: Parameter::Named(n),
                    op: brush_parser::word::ParameterTransformOp::PromptExpand,
                    ..
                } = expr
                    && let Some(v) = env.get(n)
                {
                    nested_substitutions(v, &mut out.substitutions);
                }
                match known {
                    // unquoted, a value is split into words (`c="rm -rf"; $c ~`)
                    Some(v) if !in_quotes && !env.contains_key("IFS") => out
                        .text
                        .push_str(&v.replace([' ', '\t', '\n'], &IFS_SPLIT.to_string())),
                    Some(v) => out.text.push_str(&v),
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
                nested_substitutions(src, &mut out.substitutions);
                out.dynamic = true;
                out.text.push_str(src);
            }
        }
    }
}

/// The value of a parameter expansion over constants: a plain or indirect (`${!v}`) name, and
/// the operators whose result follows from the value with literal operands (`${x/X/m}`,
/// `${x#p}`, `${x%s}`, `${x:-d}`, `${x:1:2}`, `${x^^}`, `${x,,}`). `None` when it depends on
/// anything only the running shell knows, or on a pattern with wildcards.
fn known_value(expr: &ParameterExpr, env: &Env) -> Option<String> {
    fn value<'e>(p: &Parameter, indirect: bool, env: &'e Env) -> Option<&'e String> {
        let Parameter::Named(n) = p else {
            return None;
        };
        let v = env.get(n)?;
        if indirect { env.get(v) } else { Some(v) }
    }
    let literal = |s: &str| !s.contains(['*', '?', '[', '\\', '\'', '"', '$', '`', '(', '{']);
    match expr {
        // a constant list: every element (`"${a[@]}"` stays several words), or one by index
        ParameterExpr::Parameter {
            parameter: Parameter::NamedWithAllIndices { name, .. },
            indirect: false,
        } => env.get(&format!("{name}[@]")).cloned(),
        ParameterExpr::Parameter {
            parameter: Parameter::NamedWithIndex { name, index },
            indirect: false,
        } => {
            let i: usize = index.trim().parse().ok()?;
            env.get(&format!("{name}[@]"))?
                .split(IFS_SPLIT)
                .nth(i)
                .map(String::from)
        }
        // positional parameters set earlier in the line (`set -- rm -rf ~; "$@"`)
        ParameterExpr::Parameter {
            parameter:
                Parameter::Special(brush_parser::word::SpecialParameter::AllPositionalParameters {
                    ..
                }),
            indirect: false,
        } => env.get("@[@]").cloned(),
        ParameterExpr::Parameter {
            parameter: Parameter::Positional(n @ 1..),
            indirect: false,
        } => env
            .get("@[@]")?
            .split(IFS_SPLIT)
            .nth(*n as usize - 1)
            .map(String::from),
        ParameterExpr::Parameter {
            parameter,
            indirect,
        } => value(parameter, *indirect, env).cloned(),
        ParameterExpr::UseDefaultValues {
            parameter,
            indirect,
            test_type,
            default_value,
        } => {
            let v = value(parameter, *indirect, env)?;
            if !v.is_empty() || matches!(test_type, ParameterTestType::Unset) {
                return Some(v.clone());
            }
            let d = default_value.as_deref().unwrap_or("");
            literal(d).then(|| d.to_string())
        }
        ParameterExpr::ReplaceSubstring {
            parameter,
            indirect,
            pattern,
            replacement,
            match_kind,
        } => {
            let v = value(parameter, *indirect, env)?;
            let r = replacement.as_deref().unwrap_or("");
            if pattern.is_empty() || !literal(pattern) || !literal(r) {
                return None;
            }
            Some(match match_kind {
                SubstringMatchKind::Anywhere => v.replace(pattern.as_str(), r),
                SubstringMatchKind::FirstOccurrence => v.replacen(pattern.as_str(), r, 1),
                SubstringMatchKind::Prefix => match v.strip_prefix(pattern.as_str()) {
                    Some(rest) => format!("{r}{rest}"),
                    None => v.clone(),
                },
                SubstringMatchKind::Suffix => match v.strip_suffix(pattern.as_str()) {
                    Some(rest) => format!("{rest}{r}"),
                    None => v.clone(),
                },
            })
        }
        ParameterExpr::RemoveSmallestPrefixPattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::RemoveLargestPrefixPattern {
            parameter,
            indirect,
            pattern,
        } => {
            let v = value(parameter, *indirect, env)?;
            let p = pattern.as_deref().unwrap_or("");
            literal(p).then(|| v.strip_prefix(p).unwrap_or(v).to_string())
        }
        ParameterExpr::RemoveSmallestSuffixPattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::RemoveLargestSuffixPattern {
            parameter,
            indirect,
            pattern,
        } => {
            let v = value(parameter, *indirect, env)?;
            let p = pattern.as_deref().unwrap_or("");
            literal(p).then(|| v.strip_suffix(p).unwrap_or(v).to_string())
        }
        ParameterExpr::Substring {
            parameter,
            indirect,
            offset,
            length,
        } => {
            let v = value(parameter, *indirect, env)?;
            let off: usize = offset.value.trim().parse().ok()?;
            let chars = v.chars().skip(off);
            match length {
                None => Some(chars.collect()),
                Some(l) => Some(chars.take(l.value.trim().parse().ok()?).collect()),
            }
        }
        ParameterExpr::UppercasePattern {
            parameter,
            indirect,
            pattern,
        } if pattern.as_deref().unwrap_or("").is_empty() => {
            value(parameter, *indirect, env).map(|v| v.to_uppercase())
        }
        ParameterExpr::LowercasePattern {
            parameter,
            indirect,
            pattern,
        } if pattern.as_deref().unwrap_or("").is_empty() => {
            value(parameter, *indirect, env).map(|v| v.to_lowercase())
        }
        ParameterExpr::UppercaseFirstChar {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::LowercaseFirstChar {
            parameter,
            indirect,
            pattern,
        } if pattern.as_deref().unwrap_or("").is_empty() => {
            let v = value(parameter, *indirect, env)?;
            let upper = matches!(expr, ParameterExpr::UppercaseFirstChar { .. });
            let mut c = v.chars();
            Some(match c.next() {
                Some(f) if upper => f.to_uppercase().chain(c).collect(),
                Some(f) => f.to_lowercase().chain(c).collect(),
                None => String::new(),
            })
        }
        _ => None,
    }
}

/// Most substitutions collected from one nested expansion (the walker analyses each).
const MAX_NESTED: usize = 16;

/// Appends to `out` the bodies of the command substitutions nested in text that bash expands
/// again: the operands of `${…}` operators, array subscripts, arithmetic (`$((…))`, `((…))`,
/// `for ((…))`), case patterns. Single-quoted text inside is searched too (inside double
/// quotes bash runs `"${x:-'$(cmd)'}"`), so this errs toward finding too much.
pub fn nested_substitutions(src: &str, out: &mut Vec<String>) {
    nested_rec(src, out, 0);
}

fn nested_rec(src: &str, out: &mut Vec<String>, depth: usize) {
    if depth > 6 || out.len() >= MAX_NESTED || !src.contains(['$', '`']) {
        return;
    }
    let inner = if let Some(i) = src.strip_prefix("$((").and_then(|s| s.strip_suffix("))")) {
        i
    } else if let Some(i) = src.strip_prefix("${").and_then(|s| s.strip_suffix('}')) {
        i
    } else if let Some(i) = src.strip_prefix("$[").and_then(|s| s.strip_suffix(']')) {
        i
    } else {
        src
    };
    match brush_parser::word::parse(inner, &ParserOptions::default()) {
        Ok(pieces) => pieces_nested(inner, &pieces, out, depth),
        Err(_) => raw_substitutions(inner, out),
    }
}

/// [`nested_substitutions`] over pieces already parsed (a here-document body).
pub fn substitutions_in_pieces(raw: &str, pieces: &[WordPieceWithSource], out: &mut Vec<String>) {
    pieces_nested(raw, pieces, out, 0);
}

fn pieces_nested(raw: &str, pieces: &[WordPieceWithSource], out: &mut Vec<String>, depth: usize) {
    for p in pieces {
        if out.len() >= MAX_NESTED {
            return;
        }
        let src = raw.get(p.start_index..p.end_index).unwrap_or("");
        match &p.piece {
            WordPiece::CommandSubstitution(body)
            | WordPiece::BackquotedCommandSubstitution(body) => out.push(body.clone()),
            WordPiece::ParameterExpansion(_) | WordPiece::ArithmeticExpression(_) => {
                nested_rec(src, out, depth + 1)
            }
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => {
                pieces_nested(raw, inner, out, depth + 1)
            }
            WordPiece::SingleQuotedText(s) => nested_rec(s, out, depth + 1),
            _ => {}
        }
    }
}

/// The bodies of `$(…)` and backquotes in text the word parser rejects: balanced parentheses,
/// no quoting rules (errs toward finding too much).
fn raw_substitutions(s: &str, out: &mut Vec<String>) {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && out.len() < MAX_NESTED {
        if b[i] == b'$' && b.get(i + 1) == Some(&b'(') {
            let start = i + 2;
            let mut level = 1usize;
            let mut j = start;
            while j < b.len() && level > 0 {
                match b[j] {
                    b'(' => level += 1,
                    b')' => level -= 1,
                    _ => {}
                }
                j += 1;
            }
            let end = if level == 0 { j - 1 } else { j };
            out.push(s.get(start..end).unwrap_or("").to_string());
            i = j;
        } else if b[i] == b'`' {
            let start = i + 1;
            let end = s[start..].find('`').map_or(b.len(), |e| start + e);
            out.push(s.get(start..end).unwrap_or("").to_string());
            i = end + 1;
        } else {
            i += 1;
        }
    }
}

/// The command substitutions in a string bash may later evaluate as an array subscript
/// (`printf -v 'a[$(cmd)]'`, `declare`, `unset`, `read`, `test -v`, a variable used in
/// arithmetic): bash runs them although the text was quoted when the line was read.
pub fn subscript_substitutions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(at) = text.find('[')
        && text[at..].contains(['$', '`'])
    {
        raw_substitutions(&text[at..], &mut out);
    }
    out
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

    proptest::proptest! {
        /// Any text: the nested search neither panics nor loops, and stays bounded.
        #[test]
        fn nested_search_is_total(raw in "[$`(){}\\[\\]'\"a-z:=+#%/ -]{0,40}") {
            let mut out = Vec::new();
            nested_substitutions(&raw, &mut out);
            proptest::prop_assert!(out.len() <= MAX_NESTED);
            let _ = subscript_substitutions(&raw);
            let _ = ex(&raw);
        }
    }

    #[test]
    fn operands_subscripts_and_arithmetic_hand_back_their_substitutions() {
        for (raw, body) in [
            ("${x:-$(rm a)}", "rm a"),
            ("${x:+`rm a`}", "rm a"),
            ("\"${x:-'$(rm a)'}\"", "rm a"),
            ("${a[$(rm a)]}", "rm a"),
            ("${x:$(rm a):1}", "rm a"),
            ("${x/$(rm a)/b}", "rm a"),
            ("${x:-${y:-$(rm a)}}", "rm a"),
            ("$((1+$(rm a)))", "rm a"),
            ("$(( a[`rm a`] ))", "rm a"),
        ] {
            let e = ex(raw);
            assert!(
                e.substitutions.iter().any(|s| s == body),
                "{raw}: {:?}",
                e.substitutions
            );
        }
        assert_eq!(subscript_substitutions("a[$(rm a)]"), ["rm a"]);
        assert!(subscript_substitutions("a[1]").is_empty());
        assert!(subscript_substitutions("$(rm a)").is_empty());
        assert!(ex("${x:-default}").substitutions.is_empty());
    }

    #[test]
    fn operators_over_constants_are_evaluated() {
        let mut env = Env::new();
        env.insert("x".into(), "rX".into());
        env.insert("u".into(), "RM".into());
        env.insert("p".into(), "x".into());
        env.insert("c".into(), "rm -rf".into());
        let e = |raw: &str| expand(raw, &env, &ParserOptions::default()).text;
        assert_eq!(e("${x/X/m}"), "rm");
        assert_eq!(e("${x%X}"), "r");
        assert_eq!(e("${x#r}"), "X");
        assert_eq!(e("${u,,}"), "rm");
        assert_eq!(e("${x:0:1}"), "r");
        assert_eq!(e("${!p}"), "rX");
        assert_eq!(e("${x:-y}"), "rX");
        assert_eq!(e("$c"), format!("rm{IFS_SPLIT}-rf"));
        assert_eq!(e("\"$c\""), "rm -rf");
        // a wildcard pattern is only known to the running shell
        assert_eq!(e("${x/*/m}"), "${x/*/m}");
        assert_eq!(e("${y/X/m}"), "${y/X/m}");
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
