//! How far a rule's match can reach from the keyword that woke it, so the scanner runs a rule's
//! regex only on a bounded window around each keyword hit instead of over the whole text.
//!
//! The reach is estimated from the pattern's syntax in characters: bounded repetitions count
//! fully, an unbounded one counts [`UNBOUNDED_REPEATS`] times, except runs of whitespace, which
//! count once because [`window`] also counts each run of whitespace in the text once (padding
//! an attack with spaces does not push it out of reach). Every rule example is checked through
//! the windowed search by the tests.

use regex_syntax::hir::{Class, Hir, HirKind};

/// How many times an unbounded repetition (`\w+`, `.*`) counts towards the reach.
pub const UNBOUNDED_REPEATS: usize = 24;
/// Bounds on a rule's reach, in characters.
pub const MIN_REACH: usize = 32;
pub const MAX_REACH: usize = 4096;
/// However much whitespace the text holds, a window walks at most this many bytes each way.
const MAX_WALK: usize = 64 * 1024;

/// The reach of `pattern` (compiled case-insensitively), or `MAX_REACH` if it does not parse.
pub fn reach(pattern: &str) -> usize {
    let hir = regex_syntax::ParserBuilder::new()
        .case_insensitive(true)
        .build()
        .parse(pattern);
    match hir {
        Ok(h) => chars(&h).clamp(MIN_REACH, MAX_REACH),
        Err(_) => MAX_REACH,
    }
}

fn chars(h: &Hir) -> usize {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => 0,
        HirKind::Literal(l) => String::from_utf8_lossy(&l.0).chars().count(),
        HirKind::Class(_) => 1,
        HirKind::Capture(c) => chars(&c.sub),
        HirKind::Concat(v) => v.iter().map(chars).fold(0, usize::saturating_add),
        HirKind::Alternation(v) => v.iter().map(chars).max().unwrap_or(0),
        HirKind::Repetition(r) => match r.max {
            Some(m) => chars(&r.sub).saturating_mul(m as usize),
            None if is_space_class(&r.sub) => 1,
            None => chars(&r.sub).saturating_mul(UNBOUNDED_REPEATS.max(r.min as usize)),
        },
    }
}

fn is_space_class(h: &Hir) -> bool {
    match h.kind() {
        HirKind::Class(Class::Unicode(c)) => c
            .ranges()
            .iter()
            .all(|r| r.start().is_whitespace() && r.end().is_whitespace()),
        HirKind::Class(Class::Bytes(c)) => c
            .ranges()
            .iter()
            .all(|r| r.start().is_ascii_whitespace() && r.end().is_ascii_whitespace()),
        _ => false,
    }
}

/// For ASCII text whose longest whitespace run is short, the number of bytes one counted
/// character can span (that run length, at least 1); `None` otherwise. With it a window is
/// computed in constant time ([`window_in`]) instead of by walking.
pub fn stretch(text: &str) -> Option<usize> {
    if !text.is_ascii() {
        return None;
    }
    let b = text.as_bytes();
    let (mut run, mut max) = (0usize, 1usize);
    // Eight bytes at a time: which of them are whitespace, as an 8-bit mask (bit i for byte i),
    // then the runs it holds from a table.
    let mut chunks = b.chunks_exact(8);
    for ch in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(ch);
        let m = space_mask(u64::from_le_bytes(w));
        if m == 0xFF {
            run += 8;
            max = max.max(run);
            continue;
        }
        let r = RUNS[usize::from(m)];
        max = max.max(run + usize::from(r.lead)).max(usize::from(r.inner));
        run = usize::from(r.trail);
    }
    for &c in chunks.remainder() {
        if c.is_ascii_whitespace() {
            run += 1;
            max = max.max(run);
        } else {
            run = 0;
        }
    }
    (max <= 8).then_some(max)
}

/// Bit `i` set when byte `i` (little-endian) of `x`, all of whose bytes are ASCII, is ASCII
/// whitespace (`u8::is_ascii_whitespace`: space, tab, line feed, form feed, carriage return).
fn space_mask(x: u64) -> u8 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LOW: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    // High bit of each byte set where the byte equals `c`.
    let eq = |c: u8| {
        let y = x ^ (ONES * u64::from(c));
        !(((y & LOW) + LOW) | y) & HIGH
    };
    // Bytes in 0x09..=0x0D (tab to carriage return), for bytes below 0x80 (no carries).
    let ge = |c: u8| (x + ONES * u64::from(0x80 - c)) & HIGH;
    let controls = ge(0x09) & !ge(0x0E) & !eq(0x0B);
    let m = (controls | eq(b' ')) >> 7;
    // Gather bit 8i into bit i.
    ((m.wrapping_mul(0x0102_0408_1020_4080)) >> 56) as u8
}

/// For an 8-bit whitespace mask (not all ones): the whitespace run at its low end, at its high
/// end, and the longest run in it.
#[derive(Clone, Copy)]
struct Runs {
    lead: u8,
    trail: u8,
    inner: u8,
}

