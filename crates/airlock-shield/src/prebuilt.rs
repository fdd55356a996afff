//! The shipped text rules, prebuilt: what [`RuleSet::compile_lazy`] makes of
//! [`BUILTIN`](crate::rules::BUILTIN) (the parsed rules, the keyword index and the keyword
//! automaton's flat table), written once to `rules_prebuilt.bin` beside this file and read back
//! by [`shipped`] instead of being rebuilt in every process.
//!
//! A hook process scans one prompt or one tool output: building the keyword automaton (the
//! Aho-Corasick DFA over some 1,300 keywords and its copy into the flat table) and parsing
//! the rule files were nearly all of its 325M instructions, some fifty times what starting a
//! process costs. Reading the prebuilt set is a few hundred thousand, and the automaton's
//! table is borrowed from the binary rather than copied, so a scan touches only the rows its
//! text reaches.
//!
//! The file starts with a hash of the rule files it was made from (their names and texts): a
//! binary whose rule files differ from those (edited and not regenerated) does not use it and
//! compiles the files as before, and the test `the_committed_rules_table_is_current` fails
//! until the file is regenerated:
//!
//! ```text
//! AIRLOCK_WRITE_DFA_TABLES=1 cargo test -p airlock-shield --lib prebuilt::tests::the_committed_rules_table_is_current
//! ```
//!
//! Under `--cfg airlock_reference` the shipped rules are always compiled from their files.
//!
//! The format, all numbers little-endian, strings as a `u32` byte length and UTF-8:
//! - `MAGIC`, then the inputs' hash (`u64`);
//! - the number of rules (`u32`), then each rule: id, kind (`u8`: 0 attack, 1 crisis),
//!   category, message, weight (`f32` bits), user and tool (`u8` each), pattern, then its
//!   keywords, `match` and `not_match` examples, each list a `u32` count and its strings;
//! - the number of prefilter keywords (`u32`), then for each: word start (`u8`), the number of
//!   rules it wakes (`u32`) and each (rule `u16`, keyword index among the rule's `u8`);
//! - the keyword table's encoding ([`KeywordTable`]), to the end.

use std::borrow::Cow;
use std::sync::OnceLock;

use crate::keyword_table::KeywordTable;
use crate::rules::{BUILTIN, Kind, Rule, RuleSet};

const MAGIC: &[u8; 8] = b"ALTXRUL1";

/// The committed file (see the module documentation).
static PREBUILT: &[u8] = include_bytes!("rules_prebuilt.bin");

/// The shipped rules read from the committed file, or `None` when it was made from other rule
/// files than these (or cannot be read): the caller then compiles them.
pub fn shipped() -> Option<RuleSet> {
    decode(PREBUILT, inputs_hash(BUILTIN))
}

/// A hash of rule files `(name, text)`, eight bytes a step (FxHash's mixing, lengths included):
/// it tells files apart from the ones a table was made from; it guards against no adversary,
/// since both come from the same build.
pub fn inputs_hash(files: &[(&str, &str)]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h: u64 = 0;
    let mut add = |w: u64| h = (h.rotate_left(5) ^ w).wrapping_mul(K);
    add(files.len() as u64);
    for (name, text) in files {
        for part in [name.as_bytes(), text.as_bytes()] {
            add(part.len() as u64);
            let mut chunks = part.chunks_exact(8);
            for c in &mut chunks {
                add(u64::from_le_bytes([
                    c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
                ]));
            }
            let mut last = [0u8; 8];
            last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
            add(u64::from_le_bytes(last));
        }
    }
    h
}

