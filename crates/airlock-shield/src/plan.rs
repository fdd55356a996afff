//! How the scanner runs one rule, derived from its pattern's syntax and its keywords.
//!
//! A rule's pattern is split at its top-level alternation into branches. A branch whose every
//! match *starts* with one of the rule's keywords (read from the branch's prefix literals) is
//! **anchored**: the scanner tries it once at each keyword hit, a search that stops as soon as
//! the text stops fitting (a few bytes on prose), however common the keyword. The other branches
//! are **windowed**: searched on a window around each keyword hit as wide as their reach, and
//! woken only by the keywords that every match of theirs must contain, where the syntax shows
//! such a set (else by all the rule's keywords).
//!
//! A keyword that begins with a letter or digit only counts at the start of a word (the
//! prefilter drops "ai" inside "said"), so a keyword covers a literal only where the pattern puts
//! a word boundary (or a run of non-word characters) just before it.

use regex_syntax::ast::Ast;
use regex_syntax::hir::literal::{ExtractKind, Extractor, Seq};
use regex_syntax::hir::{Class, Hir, HirKind, Look};

/// What the scanner runs for one rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Branches (pattern source) tried anchored at keyword hits.
    pub anchored: Vec<String>,
    /// Keywords (indices into the rule's list) whose hits start an anchored attempt.
    pub anchored_wake: Vec<usize>,
    /// Groups of branches searched in windows, each with the keywords whose hits open one: the
    /// branches whose matches must hold a keyword the syntax shows, then the rest (woken by
    /// every keyword of the rule).
    pub windowed: Vec<(Vec<String>, Vec<usize>)>,
}

/// Splits `pattern` (compiled case-insensitively) for a rule with `keywords` (lowercase).
/// Falls back to one windowed branch woken by every keyword whenever the syntax is not plain.
pub fn plan(pattern: &str, keywords: &[String]) -> Plan {
    let all: Vec<usize> = (0..keywords.len()).collect();
    let whole = Plan {
        anchored: Vec::new(),
        anchored_wake: Vec::new(),
        windowed: vec![(vec![pattern.to_string()], all.clone())],
    };
    let Some(branches) = branches(pattern) else {
        return whole;
    };
    let mut p = Plan {
        anchored: Vec::new(),
        anchored_wake: Vec::new(),
        windowed: Vec::new(),
    };
    let (mut covered, mut cover_wake, mut rest) = (Vec::new(), Vec::new(), Vec::new());
    for b in branches {
        let Ok(hir) = regex_syntax::ParserBuilder::new().build().parse(b) else {
            return whole;
        };
        let hir = squash_space(&hir);
        if let Some(wake) = anchor_cover(&hir, keywords) {
            p.anchored.push(b.to_string());
            p.anchored_wake.extend(wake);
            continue;
        }
        match cover(&hir, keywords, false) {
            Some(c) => {
                covered.push(b.to_string());
                cover_wake.extend(c);
            }
            None => rest.push(b.to_string()),
        }
    }
    p.anchored_wake.sort_unstable();
    p.anchored_wake.dedup();
    cover_wake.sort_unstable();
    cover_wake.dedup();
    if !covered.is_empty() {
        p.windowed.push((covered, cover_wake));
    }
    if !rest.is_empty() {
        p.windowed.push((rest, all));
    }
    p
}

/// The pattern's top-level branches as source slices, or `None` when splitting could change
/// what it means (a bare flag group such as `(?i)` that reaches across branches).
fn branches(pattern: &str) -> Option<Vec<&str>> {
    let ast = regex_syntax::ast::parse::Parser::new()
        .parse(pattern)
        .ok()?;
    let parts: Vec<&Ast> = match &ast {
        Ast::Alternation(a) => a.asts.iter().collect(),
        other => vec![other],
    };
    let mut out = Vec::new();
    for a in parts {
        let bare_flags = match a {
            Ast::Flags(_) => true,
            Ast::Concat(c) => c.asts.iter().any(|x| matches!(x, Ast::Flags(_))),
            _ => false,
        };
        if bare_flags {
            return None;
        }
        let sp = a.span();
        out.push(pattern.get(sp.start.offset..sp.end.offset)?);
    }
    Some(out)
}