static RUNS: [Runs; 256] = {
    let mut t = [Runs {
        lead: 0,
        trail: 0,
        inner: 0,
    }; 256];
    let mut m = 0;
    while m < 256 {
        let (mut lead, mut trail, mut inner, mut run) = (0u8, 0u8, 0u8, 0u8);
        let mut i = 0;
        let mut leading = true;
        while i < 8 {
            if m & (1 << i) != 0 {
                run += 1;
                if run > inner {
                    inner = run;
                }
                if leading {
                    lead += 1;
                }
            } else {
                run = 0;
                leading = false;
            }
            i += 1;
        }
        let mut i = 8;
        while i > 0 && m & (1 << (i - 1)) != 0 {
            trail += 1;
            i -= 1;
        }
        t[m] = Runs { lead, trail, inner };
        m += 1;
    }
    t
};

/// [`window`], in constant time when `stretch` (from [`stretch`]) is known: `reach` counted
/// characters span at most `reach * stretch` bytes, so that byte window holds the exact one.
pub fn window_in(
    text: &str,
    stretch: Option<usize>,
    kw_start: usize,
    kw_end: usize,
    reach: usize,
) -> (usize, usize) {
    let Some(k) = stretch else {
        return window(text, kw_start, kw_end, reach);
    };
    let b = text.as_bytes();
    let s = kw_start.saturating_sub(reach * k);
    let mut e = (kw_end + reach * k).min(b.len());
    let stop = (e + 64).min(b.len());
    while e < stop && (b[e].is_ascii_alphanumeric() || b[e] == b'_') {
        e += 1;
    }
    (s, e)
}

/// The window `[start, end)` of `text` that holds every match of a rule with reach `reach`
/// containing the keyword at `kw_start..kw_end`: `reach` characters each way (each run of
/// whitespace counting once), on char boundaries, the end moved past the rest of a word so a
/// `\b` at the window's end is real.
pub fn window(text: &str, kw_start: usize, kw_end: usize, reach: usize) -> (usize, usize) {
    let b = text.as_bytes();
    // What one byte costs: continuation bytes and the rest of a whitespace run are free.
    let cost = |c: u8, in_space: bool| {
        u8::from(c & 0xC0 != 0x80 && !(in_space && c.is_ascii_whitespace()))
    };
    let mut s = kw_start;
    let mut left = reach;
    let mut in_space = false;
    while s > 0 && kw_start - s < MAX_WALK {
        let c = b[s - 1];
        let k = usize::from(cost(c, in_space));
        if k > left {
            break;
        }
        left -= k;
        s -= 1;
        if c & 0xC0 != 0x80 {
            in_space = c.is_ascii_whitespace();
        }
    }
    // Continuation bytes of a character whose first byte stayed outside are left out.
    while !text.is_char_boundary(s) {
        s += 1;
    }
    let mut e = kw_end;
    let mut left = reach;
    let mut in_space = false;
    while e < b.len() && e - kw_end < MAX_WALK {
        let c = b[e];
        let k = usize::from(cost(c, in_space));
        if k > left {
            break;
        }
        left -= k;
        e += 1;
        if c & 0xC0 != 0x80 {
            in_space = c.is_ascii_whitespace();
        }
    }
    let stop = (e + 64).min(b.len());
    while e < stop && (b[e].is_ascii_alphanumeric() || b[e] == b'_' || b[e] >= 0x80) {
        e += 1;
    }
    while !text.is_char_boundary(e) {
        e += 1;
    }
    (s, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reach_follows_the_pattern() {
        assert_eq!(reach(r"\bfoo\s+bar\b"), MIN_REACH);
        assert_eq!(reach(r"a.{0,100}b"), 102);
        assert_eq!(reach(r"(?:\w+\s+){0,2}x"), 2 * (UNBOUNDED_REPEATS + 1) + 1);
        assert_eq!(reach(r".{0,9000}"), MAX_REACH);
        assert_eq!(reach("("), MAX_REACH);
    }

    #[test]
    fn constant_time_window_covers_the_walked_one() {
        let t = "one two  three\n\nfour five KEY six seven  eight nine";
        let k = t.find("KEY").unwrap();
        let st = stretch(t);
        assert_eq!(st, Some(2));
        for reach in [1, 3, 8, 40] {
            let (ws, we) = window(t, k, k + 3, reach);
            let (fs, fe) = window_in(t, st, k, k + 3, reach);
            assert!(fs <= ws && fe >= we, "reach {reach}");
        }
        assert_eq!(stretch("a\u{e9}"), None);
        // Runs across and inside eight-byte chunks, every ASCII whitespace byte but \x0B.
        let slow = |t: &str| {
            let (mut run, mut max) = (0usize, 1usize);
            for c in t.bytes() {
                run = if c.is_ascii_whitespace() { run + 1 } else { 0 };
                max = max.max(run);
            }
            (max <= 8).then_some(max)
        };
        let pieces = [
            "a", "bb", " ", "\t", "\n", "\r", "\x0b", "\x0c", "  ", "xyz", "       ",
        ];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..5000 {
            let mut t = String::new();
            for _ in 0..(seed % 30) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                t.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            }
            assert_eq!(stretch(&t), slow(&t), "{t:?}");
            seed = seed.wrapping_add(1);
        }
        assert_eq!(stretch(&format!("a{}b", " ".repeat(9))), None);
    }

    #[test]
    fn window_counts_characters_and_space_runs_once() {
        let t = "aaaa          bbbb KEY cccc";
        let k = t.find("KEY").unwrap();
        let (s, e) = window(t, k, k + 3, 6);
        assert_eq!(&t[s..e], &t[4..]);
        let t = "éé KEY xyzzy";
        let (s, e) = window(t, 5, 8, 2);
        assert_eq!(&t[s..e], "é KEY xyzzy");
    }
}
