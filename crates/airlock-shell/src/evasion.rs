//! Checks on the raw bytes of a line, before parsing: NUL bytes, terminal escape sequences and
//! control characters (what a terminal shows may differ from what runs), invisible and bidi
//! characters, and look-alike letters in command words (folded to ASCII so rules still apply).

/// What the raw input contains that a person reading it on a terminal might not see.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RawFlags {
    pub nul: bool,
    /// ESC, C1 controls, lone carriage returns, backspace and other C0 controls.
    pub control: Option<usize>,
    /// Zero-width, bidi-control or Unicode tag characters.
    pub invisible: Option<usize>,
}

pub fn scan_raw(s: &str) -> RawFlags {
    let mut f = RawFlags::default();
    if s.is_ascii() {
        for (i, b) in s.bytes().enumerate() {
            match b {
                0 => f.nul = true,
                // CR LF is an ordinary line end; a lone CR can overwrite what was shown
                b'\r' if s.as_bytes().get(i + 1) == Some(&b'\n') => {}
                b'\t' | b'\n' => {}
                0x01..=0x1f | 0x7f => {
                    f.control.get_or_insert(i);
                }
                _ => {}
            }
        }
        return f;
    }
    let mut prev_cr = None;
    for (i, c) in s.char_indices() {
        if let Some(at) = prev_cr.take()
            && c != '\n'
            && f.control.is_none()
        {
            f.control = Some(at);
        }
        match c {
            '\0' => f.nul = true,
            '\r' => prev_cr = Some(i),
            '\t' | '\n' => {}
            '\u{1}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => {
                f.control.get_or_insert(i);
            }
            _ if is_invisible(c) => {
                f.invisible.get_or_insert(i);
            }
            _ => {}
        }
    }
    if let Some(at) = prev_cr
        && f.control.is_none()
    {
        f.control = Some(at);
    }
    f
}

/// The delimiter of the first `<<` / `<<-` heredoc whose end line never comes, if any. A cheap,
/// deliberately loose reading (quotes around the delimiter are dropped; `<<<` is a here-string):
/// it only decides whether the parser may see the text.
pub fn unterminated_heredoc(s: &str) -> Option<String> {
    if !s.contains("<<") {
        return None;
    }
    let b = s.as_bytes();
    let mut i = 0;
    while let Some(off) = s[i..].find("<<") {
        let at = i + off;
        let mut j = at + 2;
        // `<<` inside `((…))` or `$((…))` is a left shift
        let before = &s[..at];
        if before.matches("((").count() > before.matches("))").count() {
            i = j;
            continue;
        }
        if b.get(j) == Some(&b'<') {
            // here-string
            i = j + 1;
            continue;
        }
        let strip_tabs = b.get(j) == Some(&b'-');
        if strip_tabs {
            j += 1;
        }
        while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
            j += 1;
        }
        let start = j;
        while j < b.len()
            && !matches!(
                b[j],
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')'
            )
        {
            // a quoted part of the delimiter may hold blanks: `<<"END OF"`
            if matches!(b[j], b'\'' | b'"') {
                let q = b[j];
                j += 1;
                while j < b.len() && b[j] != q {
                    j += 1;
                }
            }
            j += 1;
        }
        let j = j.min(b.len());
        let word: String = s[start..j]
            .chars()
            .filter(|c| !matches!(c, '\'' | '"' | '\\'))
            .collect();
        if word.is_empty() {
            return Some(String::new());
        }
        let rest = &s[j..];
        let closed = rest.lines().skip(1).any(|line| {
            let line = if strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line
            };
            line == word || line.strip_suffix('\r') == Some(&word)
        });
        if !closed {
            return Some(word);
        }
        i = j;
    }
    None
}