/// `hir` with every run of one or more whitespace characters (`\s+`) read as one space: the
/// prefilter reads each run of ASCII whitespace in the text as one space (and normalisation
/// turns other whitespace into spaces), so a keyword "care about" is found in "care\n about".
fn squash_space(h: &Hir) -> Hir {
    match h.kind() {
        HirKind::Repetition(r)
            if r.min >= 1
                && r.max.is_none()
                && matches!(r.sub.kind(), HirKind::Class(c) if only_space(c)) =>
        {
            Hir::literal(*b" ")
        }
        HirKind::Repetition(r) => Hir::repetition(regex_syntax::hir::Repetition {
            min: r.min,
            max: r.max,
            greedy: r.greedy,
            sub: Box::new(squash_space(&r.sub)),
        }),
        HirKind::Capture(c) => Hir::capture(regex_syntax::hir::Capture {
            index: c.index,
            name: c.name.clone(),
            sub: Box::new(squash_space(&c.sub)),
        }),
        HirKind::Concat(v) => Hir::concat(v.iter().map(squash_space).collect()),
        HirKind::Alternation(v) => Hir::alternation(v.iter().map(squash_space).collect()),
        _ => h.clone(),
    }
}

/// True for a class of whitespace that holds the space (`\s`, `[ \t]`).
fn only_space(c: &Class) -> bool {
    match c {
        Class::Unicode(u) => {
            u.ranges()
                .iter()
                .any(|r| r.start() <= ' ' && ' ' <= r.end())
                && u.ranges().iter().all(|r| {
                    (r.end() as u32) - (r.start() as u32) < 64
                        && (r.start()..=r.end()).all(char::is_whitespace)
                })
        }
        Class::Bytes(b) => {
            b.ranges()
                .iter()
                .any(|r| r.start() <= b' ' && b' ' <= r.end())
                && b.ranges()
                    .iter()
                    .all(|r| (r.start()..=r.end()).all(|x| x.is_ascii_whitespace()))
        }
    }
}

fn prefixes(h: &Hir) -> Seq {
    let mut e = Extractor::new();
    e.kind(ExtractKind::Prefix)
        .limit_class(4)
        .limit_repeat(4)
        .limit_literal_len(64)
        .limit_total(512);
    e.extract(h)
}

/// For each literal of `seq`, a keyword it starts with (`inside`: or holds at a word start
/// inside it); a keyword starting with a word character counts at the literal's start only when
/// `word_start` (the text before the literal is known to end a word). `None` if some literal has
/// none or the set is infinite.
fn seq_cover(seq: &Seq, keywords: &[String], word_start: bool, inside: bool) -> Option<Vec<usize>> {
    let lits = seq.literals()?;
    if lits.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(lits.len());
    for l in lits {
        let low = l.as_bytes().to_ascii_lowercase();
        let k = keywords.iter().position(|k| {
            let kb = k.as_bytes();
            let Some(&first) = kb.first() else {
                return false;
            };
            let word = first.is_ascii_alphanumeric();
            if low.starts_with(kb) && (word_start || !word) {
                return true;
            }
            inside
                && (1..low.len()).any(|p| {
                    low[p..].starts_with(kb)
                        && (!word || !(low[p - 1].is_ascii_alphanumeric() || low[p - 1] == b'_'))
                })
        })?;
        out.push(k);
    }
    Some(out)
}

/// Keywords of which every match of `h` contains one (at a word start where that matters),
/// from its structure; `word_start`: the text before `h`'s match is known to end a word.
fn cover(h: &Hir, keywords: &[String], word_start: bool) -> Option<Vec<usize>> {
    if let Some(c) = seq_cover(&prefixes(h), keywords, word_start, true) {
        return Some(c);
    }
    match h.kind() {
        HirKind::Capture(c) => cover(&c.sub, keywords, word_start),
        HirKind::Repetition(r) if r.min >= 1 => cover(&r.sub, keywords, word_start),
        HirKind::Alternation(v) => {
            let mut acc = Vec::new();
            for x in v {
                acc.extend(cover(x, keywords, word_start)?);
            }
            Some(acc)
        }
        HirKind::Concat(v) => {
            let mut ctx = word_start;
            for x in v {
                if let Some(c) = cover(x, keywords, ctx) {
                    return Some(c);
                }
                ctx = ends_word(x, ctx);
            }
            None
        }
        _ => None,
    }
}

/// When every match of `h` starts with a keyword hit, the keywords; the match must begin with
/// nothing but word-boundary assertions before its first literal (an anchored try at the
/// keyword then sees the same context, apart from the boundary the scanner checks itself).
fn anchor_cover(h: &Hir, keywords: &[String]) -> Option<Vec<usize>> {
    let (lead, rest): (&[Hir], &[Hir]) = match h.kind() {
        HirKind::Concat(v) => {
            let n = v
                .iter()
                .take_while(|x| matches!(x.kind(), HirKind::Look(_)))
                .count();
            (&v[..n], &v[n..])
        }
        HirKind::Look(_) => return None,
        _ => (&[], std::slice::from_ref(h)),
    };
    if !lead.iter().all(|x| ends_word(x, false)) {
        return None;
    }
    let rest = Hir::concat(rest.to_vec());
    let wake = seq_cover(&prefixes(&rest), keywords, !lead.is_empty(), false)?;
    // After a boundary the keyword must start with a word character, else the boundary would
    // look at the character before the keyword, which an anchored try does not see.
    let word = |&k: &usize| {
        keywords[k]
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
    };
    (lead.is_empty() || wake.iter().all(word)).then_some(wake)
}

