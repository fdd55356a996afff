//! What a line that does not parse still runs. When brush-parser rejects a script, the walker
//! records a parse error (ask) and then cuts the text into pieces with this small scanner and
//! walks each piece on its own, so syntax the parser rejects cannot hide `rm -rf /` glued behind
//! it. Pieces only ever add findings to the parse error's ask: a cut in the wrong place can make
//! a decision stricter, never weaker.
//!
//! Two passes. The outer pass cuts at the shell's command separators (`;`, `&`, `|`, `&&`, `||`,
//! newlines) outside quotes, backslash escapes, comments, substitutions, subshells, `{ …; }`
//! groups and heredoc bodies, so most pieces are whole commands the parser reads as usual. A
//! piece that still does not parse is cut again by the inner pass, which also cuts inside
//! substitutions and groups, at their brackets and backticks, after reserved words (`then`,
//! `do`, …) and at every line of a heredoc body: those cuts may land inside a word, which only
//! makes more, smaller commands to judge. Both passes are one linear scan, and together they
//! yield at most [`MAX_PIECES`] pieces per failed script.

use std::collections::{HashMap, VecDeque};

/// Most pieces one failed script is cut into (both passes together); once reached, the last
/// piece keeps the rest of the text.
pub const MAX_PIECES: usize = 256;

/// Reserved words after which the inner pass cuts (at the start of a word).
const RESERVED: [&[u8]; 14] = [
    b"if", b"then", b"else", b"elif", b"fi", b"do", b"done", b"while", b"until", b"case", b"esac",
    b"time", b"{", b"}",
];

/// Where the scanner is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    /// Shell code; `parens` counts open `(` and `braces` open `{ ` groups inside it.
    Code {
        parens: usize,
        braces: usize,
        close: Close,
    },
    /// Inside `"…"`: only `\`, `$(…)` and backticks are special.
    Double,
    /// Inside `'…'`: nothing is special.
    Single,
    /// Inside `$'…'`: a backslash escapes the next byte.
    Ansi,
}

/// What ends a stretch of code.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Close {
    /// The end of the text.
    Top,
    /// The `)` of `$(`, `<(` or `>(`.
    Paren,
    /// A backtick.
    Tick,
}

fn code(close: Close) -> Ctx {
    Ctx::Code {
        parens: 0,
        braces: 0,
        close,
    }
}

/// The pieces found so far.
struct Pieces<'a> {
    s: &'a str,
    out: Vec<(usize, &'a str)>,
    start: usize,
    max: usize,
}

impl<'a> Pieces<'a> {
    /// Ends the current piece at `end` and starts the next one at `next`; false once the cap is
    /// reached (the current piece then stays open and [`Pieces::finish`] takes the rest).
    fn cut(&mut self, end: usize, next: usize) -> bool {
        let piece = self.s.get(self.start..end).unwrap_or("");
        if !piece.trim().is_empty() {
            if self.out.len() + 1 >= self.max {
                return false;
            }
            self.out.push((self.start, piece));
        }
        self.start = next;
        true
    }

    fn finish(mut self) -> Vec<(usize, &'a str)> {
        let rest = self.s.get(self.start..).unwrap_or("");
        if self.max > 0 && !rest.trim().is_empty() {
            self.out.push((self.start, rest));
        }
        self.out
    }
}

/// A `#` here starts a comment: it begins a word after a blank or an operator. A `#` after `)`
/// or `(` is read as part of a word, the stricter reading (brush-parser takes `)#` as a
/// comment where bash does not).
fn word_start(b: &[u8], i: usize) -> bool {
    i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b';' | b'&' | b'|')
}

/// `&` that belongs to a redirection (`>&`, `<&`, `&>`, `&>>`) rather than a separator.
fn redirect_amp(b: &[u8], i: usize) -> bool {
    (i > 0 && matches!(b[i - 1], b'>' | b'<')) || b.get(i + 1) == Some(&b'>')
}

fn line_end(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |n| i + n)
}