/// Writes `set`, made from files hashing to `hash` (the inverse of [`decode`]); the tests
/// write the committed file with it.
#[cfg(test)]
pub(crate) fn encode(set: &RuleSet, hash: u64) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&hash.to_le_bytes());
    let n32 = |out: &mut Vec<u8>, n: usize| out.extend_from_slice(&(n as u32).to_le_bytes());
    let string = |out: &mut Vec<u8>, s: &str| {
        n32(out, s.len());
        out.extend_from_slice(s.as_bytes());
    };
    let strings = |out: &mut Vec<u8>, v: &[String]| {
        n32(out, v.len());
        for s in v {
            string(out, s);
        }
    };
    n32(&mut out, set.rules.len());
    for r in &set.rules {
        string(&mut out, &r.id);
        out.push(match r.kind {
            Kind::Attack => 0,
            Kind::Crisis => 1,
        });
        string(&mut out, &r.category);
        string(&mut out, &r.message);
        out.extend_from_slice(&r.weight.to_bits().to_le_bytes());
        out.push(u8::from(r.user));
        out.push(u8::from(r.tool));
        string(&mut out, &r.pattern);
        strings(&mut out, &r.keywords);
        strings(&mut out, &r.must_match);
        strings(&mut out, &r.not_match);
    }
    n32(&mut out, set.keyword_rules.len());
    for (k, woken) in set.keyword_rules.iter().enumerate() {
        out.push(u8::from(set.word_start.get(k).copied().unwrap_or(false)));
        n32(&mut out, woken.len());
        for &(r, i) in woken {
            out.extend_from_slice(&r.to_le_bytes());
            out.push(i);
        }
    }
    out.extend_from_slice(set.prefilter.bytes());
    out
}

/// Reads a set written by [`encode`] for files hashing to `hash`; `None` when the hash differs
/// or anything does not read (a rule or keyword out of range included).
pub(crate) fn decode(bytes: &'static [u8], hash: u64) -> Option<RuleSet> {
    let mut r = Reader { b: bytes, at: 0 };
    if r.take(8)? != MAGIC || r.u64()? != hash {
        return None;
    }
    let n = r.u32()? as usize;
    if n > crate::rules::MAX_RULES {
        return None;
    }
    let mut rules = Vec::with_capacity(n);
    for _ in 0..n {
        let id = r.string()?;
        let kind = match r.u8()? {
            0 => Kind::Attack,
            1 => Kind::Crisis,
            _ => return None,
        };
        rules.push(Rule {
            id,
            kind,
            category: r.string()?,
            message: r.string()?,
            weight: f32::from_bits(r.u32()?),
            user: r.u8()? != 0,
            tool: r.u8()? != 0,
            pattern: r.string()?,
            keywords: r.strings()?,
            must_match: r.strings()?,
            not_match: r.strings()?,
            full: OnceLock::new(),
            parts: OnceLock::new(),
        });
    }
    let k = r.u32()? as usize;
    let mut word_start = Vec::with_capacity(k.min(bytes.len()));
    let mut keyword_rules = Vec::with_capacity(k.min(bytes.len()));
    for _ in 0..k {
        word_start.push(r.u8()? != 0);
        let m = r.u32()? as usize;
        let mut woken = Vec::with_capacity(m.min(bytes.len()));
        for _ in 0..m {
            let rule = u16::from_le_bytes([r.u8()?, r.u8()?]);
            let i = r.u8()?;
            // every keyword a hit names is one of the rule's
            if rules
                .get(usize::from(rule))
                .is_none_or(|x: &Rule| usize::from(i) >= x.keywords.len())
            {
                return None;
            }
            woken.push((rule, i));
        }
        keyword_rules.push(woken);
    }
    let prefilter = KeywordTable::from_bytes(Cow::Borrowed(bytes.get(r.at..)?))?;
    #[cfg(test)]
    let keywords = {
        // the prefilter's keywords in the order `load` meets them
        let mut all: Vec<String> = Vec::new();
        for rule in &rules {
            for kw in &rule.keywords {
                if !all.contains(kw) {
                    all.push(kw.clone());
                }
            }
        }
        all
    };
    Some(RuleSet {
        rules,
        prefilter,
        keyword_rules,
        word_start,
        #[cfg(test)]
        keywords,
    })
}

struct Reader {
    b: &'static [u8],
    at: usize,
}

