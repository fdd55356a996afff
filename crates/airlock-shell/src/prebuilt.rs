//! Regex trees built ahead of time: `build.rs` parses each built-in pattern's ASCII form and
//! encodes the tree as a postfix program; [`decode`] rebuilds it with regex-syntax's own
//! constructors, which costs a small fraction of parsing the pattern text again.
//!
//! The program format (written by `encode` in `build.rs`): children first, then the node. `E`
//! empty, `L` n bytes (a literal), `B` n (lo, hi) byte ranges, `U` n (lo, hi) u32 scalar
//! ranges, `K` look-around repr, `R` min max greedy (a repetition of the node below), `C` index
//! name-length name (a capture), `S` n (concatenation of the n nodes below), `A` n
//! (alternation). Numbers are u32 little-endian; `u32::MAX` means "none". A malformed program
//! decodes to `None` and the caller parses the pattern instead.

use regex_syntax::hir::{
    Capture, Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange, Hir, Look,
    Repetition,
};

struct Reader<'a> {
    code: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.code.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn bytes(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.code.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }

    fn u32(&mut self) -> Option<u32> {
        let b = self.bytes(4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn len(&mut self) -> Option<usize> {
        usize::try_from(self.u32()?).ok()
    }

    fn opt(&mut self) -> Option<Option<u32>> {
        let n = self.u32()?;
        Some((n != u32::MAX).then_some(n))
    }
}

/// Rebuilds the tree `code` encodes; `None` when the program is malformed.
pub fn decode(code: &[u8]) -> Option<Hir> {
    let mut r = Reader { code, at: 0 };
    let mut stack: Vec<Hir> = Vec::new();
    // pops the top `n` nodes in their original order
    fn take(stack: &mut Vec<Hir>, n: usize) -> Option<Vec<Hir>> {
        let from = stack.len().checked_sub(n)?;
        Some(stack.split_off(from))
    }
    while let Some(op) = r.byte() {
        let node = match op {
            b'E' => Hir::empty(),
            b'L' => {
                let n = r.len()?;
                Hir::literal(r.bytes(n)?)
            }
            b'B' => {
                let n = r.len()?;
                let pairs = r.bytes(n.checked_mul(2)?)?;
                Hir::class(Class::Bytes(ClassBytes::new(
                    pairs
                        .chunks_exact(2)
                        .map(|p| ClassBytesRange::new(p[0], p[1])),
                )))
            }
            b'U' => {
                let n = r.len()?;
                let mut ranges = Vec::with_capacity(n.min(4096));
                for _ in 0..n {
                    let lo = char::from_u32(r.u32()?)?;
                    let hi = char::from_u32(r.u32()?)?;
                    ranges.push(ClassUnicodeRange::new(lo, hi));
                }
                Hir::class(Class::Unicode(ClassUnicode::new(ranges)))
            }
            b'K' => Hir::look(Look::from_repr(r.u32()?)?),
            b'R' => {
                let min = r.u32()?;
                let max = r.opt()?;
                let greedy = r.byte()? != 0;
                let sub = Box::new(stack.pop()?);
                Hir::repetition(Repetition {
                    min,
                    max,
                    greedy,
                    sub,
                })
            }
            b'C' => {
                let index = r.u32()?;
                let name = match r.opt()? {
                    Some(n) => {
                        let n = usize::try_from(n).ok()?;
                        Some(Box::from(std::str::from_utf8(r.bytes(n)?).ok()?))
                    }
                    None => None,
                };
                let sub = Box::new(stack.pop()?);
                Hir::capture(Capture { index, name, sub })
            }
            b'S' => {
                let n = r.len()?;
                Hir::concat(take(&mut stack, n)?)
            }
            b'A' => {
                let n = r.len()?;
                Hir::alternation(take(&mut stack, n)?)
            }
            _ => return None,
        };
        stack.push(node);
    }
    match (stack.pop(), stack.is_empty()) {
        (Some(h), true) => Some(h),
        _ => None,
    }
}

/// The ASCII form of `pattern` (Unicode off, bytes mode): from `code` when there is one,
/// else parsed. On a text of ASCII bytes it matches exactly when `pattern` does: every
/// character class keeps the same ASCII members (`\S`, `\w`, `[^/]`, `.`, `(?i)k` differ only
/// in characters above U+007F), and the text has none. `None` when the ASCII form does not
/// exist (`\p{…}`, say).
pub fn ascii_hir(pattern: &str, code: Option<&[u8]>) -> Option<Hir> {
    if let Some(h) = code.and_then(decode) {
        return Some(h);
    }
    regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .build()
        .parse(pattern)
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::BUILTIN_TABLE;

    fn parsed(p: &str) -> Hir {
        regex_syntax::ParserBuilder::new()
            .unicode(false)
            .utf8(false)
            .build()
            .parse(p)
            .unwrap()
    }

    #[test]
    fn every_builtin_program_rebuilds_the_parsed_tree() {
        let mut n = 0;
        for r in BUILTIN_TABLE {
            for (p, code) in [
                (Some(r.pattern()), r.ascii()),
                (r.unless(), r.unless_ascii()),
            ] {
                let (Some(p), Some(code)) = (p, code) else {
                    continue;
                };
                assert_eq!(decode(code), Some(parsed(p)), "{}: {p}", r.full_id());
                n += 1;
            }
        }
        assert!(n > 200, "only {n} programs");
    }

    #[test]
    fn malformed_programs_decode_to_none() {
        for code in [
            &b""[..],
            b"X",
            b"L\x05\x00\x00\x00ab",
            b"R\x00\x00\x00\x00\xff\xff\xff\xff\x01",
            b"S\x02\x00\x00\x00",
            b"EE",
            b"K\x00\x00\x00\x00",
            b"U\x01\x00\x00\x00\x00\xd8\x00\x00\x00\xd8\x00\x00",
        ] {
            assert_eq!(decode(code), None, "{code:?}");
        }
    }
}