/// The length of the reserved word starting at `i`, when one does.
fn reserved_at(b: &[u8], i: usize) -> Option<usize> {
    RESERVED.iter().find_map(|w| {
        let end = i + w.len();
        (b.get(i..end) == Some(w)
            && b.get(end)
                .is_none_or(|c| matches!(c, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|')))
        .then_some(w.len())
    })
}

/// Reads the delimiter of a heredoc whose `<<` starts at `i`: the delimiter (quotes and
/// backslashes dropped), whether leading tabs are stripped (`<<-`), and where the word ends.
fn heredoc_word(b: &[u8], i: usize) -> (Vec<u8>, bool, usize) {
    let n = b.len();
    let mut j = i + 2;
    let tabs = b.get(j) == Some(&b'-');
    if tabs {
        j += 1;
    }
    while j < n && matches!(b[j], b' ' | b'\t') {
        j += 1;
    }
    let mut word = Vec::new();
    while j < n
        && !matches!(
            b[j],
            b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')'
        )
    {
        match b[j] {
            q @ (b'\'' | b'"') => {
                j += 1;
                while j < n && b[j] != q {
                    word.push(b[j]);
                    j += 1;
                }
                j += 1;
            }
            b'\\' => {
                j += 1;
                if let Some(&c) = b.get(j) {
                    word.push(c);
                    j += 1;
                }
            }
            c => {
                word.push(c);
                j += 1;
            }
        }
    }
    (word, tabs, j.min(n))
}

/// Heredoc delimiters: the word and whether leading tabs are stripped (`<<-`).
type Heredoc = (Vec<u8>, bool);

/// Each line of the text (without a trailing `\r`; also with leading tabs stripped) and where
/// the last such line starts: one pass, so checking an end marker costs no rescan.
fn end_lines(b: &[u8]) -> [HashMap<&[u8], usize>; 2] {
    let mut plain = HashMap::new();
    let mut tabs = HashMap::new();
    let mut at = 0;
    for line in b.split(|&c| c == b'\n') {
        let l = line.strip_suffix(b"\r").unwrap_or(line);
        plain.insert(l, at);
        let mut t = l;
        while let [b'\t', rest @ ..] = t {
            t = rest;
        }
        tabs.insert(t, at);
        at += line.len() + 1;
    }
    [plain, tabs]
}

/// The end marker of `h` is a line after `at`.
fn closed(ends: &[HashMap<&[u8], usize>; 2], h: &Heredoc, at: usize) -> bool {
    ends[usize::from(h.1)]
        .get(h.0.as_slice())
        .is_some_and(|&line| line > at)
}

/// Cuts `s` into pieces with their byte offsets, skipping blank ones; at most `max` of them.
/// `inner` selects the inner pass (see the module documentation).
///
/// The cuts are approximate by design: the scanner may cut inside `$(…)`, a `case` clause or a
/// quoted heredoc body where bash would not. That is fine because every piece is only an extra
/// reading added to a line that is already asked about; a wrong cut can add a finding, it
/// cannot remove one.
pub fn split(s: &str, inner: bool, max: usize) -> Vec<(usize, &str)> {
    let b = s.as_bytes();
    let n = b.len();
    let mut p = Pieces {
        s,
        out: Vec::new(),
        start: 0,
        max,
    };
    let mut stack = vec![code(Close::Top)];
    // heredocs whose body starts at the next line, and those whose body is being read
    let mut pending: Vec<Heredoc> = Vec::new();
    let mut body: VecDeque<Heredoc> = VecDeque::new();
    // the inner pass reads a heredoc body as commands only when its end marker never comes
    // (bash then runs the rest of the text as the body); a closed body stays with its command
    let mut cut_body = false;
    let mut pending_open = false;
    let ends = if inner && s.contains("<<") {
        end_lines(b)
    } else {
        Default::default()
    };
    let mut escaped_at = usize::MAX;
    let mut i = 0;
    while i < n {
        let top = matches!(
            stack.as_slice(),
            [Ctx::Code {
                parens: 0,
                braces: 0,
                ..
            }]
        );
        // a command with a heredoc whose body comes later is not cut from it (the inner pass
        // still cuts when that body never ends)
        let hold = !(pending.is_empty() || inner && pending_open);
        let cut_inner = inner && !hold;
        if let Some((delim, tabs)) = body.front() {
            if i > 0 && b[i - 1] == b'\n' {
                let end = line_end(b, i);
                let mut line = &b[i..end];
                line = line.strip_suffix(b"\r").unwrap_or(line);
                if *tabs {
                    while let [b'\t', rest @ ..] = line {
                        line = rest;
                    }
                }
                if line == delim.as_slice() {
                    body.pop_front();
                    // the end marker is no command
                    if cut_body && !p.cut(i, end) {
                        break;
                    }
                    i = end;
                    continue;
                }
            }
            // body text: quotes and backslashes are literal
            if cut_body {
                match b[i] {
                    b'#' if word_start(b, i) => {
                        i = line_end(b, i);
                        continue;
                    }
                    b'\n' | b';' | b'|' if !p.cut(i, i + 1) => break,
                    b'&' if !redirect_amp(b, i) && !p.cut(i, i + 1) => break,
                    _ => {}
                }
            }
            i += 1;
            continue;
        }
        let c = b[i];
        let next = b.get(i + 1).copied();
        let mut room = true;
        match stack.last().copied() {
            Some(Ctx::Single) if c == b'\'' => {
                stack.pop();
            }
            Some(Ctx::Single) => {}
            Some(Ctx::Ansi) => match c {
                b'\\' => i += 1,
                b'\'' => {
                    stack.pop();
                }
                _ => {}
            },
            Some(Ctx::Double) => match c {
                b'\\' => i += 1,
                b'"' => {
                    stack.pop();
                }
                b'`' => {
                    stack.push(code(Close::Tick));
                    if cut_inner {
                        room = p.cut(i, i + 1);
                    }
                }
                b'$' if next == Some(b'(') => {
                    stack.push(code(Close::Paren));
                    if cut_inner {
                        room = p.cut(i, i + 2);
                    }
                    i += 1;
                }
                _ => {}
            },
            Some(Ctx::Code {
                parens,
                braces,
                close,
            }) => {
                let set = |stack: &mut Vec<Ctx>, parens, braces| {
                    if let Some(top) = stack.last_mut() {
                        *top = Ctx::Code {
                            parens,
                            braces,
                            close,
                        };
                    }
                };
                // the outer pass keeps a command with the heredoc bodies it opened
                let cuts = if inner { !hold } else { top && !hold };
                match c {
                    b'\\' => {
                        escaped_at = i + 1;
                        i += 1;
                    }
                    b'\'' => {
                        let ansi = i > 0 && b[i - 1] == b'$' && escaped_at != i - 1;
                        stack.push(if ansi { Ctx::Ansi } else { Ctx::Single });
                    }
                    b'"' => stack.push(Ctx::Double),
                    b'`' => {
                        if close == Close::Tick {
                            stack.pop();
                        } else {
                            stack.push(code(Close::Tick));
                        }
                        if cut_inner {
                            room = p.cut(i, i + 1);
                        }
                    }
                    b'$' | b'<' | b'>' if next == Some(b'(') => {
                        stack.push(code(Close::Paren));
                        if cut_inner {
                            room = p.cut(i, i + 2);
                        }
                        i += 1;
                    }
                    b'(' => {
                        set(&mut stack, parens + 1, braces);
                        if cut_inner {
                            room = p.cut(i, i + 1);
                        }
                    }
                    b')' => {
                        if parens > 0 {
                            set(&mut stack, parens - 1, braces);
                        } else if close == Close::Paren {
                            stack.pop();
                        }
                        if cut_inner {
                            room = p.cut(i, i + 1);
                        }
                    }
                    b'#' if word_start(b, i) => {
                        i = line_end(b, i);
                        continue;
                    }
                    b'<' if next == Some(b'<') => {
                        if b.get(i + 2) == Some(&b'<') {
                            // a here-string
                            i += 3;
                        } else {
                            let (word, tabs, end) = heredoc_word(b, i);
                            if !word.is_empty() {
                                let h = (word, tabs);
                                pending_open |= inner && !closed(&ends, &h, end);
                                pending.push(h);
                            }
                            i = end;
                        }
                        continue;
                    }
                    b'\n' => {
                        if body.is_empty() && !pending.is_empty() {
                            cut_body = inner && pending_open;
                            pending_open = false;
                        }
                        body.extend(pending.drain(..));
                        if cuts {
                            room = p.cut(i, i + 1);
                        }
                    }
                    b';' if cuts => room = p.cut(i, i + 1),
                    // `>|` is a redirection
                    b'|' if cuts && (i == 0 || b[i - 1] != b'>') => room = p.cut(i, i + 1),
                    b'&' if cuts && !redirect_amp(b, i) => room = p.cut(i, i + 1),
                    _ if word_start(b, i) => {
                        // `{ ` and `}` as words open and close a group
                        let blank_after = next.is_none_or(|c| c.is_ascii_whitespace());
                        if c == b'{' && blank_after {
                            set(&mut stack, parens, braces + 1);
                        } else if c == b'}' && (blank_after || next == Some(b';')) {
                            set(&mut stack, parens, braces.saturating_sub(1));
                        }
                        if cut_inner && let Some(len) = reserved_at(b, i) {
                            room = p.cut(i, i + len);
                            i += len;
                            if !room {
                                break;
                            }
                            continue;
                        }
                    }
                    _ => {}
                }
            }
            None => {}
        }
        if !room {
            break;
        }
        i += 1;
    }
    p.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outer(s: &str) -> Vec<&str> {
        split(s, false, MAX_PIECES)
            .into_iter()
            .map(|(_, p)| p.trim())
            .collect()
    }

    fn inner(s: &str) -> Vec<&str> {
        split(s, true, MAX_PIECES)
            .into_iter()
            .map(|(_, p)| p.trim())
            .collect()
    }

    #[test]
    fn cuts_at_separators() {
        assert_eq!(
            outer("a; b && c || d | e & f\ng"),
            ["a", "b", "c", "d", "e", "f", "g"]
        );
        assert_eq!(outer("a |& b;; c"), ["a", "b", "c"]);
        assert_eq!(outer(""), Vec::<&str>::new());
        assert_eq!(outer(" ;; \n "), Vec::<&str>::new());
        // offsets point into the text
        assert_eq!(split("ab; cd", false, 9), [(0, "ab"), (3, " cd")]);
    }

    #[test]
    fn redirections_are_not_separators() {
        assert_eq!(outer("rm -rf / 2>&1; x"), ["rm -rf / 2>&1", "x"]);
        assert_eq!(outer("a &> log; b &>> log"), ["a &> log", "b &>> log"]);
        assert_eq!(outer("a <&3 >| f"), ["a <&3 >| f"]);
    }

    #[test]
    fn quotes_and_escapes_hide_separators() {
        assert_eq!(
            outer("echo 'a; b' \"c && d\"; x"),
            ["echo 'a; b' \"c && d\"", "x"]
        );
        assert_eq!(outer("echo a\\;b\\|c; x"), ["echo a\\;b\\|c", "x"]);
        assert_eq!(outer("echo $'it\\'s; b'; x"), ["echo $'it\\'s; b'", "x"]);
        // an escaped `$` does not start `$'…'`
        assert_eq!(outer("echo \\$'a\\'; x"), ["echo \\$'a\\'", "x"]);
        // a backslash-newline joins lines
        assert_eq!(outer("ls \\\n -la; x"), ["ls \\\n -la", "x"]);
        // an unterminated quote keeps the rest (bash runs nothing after it either)
        assert_eq!(outer("a; echo \"b; c"), ["a", "echo \"b; c"]);
    }

    #[test]
    fn comments_end_at_the_line() {
        // the comment stays in its piece, where the parser skips it too
        assert_eq!(outer("a # b; c\nd"), ["a # b; c", "d"]);
        assert_eq!(outer("# all; of it"), ["# all; of it"]);
        // not at a word start: part of a word, so the cut after it stays
        assert_eq!(outer("echo a#b; c"), ["echo a#b", "c"]);
        assert_eq!(
            outer("[[ a =~ (a)# ]]; reboot"),
            ["[[ a =~ (a)# ]]", "reboot"]
        );
    }

    #[test]
    fn substitutions_and_groups_stay_whole_in_the_outer_pass() {
        assert_eq!(
            outer("echo $(a; b) \"$(c; \"d\")\" `e; f`; g"),
            ["echo $(a; b) \"$(c; \"d\")\" `e; f`", "g"]
        );
        assert_eq!(outer("(a; b) && { c; }; d"), ["(a; b)", "{ c; }", "d"]);
        assert_eq!(outer("diff <(a; b) >(c); d"), ["diff <(a; b) >(c)", "d"]);
        assert_eq!(outer("echo $((1 + (2))); d"), ["echo $((1 + (2)))", "d"]);
        // `${…}` and brace lists are no groups
        assert_eq!(outer("echo ${x}; {a,b}; d"), ["echo ${x}", "{a,b}", "d"]);
    }

    #[test]
    fn an_unbalanced_bracket_keeps_the_rest_for_the_inner_pass() {
        assert_eq!(outer("foo ((( ; echo hi"), ["foo ((( ; echo hi"]);
        assert_eq!(inner("foo ((( ; echo hi"), ["foo", "echo hi"]);
        // a case pattern's `)` closes the substitution early: more cuts, never fewer
        assert_eq!(
            outer("printf '%s' $(case x in x) printf hi;; esac)#x; reboot"),
            ["printf '%s' $(case x in x) printf hi", "esac)#x", "reboot"]
        );
    }

    #[test]
    fn the_inner_pass_cuts_inside_substitutions_groups_and_keywords() {
        assert_eq!(
            inner("echo \"$(reboot; ls)\" `halt` $(id)"),
            ["echo \"", "reboot", "ls", "\"", "halt", "id"]
        );
        assert_eq!(inner("(reboot; ls"), ["reboot", "ls"]);
        assert_eq!(inner("{ reboot; }"), ["reboot"]);
        assert_eq!(
            inner("if true; then reboot; fi; while x; do y; done"),
            ["true", "reboot", "x", "y"]
        );
        // only whole words are reserved
        assert_eq!(inner("done_list; iffy"), ["done_list", "iffy"]);
    }

    #[test]
    fn heredoc_bodies_stay_with_their_command() {
        let s = "cat <<EOF; a\nx; 'y\nEOF\nb";
        assert_eq!(outer(s), ["cat <<EOF; a\nx; 'y\nEOF", "b"]);
        // the inner pass keeps a closed body with its command too…
        assert_eq!(inner(s), ["cat <<EOF; a\nx; 'y\nEOF", "b"]);
        // …but reads one that never closes as commands (bash runs the rest as the body)
        assert_eq!(
            inner("cat <<EOF; a\nx; 'y\nEOD"),
            ["cat <<EOF", "a", "x", "'y", "EOD"]
        );
        assert_eq!(
            outer("bash <<-'E O'\n\treboot\n\tE O\nls"),
            ["bash <<-'E O'\n\treboot\n\tE O", "ls"]
        );
        assert_eq!(outer("cat <<< 'a;b'; c"), ["cat <<< 'a;b'", "c"]);
        // two heredocs on one line, read in order
        assert_eq!(
            outer("cat <<A <<B\na\nA\nb\nB\nc"),
            ["cat <<A <<B\na\nA\nb\nB", "c"]
        );
        // never closed: the body runs to the end
        assert_eq!(outer("bash <<E\nreboot; ls"), ["bash <<E\nreboot; ls"]);
        assert_eq!(inner("bash <<E\nreboot; ls"), ["bash <<E", "reboot", "ls"]);
    }

    #[test]
    fn the_cap_keeps_the_rest_in_the_last_piece() {
        let s = "a;".repeat(10) + "b";
        let p = split(&s, false, 4);
        assert_eq!(p.len(), 4);
        assert_eq!(p[3], (6, "a;a;a;a;a;a;a;b"));
        assert_eq!(split(&s, false, 0), Vec::<(usize, &str)>::new());
        assert_eq!(split("a; b", true, 1), [(0, "a; b")]);
    }

    #[test]
    fn never_panics_on_odd_bytes() {
        for s in [
            "\\", "'", "\"", "$", "$(", "`", "<<", "<<-", "<<'", "<<\\", "#", "é;ü", "a\\é;b",
            "$'\\", ")", "}", "{ ", "<<E\n", "<<E\nE", "\"$(\"",
        ] {
            split(s, false, MAX_PIECES);
            split(s, true, MAX_PIECES);
        }
    }
}