/// bash starts a comment only where a word starts; brush-parser 0.4 also takes a `#` right
/// after `)` inside a word (`<(x)#y; reboot`, `a=(x)#y; reboot`) as a comment and loses what
/// follows. Returns the line with every such `#` outside quotes replaced by `_`, so the walker
/// can analyse what bash would really run; `None` when there is none.
pub fn midword_hash_variant(s: &str) -> Option<String> {
    if !s.contains(")#") {
        return None;
    }
    let bytes = s.as_bytes();
    let mut out = bytes.to_vec();
    let (mut single, mut double, mut escaped) = (false, false, false);
    // for each open parenthesis: does it open a part of a word (`<(`, `>(`, `$(`, `=(`, extglob)
    // rather than a subshell, a function's `()` or arithmetic?
    let mut opens: Vec<bool> = Vec::new();
    // open `case` clauses, innermost last: the `)` that ends a pattern is an operator, so a `#`
    // right after it starts a comment in bash too (`x)# note; cmd` runs nothing on that line)
    let mut cases: Vec<Case> = Vec::new();
    let mut changed = false;
    for (i, &b) in bytes.iter().enumerate() {
        if escaped {
            escaped = false;
            continue;
        }
        match b {
            b'\\' if !single => escaped = true,
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            _ if single || double => {}
            b'(' => {
                let prev = if i > 0 { bytes[i - 1] } else { b' ' };
                let word_part = matches!(
                    prev,
                    b'<' | b'>' | b'$' | b'=' | b'@' | b'?' | b'*' | b'+' | b'!'
                );
                // the optional `(` before a case pattern belongs to the clause's syntax
                let leading = matches!(cases.last(), Some(Case::Pattern(d)) if *d == opens.len())
                    && !word_part
                    && bytes[..i]
                        .iter()
                        .rev()
                        .find(|c| !c.is_ascii_whitespace())
                        .is_none_or(|c| matches!(c, b';' | b'&' | b'n'));
                if !leading {
                    opens.push(word_part);
                }
            }
            b')' => {
                if let Some(Case::Pattern(d)) = cases.last()
                    && *d == opens.len()
                {
                    if let Some(top) = cases.last_mut() {
                        *top = Case::Body;
                    }
                    continue;
                }
                // a `)` with nothing open is judged as part of a word: the careful reading
                // when unsure
                let in_word = opens.pop().unwrap_or(true);
                if in_word && bytes.get(i + 1) == Some(&b'#') {
                    out[i + 1] = b'_';
                    changed = true;
                }
            }
            b';' if matches!(cases.last(), Some(Case::Body))
                && matches!(bytes.get(i + 1), Some(b';' | b'&'))
                && (i == 0 || bytes[i - 1] != b';') =>
            {
                if let Some(top) = cases.last_mut() {
                    *top = Case::Pattern(opens.len());
                }
            }
            _ if starts_word(bytes, i) => match word_at(bytes, i) {
                b"case" => cases.push(Case::Subject),
                b"in" if matches!(cases.last(), Some(Case::Subject)) => {
                    if let Some(top) = cases.last_mut() {
                        *top = Case::Pattern(opens.len());
                    }
                }
                b"esac" if matches!(cases.last(), Some(Case::Body | Case::Pattern(_))) => {
                    cases.pop();
                }
                _ => {}
            },
            _ => {}
        }
    }
    if !changed {
        return None;
    }
    String::from_utf8(out).ok()
}

/// Where a `case` clause is, for [`midword_hash_variant`].
#[derive(Clone, Copy)]
enum Case {
    /// Between `case` and `in`.
    Subject,
    /// Reading a pattern; the number of parentheses open when it started.
    Pattern(usize),
    /// The commands after a pattern, up to `;;`.
    Body,
}

fn starts_word(bytes: &[u8], i: usize) -> bool {
    i == 0
        || matches!(
            bytes[i - 1],
            b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')'
        )
}

/// The unquoted word starting at `i`, up to a blank or an operator.
fn word_at(bytes: &[u8], i: usize) -> &[u8] {
    let end = bytes[i..]
        .iter()
        .position(|c| {
            matches!(
                c,
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
            )
        })
        .map_or(bytes.len(), |n| i + n);
    &bytes[i..end]
}

/// Zero-width, bidi-control, tag and other default-ignorable characters.
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00ad}' | '\u{034f}' | '\u{061c}' | '\u{115f}' | '\u{1160}' | '\u{17b4}' | '\u{17b5}'
        | '\u{180b}'..='\u{180f}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{206f}' | '\u{3164}' | '\u{fe00}'..='\u{fe0f}' | '\u{feff}'
        | '\u{ffa0}' | '\u{fff0}'..='\u{fff8}' | '\u{e0000}'..='\u{e0fff}')
}