/// True when the text just before whatever follows `h` cannot end in a word character: `h`
/// ends in a word-boundary assertion or a non-word character; `before` says the same of the
/// text before `h`, for the case where `h` matches nothing.
fn ends_word(h: &Hir, before: bool) -> bool {
    match h.kind() {
        HirKind::Look(l) => matches!(
            l,
            Look::WordUnicode
                | Look::WordAscii
                | Look::WordStartUnicode
                | Look::WordStartAscii
                | Look::WordStartHalfUnicode
                | Look::WordStartHalfAscii
        ),
        HirKind::Class(c) => no_word_chars(c),
        HirKind::Literal(l) => match l.0.last() {
            None => before,
            Some(&b) => b.is_ascii() && !(b.is_ascii_alphanumeric() || b == b'_'),
        },
        HirKind::Repetition(r) => {
            let once = ends_word(&r.sub, before);
            if r.min >= 1 { once } else { before && once }
        }
        HirKind::Capture(c) => ends_word(&c.sub, before),
        HirKind::Concat(v) => v.iter().fold(before, |ctx, x| ends_word(x, ctx)),
        HirKind::Alternation(v) => v.iter().all(|x| ends_word(x, before)),
        HirKind::Empty => before,
    }
}

fn no_word_chars(c: &Class) -> bool {
    match c {
        // Wide ranges (negated classes) hold word characters; only short ones are checked.
        Class::Unicode(u) => u.ranges().iter().all(|r| {
            (r.end() as u32) - (r.start() as u32) < 256
                && (r.start()..=r.end()).all(|ch| !(ch.is_alphanumeric() || ch == '_'))
        }),
        Class::Bytes(b) => b
            .ranges()
            .iter()
            .all(|r| (r.start()..=r.end()).all(|x| !(x.is_ascii_alphanumeric() || x == b'_'))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kw(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn keyword_led_branches_are_anchored() {
        let k = kw(&["ignor", "forget", "free"]);
        let p = plan(
            r"\b(?:ignor(?:e|ing)|forget)\s+(?:all\s+)?rules\b|\byou\b[^.]{0,60}?\bfree\s+from\b",
            &k,
        );
        assert_eq!(p.anchored.len(), 1);
        assert_eq!(p.anchored_wake, vec![0, 1]);
        assert_eq!(p.windowed.len(), 1);
        assert_eq!(p.windowed[0].1, vec![2]);
    }

    #[test]
    fn word_keywords_need_a_boundary() {
        let k = kw(&["note"]);
        // No `\b` before: "denote:" must not be hidden, so the branch is windowed by all keywords.
        let p = plan(r"note\s*:", &k);
        assert!(p.anchored.is_empty());
        assert_eq!(p.windowed[0].1, vec![0]);
        let p = plan(r"\bnote\s*:", &k);
        assert_eq!(p.anchored.len(), 1);
        // Punctuation keywords need no boundary.
        let p = plan(r"<\|\s*im_start", &kw(&["<|"]));
        assert_eq!(p.anchored.len(), 1);
    }

    #[test]
    fn uncovered_or_odd_patterns_fall_back() {
        let k = kw(&["mode"]);
        let p = plan(r"\b\w+\s+mode\b", &k);
        assert!(p.anchored.is_empty());
        assert_eq!(p.windowed[0].1, vec![0]);
        let p = plan(r"(?i)a|mode", &k);
        assert_eq!(p.windowed, vec![(vec![r"(?i)a|mode".to_string()], vec![0])]);
        // A keyword in the middle of a literal covers it; whitespace runs read as one space.
        let k = kw(&["late", "hate my life"]);
        let p = plan(r"\bi\s+hate\s+my\s+life\b|\bwhat\W+late", &k);
        assert_eq!(
            p.windowed,
            vec![
                (vec![r"\bi\s+hate\s+my\s+life\b".to_string()], vec![1]),
                (vec![r"\bwhat\W+late".to_string()], vec![0, 1])
            ]
        );
        let p = plan(r"(?:^|\n)mode", &k);
        assert!(p.anchored.is_empty());
        let p = plan(r"^mode", &k);
        assert!(p.anchored.is_empty());
    }
}
