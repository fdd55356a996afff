//! The argv of a command line that is one simple command of literal words, or nothing.
//!
//! A capability for `git push` must match `git push origin main` and never
//! `git push; rm -rf /`, `git push $(curl x)` or `git push > ~/.bashrc`. [`simple_argv`] parses
//! the line with brush-parser and accepts only one pipeline of one simple command, without
//! assignments, redirections, background `&`, negation or `time`, whose every word is literal:
//! plain text from a small set of characters, single-quoted or double-quoted text without
//! expansions, and backslash escapes. Anything else (substitutions, parameter or arithmetic
//! expansions, tildes, globs, braces, ANSI-C or locale quoting, heredocs, control or invisible
//! characters, a parser failure or panic) gives `None`: the caller then treats the line as not
//! covered, never as covered.

use std::panic::{AssertUnwindSafe, catch_unwind};

use brush_parser::ParserOptions;
use brush_parser::ast::{self, Command, CommandPrefixOrSuffixItem, SeparatorOperator};
use brush_parser::word::{WordPiece, WordPieceWithSource};

/// Longest line considered (longer lines are never a "simple command" worth a grant).
pub const MAX_SIMPLE_LEN: usize = 8 * 1024;

/// The words of `cmd` when it is exactly one simple command of literal words, dequoted; `None`
/// otherwise. Never panics.
pub fn simple_argv(cmd: &str) -> Option<Vec<String>> {
    if cmd.len() > MAX_SIMPLE_LEN || cmd.chars().any(forbidden_char) {
        return None;
    }
    // brush-parser is slow on deep brackets and can blow up on unterminated heredocs; neither
    // can be part of a simple literal command anyway.
    if crate::walk::max_nesting(cmd) > crate::walk::MAX_BRACKETS
        || crate::evasion::unterminated_heredoc(cmd).is_some()
    {
        return None;
    }
    catch_unwind(AssertUnwindSafe(|| parse_simple(cmd))).unwrap_or(None)
}

/// Control characters (newline included: it separates commands) and invisible or bidi format
/// characters, which make a line read differently from what runs.
fn forbidden_char(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00ad}' | '\u{061c}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}' | '\u{e0000}'..='\u{e007f}')
}

fn options() -> ParserOptions {
    ParserOptions {
        enable_extended_globbing: false,
        ..ParserOptions::default()
    }
}

fn parse_simple(cmd: &str) -> Option<Vec<String>> {
    let opts = options();
    let program = brush_parser::Parser::new(std::io::Cursor::new(cmd.as_bytes()), &opts)
        .parse_program()
        .ok()?;
    let [list] = program.complete_commands.as_slice() else {
        return None;
    };
    let [ast::CompoundListItem(and_or, sep)] = list.0.as_slice() else {
        return None;
    };
    if matches!(sep, SeparatorOperator::Async) || !and_or.additional.is_empty() {
        return None;
    }
    let pipeline = &and_or.first;
    if pipeline.bang || pipeline.timed.is_some() {
        return None;
    }
    let [Command::Simple(simple)] = pipeline.seq.as_slice() else {
        return None;
    };
    if simple.prefix.as_ref().is_some_and(|p| !p.0.is_empty()) {
        return None;
    }
    let name = simple.word_or_name.as_ref()?;
    let mut argv = vec![literal_word(&name.value, &opts)?];
    let mut last = name;
    if let Some(suffix) = &simple.suffix {
        for item in &suffix.0 {
            let CommandPrefixOrSuffixItem::Word(w) = item else {
                return None;
            };
            argv.push(literal_word(&w.value, &opts)?);
            last = w;
        }
    }
    // Nothing but blanks or a comment may follow the last word: not even a lone `;`.
    let end = last.loc.as_ref()?.end.index;
    let rest: String = cmd.chars().skip(end).collect();
    let rest = rest.trim_start_matches([' ', '\t']);
    if !(rest.is_empty() || rest.starts_with('#')) {
        return None;
    }
    Some(argv)
}

