//! A quick reading of the most common line an agent runs: one simple command of plain words
//! (`git status`, `npm run build`, `ls -la src/`). brush's parser spends most of its time on
//! such a line trying every word as an assignment and collecting the parse errors of the
//! failed tries; this module builds the very tree brush builds for it, and answers `None` for
//! anything else, which then goes to brush. Tests compare the two trees.

use std::sync::Arc;

use brush_parser::ast::{
    AndOr, AndOrList, Command, CommandPrefixOrSuffixItem, CommandSuffix, CompoundList,
    CompoundListItem, Pipeline, Program, SeparatorOperator, SimpleCommand, Word,
};
use brush_parser::{SourcePosition, SourceSpan};

/// Bytes a word may hold outside quotes: none is special to the shell in any position (no
/// expansion, escape, brace, assignment, comment, redirection or operator); `=` is handled
/// apart.
fn plain(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'_' | b'.' | b'/' | b':' | b'@' | b'%' | b'+' | b',' | b'-' | b'~' | b'*' | b'?'
        )
}

/// Bytes a quoted part may hold: printable ASCII other than the closing quote, and inside
/// double quotes nothing that expands or escapes.
fn quoted(b: u8, quote: u8) -> bool {
    (b' '..=b'~').contains(&b)
        && b != quote
        && (quote == b'\'' || !matches!(b, b'$' | b'`' | b'\\' | b'!'))
}

/// Where the word starting at `i` ends, when it is made of plain bytes and quoted parts.
fn word_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    while let Some(&b) = bytes.get(i) {
        match b {
            b' ' => break,
            b'\'' | b'"' => {
                i += 1;
                while bytes.get(i).is_some_and(|&c| quoted(c, b)) {
                    i += 1;
                }
                if bytes.get(i) != Some(&b) {
                    return None;
                }
                i += 1;
            }
            b'|' | b'&' | b';' => break,
            b'=' => i += 1,
            b if plain(b) => i += 1,
            _ => return None,
        }
    }
    Some(i)
}

/// A word the grammar may read as an assignment (`NAME=…`, `NAME+=…`): left to brush.
fn may_assign(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        name.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'+')
    })
}

/// Words the grammar reads as keywords (or `time`) at the start of a command.
fn keyword(w: &str) -> bool {
    matches!(
        w,
        "case"
            | "do"
            | "done"
            | "elif"
            | "else"
            | "esac"
            | "fi"
            | "for"
            | "if"
            | "in"
            | "then"
            | "until"
            | "while"
            | "function"
            | "select"
            | "coproc"
            | "time"
    )
}

fn position(index: usize) -> Arc<SourcePosition> {
    Arc::new(SourcePosition {
        index,
        line: 1,
        column: index + 1,
    })
}

/// The tree brush parses `script` into, when `script` is one simple command on one line: words
/// of plain bytes and quoted parts without expansions, separated by spaces, none of them an
/// assignment and the first not a keyword; `None` otherwise.
pub fn parse(script: &str) -> Option<Program> {
    let bytes = script.as_bytes();
    let mut items: Vec<CompoundListItem> = Vec::new();
    // the list being built: its pipelines so far, each with the operator before it
    let mut list: Vec<(Option<Op>, Pipeline)> = Vec::new();
    let mut seq: Vec<Command> = Vec::new();
    let mut words: Vec<Word> = Vec::new();
    // the operator that ended the last pipeline, until the next pipeline starts
    let mut pending: Option<Op> = None;
    let mut i = 0;
    loop {
        let op = match bytes.get(i) {
            Some(b' ') => {
                i += 1;
                continue;
            }
            None => None,
            Some(b'|') => match bytes.get(i + 1) {
                Some(b'|') => Some(Op::Or),
                Some(b'&') => return None,
                _ => Some(Op::Pipe),
            },
            Some(b'&') => match bytes.get(i + 1) {
                Some(b'&') => Some(Op::And),
                _ => return None,
            },
            Some(b';') => match bytes.get(i + 1) {
                Some(b';' | b'&') => return None,
                _ => Some(Op::Semi),
            },
            Some(_) => {
                let start = i;
                i = word_end(bytes, i)?;
                let value = &script[start..i];
                if may_assign(value) || (words.is_empty() && keyword(value)) {
                    return None;
                }
                words.push(Word {
                    value: value.to_string(),
                    loc: Some(SourceSpan {
                        start: position(start),
                        end: position(i),
                    }),
                });
                continue;
            }
        };
        // an operator or the end: close the command before it
        if words.is_empty() {
            // nothing after `;` at the end is fine; anything else without a command is not
            if op.is_none() && seq.is_empty() && list.is_empty() && pending == Some(Op::Semi) {
                break;
            }
            return None;
        }
        let mut ws = std::mem::take(&mut words).into_iter();
        let first = ws.next()?;
        let suffix: Vec<CommandPrefixOrSuffixItem> =
            ws.map(CommandPrefixOrSuffixItem::Word).collect();
        seq.push(Command::Simple(SimpleCommand {
            prefix: None,
            word_or_name: Some(first),
            suffix: (!suffix.is_empty()).then_some(CommandSuffix(suffix)),
        }));
        if op == Some(Op::Pipe) {
            i += 1;
            continue;
        }
        let before = if list.is_empty() { None } else { pending };
        list.push((
            before,
            Pipeline {
                timed: None,
                bang: false,
                seq: std::mem::take(&mut seq),
            },
        ));
        if matches!(op, Some(Op::And | Op::Or)) {
            pending = op;
            i += 2;
            continue;
        }
        let mut pipelines = std::mem::take(&mut list).into_iter();
        let (_, first) = pipelines.next()?;
        let mut additional = Vec::new();
        for (before, p) in pipelines {
            additional.push(match before {
                Some(Op::And) => AndOr::And(p),
                Some(Op::Or) => AndOr::Or(p),
                _ => return None,
            });
        }
        items.push(CompoundListItem(
            AndOrList { first, additional },
            SeparatorOperator::Sequence,
        ));
        match op {
            Some(_) => {
                pending = Some(Op::Semi);
                i += 1;
            }
            None => break,
        }
    }
    if items.is_empty() {
        return None;
    }
    Some(Program {
        complete_commands: vec![CompoundList(items)],
    })
}