impl Reader {
    fn take(&mut self, n: usize) -> Option<&'static [u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn u32(&mut self) -> Option<u32> {
        let s = self.take(4)?;
        Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    fn u64(&mut self) -> Option<u64> {
        let s = self.take(8)?;
        Some(u64::from_le_bytes([
            s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7],
        ]))
    }

    fn string(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.take(n)?).ok().map(str::to_owned)
    }

    fn strings(&mut self) -> Option<Vec<String>> {
        let n = self.u32()? as usize;
        // a count cannot exceed the bytes left (each string takes at least four)
        let mut v = Vec::with_capacity(n.min(self.b.len() - self.at));
        for _ in 0..n {
            v.push(self.string()?);
        }
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Direction;

    const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/rules_prebuilt.bin");

    /// The committed file is what the shipped rule files make now (regenerate it as the module
    /// documentation says).
    #[test]
    fn the_committed_rules_table_is_current() {
        let set = RuleSet::compile_lazy(BUILTIN).unwrap();
        let want = encode(&set, inputs_hash(BUILTIN));
        if std::env::var_os("AIRLOCK_WRITE_DFA_TABLES").is_some() {
            std::fs::write(FILE, &want).unwrap();
        }
        let have = std::fs::read(FILE).unwrap();
        assert!(
            have == want,
            "src/rules_prebuilt.bin is not what the rule files make ({} bytes, want {}); \
             regenerate it: AIRLOCK_WRITE_DFA_TABLES=1 cargo test -p airlock-shield --lib \
             prebuilt::tests::the_committed_rules_table_is_current",
            have.len(),
            want.len()
        );
        // and it reads back as the same set, byte for byte
        let back = shipped().unwrap();
        assert_eq!(encode(&back, inputs_hash(BUILTIN)), want);
        assert_eq!(back.keywords, set.keywords);
    }

    /// Every example of every shipped rule, scanned by the prebuilt set and by one compiled
    /// from the files: the same hits, in both directions.
    #[test]
    fn the_prebuilt_set_finds_what_the_compiled_one_does() {
        let built = RuleSet::compile_lazy(BUILTIN).unwrap();
        let Some(pre) = shipped() else {
            panic!("the committed rules table is stale (see the_committed_rules_table_is_current)")
        };
        let hits = |set: &RuleSet, text: &str, d: Direction| {
            let mut v = Vec::new();
            set.scan(text, d, |h| v.push((h.rule, h.start, h.end)));
            v
        };
        let mut found = 0;
        for r in &built.rules {
            for t in r.must_match.iter().chain(&r.not_match) {
                for d in [Direction::User, Direction::Tool] {
                    let want = hits(&built, t, d);
                    found += want.len();
                    assert_eq!(hits(&pre, t, d), want, "{t:?} {d:?}");
                }
            }
        }
        assert!(found > built.rules.len());
        pre.check_examples().unwrap();
    }

    /// A table made from other rule files is not used, nor one cut short or altered where it
    /// is read.
    #[test]
    fn a_stale_or_damaged_table_is_refused() {
        let set = RuleSet::compile_lazy(BUILTIN).unwrap();
        let hash = inputs_hash(BUILTIN);
        let bytes: &'static [u8] = Vec::leak(encode(&set, hash));
        assert!(decode(bytes, hash).is_some());
        // other files: one byte of one rule file changed
        let mut files: Vec<(&str, String)> = BUILTIN
            .iter()
            .map(|(n, t)| (*n, (*t).to_string()))
            .collect();
        files[0].1.push(' ');
        let other: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
        assert_ne!(inputs_hash(&other), hash);
        assert!(decode(bytes, inputs_hash(&other)).is_none());
        // cut anywhere, or a bad magic
        for cut in [0, 8, 20, bytes.len() / 2, bytes.len() - 1] {
            assert!(decode(&bytes[..cut], hash).is_none(), "cut at {cut}");
        }
        let mut bad = bytes.to_vec();
        bad[0] ^= 1;
        assert!(decode(Vec::leak(bad), hash).is_none());
        // a keyword that names a rule past the end
        let mut wrong = RuleSet::compile_lazy(BUILTIN).unwrap();
        wrong.keyword_rules[0][0].0 = 9999;
        assert!(decode(Vec::leak(encode(&wrong, hash)), hash).is_none());
    }
}