/// The value of a word made only of literal pieces.
fn literal_word(raw: &str, opts: &ParserOptions) -> Option<String> {
    let pieces = brush_parser::word::parse(raw, opts).ok()?;
    let mut out = String::new();
    for p in &pieces {
        match &p.piece {
            WordPiece::Text(t) => {
                if !t.chars().all(plain_char) {
                    return None;
                }
                out.push_str(t);
            }
            WordPiece::SingleQuotedText(t) => out.push_str(t),
            WordPiece::EscapeSequence(e) => out.push_str(unescape(e, false)?),
            WordPiece::DoubleQuotedSequence(inner) => double_quoted(inner, &mut out)?,
            _ => return None,
        }
    }
    Some(out)
}

fn double_quoted(inner: &[WordPieceWithSource], out: &mut String) -> Option<()> {
    for p in inner {
        match &p.piece {
            // Inside double quotes `$`, backquote and `\` escapes arrive as their own pieces (a
            // backslash left in text is literal); a lone `$` and `!` (history expansion in
            // interactive shells) are refused all the same.
            WordPiece::Text(t) if !t.contains(['$', '`', '!']) => out.push_str(t),
            WordPiece::EscapeSequence(e) => out.push_str(unescape(e, true)?),
            _ => return None,
        }
    }
    Some(())
}

/// `\c` outside quotes is `c`; inside double quotes it is `c` only for `$`, backquote, `"` and
/// `\`, and stays `\c` otherwise.
fn unescape(e: &str, in_double: bool) -> Option<&str> {
    let rest = e.strip_prefix('\\')?;
    let mut chars = rest.chars();
    let c = chars.next()?;
    if chars.next().is_some() || c == '\n' {
        return None;
    }
    if in_double && !matches!(c, '$' | '`' | '"' | '\\') {
        Some(e)
    } else {
        Some(rest)
    }
}