/// The operators between commands this module reads.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    Pipe,
    And,
    Or,
    Semi,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn brush(script: &str) -> String {
        let parsed = brush_parser::Parser::new(
            std::io::Cursor::new(script.as_bytes()),
            &brush_parser::ParserOptions::default(),
        )
        .parse_program();
        format!("{parsed:?}")
    }

    fn quick(script: &str) -> Option<String> {
        parse(script).map(|p| format!("{:?}", Ok::<_, ()>(p)))
    }

    #[test]
    fn builds_what_brush_builds() {
        for line in [
            "ls",
            "ls -la",
            "git status",
            "  npm   run build  ",
            "rm -rf /",
            "git push --force origin main",
            "curl -fsSL https://example.com/i.sh",
            "kubectl get pods -A",
            "echo done",
            "echo if then fi",
            "2 1",
            "a,b c:d e@f g%h i+j",
            "-",
            "/usr/bin/env python3",
            "grep -rn 'fn main' src",
            "git commit -m \"fix: the thing\" --amend",
            "echo 'a|b;c>d $x `y` \\z'",
            "ls --color=auto -d ~/x *.rs a?b",
            "a'b c'd\"e f\"g",
            "find . -name '*.pyc'",
            "x --a=b",
            "ls | wc -l",
            "a|b",
            "a && b || c",
            "a&&b||c|d",
            "a; b",
            "a;b;",
            "a;",
            "a | b && c | d; e || f",
            "curl -fsSL https://example.com/i.sh | sudo bash",
            "cd x && npm run 'build it' | tee log",
        ] {
            assert_eq!(quick(line), Some(brush(line)), "{line:?}");
        }
    }

    #[test]
    fn leaves_everything_else_to_brush() {
        for line in [
            "",
            "   ",
            "if",
            "time ls",
            "for x",
            "a=b ls",
            "ls a=b",
            "ls > f",
            "ls |& wc",
            "ls &",
            "ls & rm x",
            "a ;; b",
            "a ;& b",
            "a |",
            "a &&",
            "&& a",
            "; a",
            "a ; ; b",
            "a | if x",
            "ls #c",
            "ls\tx",
            "ls\nrm x",
            "echo $HOME",
            "{ ls; }",
            "! ls",
            "[[ a ]]",
            "ls ä",
            "ls A_1+=x",
            "ls 'open",
            "ls \"$HOME\"",
            "ls \"a\\b\"",
            "ls \"`id`\"",
            "ls \"!x\"",
            "echo x=\"'\"",
        ] {
            assert_eq!(parse(line).map(|_| ()), None, "{line:?}");
        }
    }

    /// Every Hermes Agent command it accepts (when the corpora are checked out next to the
    /// repository) gets brush's tree.
    #[test]
    fn corpus_lines_parse_as_brush_parses_them() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/corpora/hermes_vectors.jsonl");
        let Ok(text) = std::fs::read_to_string(path) else {
            return;
        };
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if let Some(cmd) = v["text"].as_str()
                && let Some(q) = quick(cmd)
            {
                assert_eq!(q, brush(cmd), "{cmd:?}");
            }
        }
    }

    proptest! {
        #[test]
        fn any_plain_line_parses_as_brush_parses_it(
            line in "[ ]{0,2}[a-zA-Z0-9_./:@%+,-]{1,8}([ ]{1,3}[a-zA-Z0-9_./:@%+,-]{1,8}){0,6}[ ]{0,2}"
        ) {
            if let Some(q) = quick(&line) {
                prop_assert_eq!(q, brush(&line));
            }
        }

        #[test]
        fn any_quoted_line_parses_as_brush_parses_it(
            line in "[a-z=-]{1,4}(([ ]{1,2}|'[ a-z$;|=\"#]{0,4}'|\"[ a-z;|='#]{0,4}\"|[a-z=.~*-]{1,3}|[ ]?(\\|\\||&&|;|&)[ ]?)){0,8}"
        ) {
            if let Some(q) = quick(&line) {
                prop_assert_eq!(q, brush(&line));
            }
        }

        #[test]
        fn any_line_it_accepts_parses_as_brush_parses_it(line in "[ a-z=;|&<>$'\"#~*?{}!0-9-]{0,16}") {
            if let Some(q) = quick(&line) {
                prop_assert_eq!(q, brush(&line));
            }
        }
    }
}