/// Folds look-alike letters (Cyrillic, Greek, fullwidth) to ASCII and drops invisible
/// characters. Returns `None` when the word has nothing to fold.
pub fn fold_confusables(word: &str) -> Option<String> {
    if word.is_ascii() {
        return None;
    }
    let mut out = String::with_capacity(word.len());
    for c in word.chars() {
        if is_invisible(c) {
            continue;
        }
        let m = match c {
            'а' | 'α' => 'a',
            'с' | 'ϲ' => 'c',
            'е' | 'ε' => 'e',
            'һ' => 'h',
            'і' | 'ι' => 'i',
            'ј' => 'j',
            'к' | 'κ' => 'k',
            'м' => 'm',
            'о' | 'ο' | 'σ' => 'o',
            'р' | 'ρ' => 'p',
            'ԛ' => 'q',
            'г' => 'r',
            'ѕ' => 's',
            'т' | 'τ' => 't',
            'υ' => 'u',
            'ѵ' | 'ν' => 'v',
            'ԝ' => 'w',
            'х' | 'χ' => 'x',
            'у' | 'γ' => 'y',
            'ԁ' => 'd',
            'ɡ' => 'g',
            'ӏ' => 'l',
            'п' => 'n',
            'А' | 'Α' => 'A',
            'В' | 'Β' => 'B',
            'С' => 'C',
            'Е' | 'Ε' => 'E',
            'Н' | 'Η' => 'H',
            'І' | 'Ι' => 'I',
            'К' | 'Κ' => 'K',
            'М' | 'Μ' => 'M',
            'О' | 'Ο' => 'O',
            'Р' | 'Ρ' => 'P',
            'Т' | 'Τ' => 'T',
            'Х' | 'Χ' => 'X',
            'Ү' | 'Υ' => 'Y',
            'Ζ' => 'Z',
            '‐' | '‑' | '‒' | '–' | '—' | '−' => '-',
            '／' => '/',
            c if ('\u{ff01}'..='\u{ff5e}').contains(&c) => {
                char::from_u32(c as u32 - 0xfee0).unwrap_or(c)
            }
            // mathematical alphanumerics (`𝐫𝐦`, `𝚛𝚖`, `𝟏`): 13 alphabets of 52 letters, then
            // five sets of ten digits; bash runs none of them, but a reader sees the letters
            c if ('\u{1d400}'..='\u{1d6a3}').contains(&c) => {
                let off = (c as u32 - 0x1d400) % 52;
                let base = if off < 26 {
                    b'A' as u32
                } else {
                    b'a' as u32 - 26
                };
                char::from_u32(base + off).unwrap_or(c)
            }
            c if ('\u{1d7ce}'..='\u{1d7ff}').contains(&c) => {
                char::from_u32(b'0' as u32 + (c as u32 - 0x1d7ce) % 10).unwrap_or(c)
            }
            // the letters those alphabets leave to the letter-like block, and circled letters
            'ℎ' => 'h',
            'ℊ' => 'g',
            'ℯ' => 'e',
            'ℴ' => 'o',
            c if ('\u{24d0}'..='\u{24e9}').contains(&c) => {
                char::from_u32(b'a' as u32 + (c as u32 - 0x24d0)).unwrap_or(c)
            }
            c if ('\u{24b6}'..='\u{24cf}').contains(&c) => {
                char::from_u32(b'A' as u32 + (c as u32 - 0x24b6)).unwrap_or(c)
            }
            c => c,
        };
        out.push(m);
    }
    (out != word).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_controls() {
        assert!(scan_raw("ls\0").nul);
        assert_eq!(scan_raw("echo \x1b[2Jx").control, Some(5));
        assert_eq!(scan_raw("ls\r\n").control, None);
        assert_eq!(scan_raw("rm -rf /\recho hi").control, Some(8));
        assert_eq!(scan_raw("ls\u{200b}").invisible, Some(2));
        assert_eq!(scan_raw("echo ünïcode").control, None);
    }

    #[test]
    fn finds_hashes_the_parser_misreads() {
        assert_eq!(
            midword_hash_variant("printf <(printf hi)#x; reboot").as_deref(),
            Some("printf <(printf hi)_x; reboot")
        );
        assert_eq!(midword_hash_variant("echo ')#x'"), None);
        assert_eq!(midword_hash_variant("(printf SAFE)# comment; reboot"), None);
        assert_eq!(midword_hash_variant("((1 + 2))# c; reboot"), None);
        assert_eq!(
            midword_hash_variant("a=(SAFE)#x; reboot").as_deref(),
            Some("a=(SAFE)_x; reboot")
        );
        assert_eq!(midword_hash_variant("ls # comment"), None);
        // the `)` ending a case pattern is an operator: the `#` after it starts a comment
        assert_eq!(
            midword_hash_variant("case $1 in a)# note; reboot\necho ok;; esac"),
            None
        );
        assert_eq!(
            midword_hash_variant("case $1 in (a|b)#x; reboot\n;; c)#y; reboot\n;; esac"),
            None
        );
        // …but the `)` of a substitution holding a case clause is part of a word
        assert_eq!(
            midword_hash_variant("echo $(case a in a) echo x;; esac)#y; reboot").as_deref(),
            Some("echo $(case a in a) echo x;; esac)_y; reboot")
        );
        assert_eq!(
            midword_hash_variant("case a in a) echo <(ls)#y; reboot;; esac").as_deref(),
            Some("case a in a) echo <(ls)_y; reboot;; esac")
        );
    }

    #[test]
    fn finds_unterminated_heredocs() {
        assert_eq!(unterminated_heredoc("cat <<EOF\nx\nEOF"), None);
        assert_eq!(unterminated_heredoc("cat <<-'EOF'\n\tx\n\tEOF\n"), None);
        assert_eq!(unterminated_heredoc("cat <<< 'x'"), None);
        assert_eq!(
            unterminated_heredoc("python3 << \"EOF SPACE\"\nprint(1)\nEOF SPACE"),
            None
        );
        assert_eq!(unterminated_heredoc("cat <<EOF\nx").as_deref(), Some("EOF"));
        assert_eq!(unterminated_heredoc("$( <<-x").as_deref(), Some("x"));
        assert_eq!(unterminated_heredoc("echo $((1<<2))"), None);
        assert_eq!(
            unterminated_heredoc("(( x = 1 << 3 )); cat <<E\ny").as_deref(),
            Some("E")
        );
    }

    #[test]
    fn folds_lookalikes() {
        assert_eq!(fold_confusables("rм").as_deref(), Some("rm"));
        assert_eq!(fold_confusables("ｒｍ").as_deref(), Some("rm"));
        assert_eq!(fold_confusables("r\u{200b}m").as_deref(), Some("rm"));
        assert_eq!(fold_confusables("rm"), None);
    }
}