/// Characters an unquoted literal word may contain: letters, digits and `-_./:,=+@%^`.
/// Everything a shell could treat specially (globs, braces, tildes, `!`, `#`, `$`, quotes,
/// brackets, operators) is outside this set.
fn plain_char(c: char) -> bool {
    c.is_alphanumeric()
        || matches!(
            c,
            '-' | '_' | '.' | '/' | ':' | ',' | '=' | '+' | '@' | '%' | '^'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Option<Vec<String>> {
        simple_argv(s)
    }

    fn words(w: &[&str]) -> Option<Vec<String>> {
        Some(w.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn plain_commands() {
        assert_eq!(
            argv("git push origin main"),
            words(&["git", "push", "origin", "main"])
        );
        assert_eq!(argv("  ls   -la  "), words(&["ls", "-la"]));
        assert_eq!(
            argv("git commit -m 'fix: a; b && c $(x)'"),
            words(&["git", "commit", "-m", "fix: a; b && c $(x)"])
        );
        assert_eq!(
            argv(r#"echo "a b" c\ d \; x"\$y\q""#),
            words(&["echo", "a b", "c d", ";", r"x$y\q"])
        );
        assert_eq!(
            argv("cargo test -p airlock-grants --lib"),
            words(&["cargo", "test", "-p", "airlock-grants", "--lib"])
        );
        assert_eq!(argv("git push # a comment"), words(&["git", "push"]));
    }

    #[test]
    fn injections_are_refused() {
        for bad in [
            "git push; rm -rf /",
            "git push && rm -rf /",
            "git push || rm -rf /",
            "git push | sh",
            "git push & rm -rf /",
            "git push &",
            "git push\nrm -rf /",
            "git push $(curl x)",
            "git push `curl x`",
            "git push \"$(curl x)\"",
            "git push \"`curl x`\"",
            "git push $HOME",
            "git push ${HOME}",
            "git push \"$HOME\"",
            "git push $((1+2))",
            "git push > ~/.bashrc",
            "git push >out",
            "git push 2>&1",
            "git push < /etc/passwd",
            "git push <<X\nhi\nX",
            "git push <(curl x)",
            "git push >(sh)",
            "X=1 git push",
            "GIT_SSH_COMMAND=evil git push",
            "git push *",
            "git push ?",
            "git push [ab]",
            "git push {a,b}",
            "git push ~",
            "git push ~root",
            "git push $'\\x41'",
            "git push $\"x\"",
            "! git push",
            "time git push",
            "(git push)",
            "{ git push; }",
            "if true; then git push; fi",
            "f() { git push; }",
            "[[ -f x ]]",
            "git push \u{202e}x",
            "git push \u{200b}",
            "git push\u{0}",
            "git push \u{1b}[2J",
            "",
            "   ",
            "git push \"unterminated",
            "git push 'unterminated",
            "git push !(x)",
            "git push @(x)",
            "git push \"!x\"",
            "coproc git push",
            "function f { git push; }",
            "git push origin#x",
            "git push \\\nrm",
            "git\tpush\u{b}x",
            "git push;",
            "git push ;",
            "git push ; # x",
        ] {
            assert_eq!(argv(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn long_and_deep_input_is_refused() {
        let long = format!("echo {}", "a".repeat(MAX_SIMPLE_LEN));
        assert_eq!(argv(&long), None);
        let deep = format!("echo \"{}\"", "(".repeat(40));
        assert_eq!(argv(&deep), None);
    }

    #[test]
    fn parser_panics_are_contained() {
        // brush-parser 0.4 panics on over-long fd numbers and tilde indices.
        assert_eq!(argv("echo 99999999999>x"), None);
        assert_eq!(argv("echo ~99999999999999999999"), None);
    }

    /// An independent lexer: is any shell-special character outside quotes (or `$` / backquote
    /// inside double quotes)? Comments (`#` at a word start) end the scan, as in the shell.
    fn unquoted_special(s: &str) -> bool {
        #[derive(PartialEq)]
        enum St {
            Plain,
            Single,
            Double,
        }
        let mut st = St::Plain;
        let mut chars = s.chars().peekable();
        let mut word_start = true;
        while let Some(c) = chars.next() {
            match st {
                St::Plain => {
                    match c {
                        '\'' => st = St::Single,
                        '"' => st = St::Double,
                        '\\' => {
                            chars.next();
                        }
                        '#' if word_start => return false,
                        ';' | '&' | '|' | '<' | '>' | '(' | ')' | '$' | '`' | '*' | '?' | '['
                        | ']' | '{' | '}' | '~' | '!' | '\n' => return true,
                        _ => {}
                    }
                    word_start = c == ' ' || c == '\t';
                }
                St::Single => {
                    if c == '\'' {
                        st = St::Plain;
                    }
                }
                St::Double => match c {
                    '"' => st = St::Plain,
                    '\\' => {
                        chars.next();
                    }
                    '$' | '`' => return true,
                    _ => {}
                },
            }
        }
        false
    }

    fn quote(w: &str) -> String {
        format!("'{}'", w.replace('\'', r"'\''"))
    }

    use proptest::prelude::*;

    const PIECES: &[&str] = &[
        "a", "b", "git", "push", " ", " ", "-f", "/", ".", "=", ";", "&", "|", "<", ">", "(", ")",
        "$", "`", "*", "?", "[", "]", "{", "}", "~", "!", "#", "'", "\"", "\\", "\n", "\t", "x=",
        "$(", "${", ",", "@", ":", "é",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn accepted_lines_have_no_unquoted_metacharacters(
            parts in proptest::collection::vec(proptest::sample::select(PIECES), 0..14)
        ) {
            let line: String = parts.concat();
            if let Some(words) = simple_argv(&line) {
                prop_assert!(!words.is_empty());
                prop_assert!(!unquoted_special(&line), "{line:?} -> {words:?}");
                // Quoting the words again gives the same argv.
                let requoted: Vec<String> = words.iter().map(|w| quote(w)).collect();
                prop_assert_eq!(simple_argv(&requoted.join(" ")), Some(words));
            }
        }

        #[test]
        fn quoted_words_round_trip(
            words in proptest::collection::vec("[ -~é]{0,12}", 1..6)
        ) {
            // `<<` anywhere (even quoted) is refused before parsing, see `simple_argv`.
            prop_assume!(!words.iter().any(|w| w.contains("<<")));
            let line: Vec<String> = words.iter().map(|w| quote(w)).collect();
            prop_assert_eq!(simple_argv(&line.join(" ")), Some(words));
        }
    }
}
