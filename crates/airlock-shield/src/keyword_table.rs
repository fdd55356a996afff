//! The keyword prefilter's automaton as one flat table (see [`KeywordTable`]): built from
//! the crate's Aho-Corasick DFA for rule files read at run time, or borrowed from the binary
//! for the shipped rules ([`crate::prebuilt`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

use aho_corasick::Anchored;
use aho_corasick::automaton::Automaton;
use aho_corasick::dfa::DFA;

use crate::rules::SPACE;

/// The keyword automaton (an Aho-Corasick DFA, overlapping, case-insensitive) copied into one
/// flat table: the next state is `trans[state + class[byte]]`, states numbered premultiplied
/// by the number of byte classes, the states with matches last. ASCII whitespace bytes share
/// the space's class, and a state entered by a space stays put on further whitespace (a copy
/// of it without matches when it has some, so a keyword ending in a space is reported once):
/// each run of whitespace reads as one space, as the rules' `\s+` does.
///
/// The table is kept as its encoding (below), owned when built here and borrowed from the
/// binary when it is the shipped rules' prebuilt table ([`crate::prebuilt`]): a scan reads
/// only the rows its text reaches, so a process that scans one short text touches a few pages
/// of it rather than copying all of it. The encoding, all numbers `u32` little-endian after the
/// class map:
/// - 256 bytes: each byte's class;
/// - `stride` (the number of classes), `start`, `first_match`, `rows`;
/// - `rows × stride` transitions (premultiplied state numbers);
/// - `m`, the number of match states (`rows - first_match / stride`), then `m + 1` offsets
///   into the list that follows, then that list: for match state `first_match + j * stride`,
///   the entries `offsets[j]..offsets[j + 1]`, each a keyword's (pattern, byte length) in the
///   automaton's order.
#[derive(Debug)]
pub(crate) struct KeywordTable {
    bytes: Cow<'static, [u8]>,
    pub(crate) class: [u8; 256],
    /// Number of byte classes (the distance between two states' rows).
    pub(crate) stride: u32,
    pub(crate) start: u32,
    /// States from this one on have matches.
    pub(crate) first_match: u32,
    /// Where the transitions, the match offsets and the match list lie in `bytes`.
    trans: Range<usize>,
    offsets: Range<usize>,
    list: Range<usize>,
}

/// The `u32` at byte `i` of `b`; `None` past its end.
fn u32_at(b: &[u8], i: usize) -> Option<u32> {
    match b.get(i..i.checked_add(4)?) {
        Some(&[a, b1, c, d]) => Some(u32::from_le_bytes([a, b1, c, d])),
        _ => None,
    }
}

impl KeywordTable {
    /// Reads an encoded table; `None` when it is malformed: its parts' sizes disagree, a class
    /// or the start lies outside the table, or the match lists do not fit. The transitions
    /// themselves are not read here (that would touch every page of a borrowed table): the
    /// tables come from [`KeywordTable::new`], and the shipped one is compared with a fresh
    /// build by the tests. A transition outside the table would stop a scan with an index
    /// panic (which the hook and the daemon answer with a deny), never be read as another.
    pub(crate) fn from_bytes(bytes: Cow<'static, [u8]>) -> Option<KeywordTable> {
        let b: &[u8] = &bytes;
        let mut class = [0u8; 256];
        class.copy_from_slice(b.get(..256)?);
        let stride = u32_at(b, 256)?;
        let start = u32_at(b, 260)?;
        let first_match = u32_at(b, 264)?;
        let rows = u32_at(b, 268)? as usize;
        let cells = rows.checked_mul(stride as usize)?;
        let trans = 272..272usize.checked_add(cells.checked_mul(4)?)?;
        let m = u32_at(b, trans.end)? as usize;
        let offsets =
            trans.end + 4..(trans.end + 4).checked_add((m.checked_add(1)?).checked_mul(4)?)?;
        let entries = u32_at(b, offsets.end.checked_sub(4)?)? as usize;
        let list = offsets.end..offsets.end.checked_add(entries.checked_mul(8)?)?;
        let fits = stride >= 1
            && class.iter().all(|&c| u32::from(c) < stride)
            && (start as usize) < cells
            && start % stride == 0
            && first_match % stride == 0
            && (first_match as usize) <= cells
            && m == (cells - first_match as usize) / stride as usize
            && list.end == b.len()
            && u32_at(b, offsets.start) == Some(0)
            && (0..m).all(|j| {
                u32_at(b, offsets.start + 4 * j) <= u32_at(b, offsets.start + 4 * (j + 1))
            });
        fits.then_some(KeywordTable {
            bytes,
            class,
            stride,
            start,
            first_match,
            trans,
            offsets,
            list,
        })
    }

    /// The encoding (what [`KeywordTable::from_bytes`] reads).
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The transitions, as encoded (`u32` little-endian; read with [`next`]).
    pub(crate) fn trans(&self) -> &[u8] {
        &self.bytes[self.trans.clone()]
    }

    /// The keywords (pattern, byte length) of match state `sid` (at or past `first_match`).
    pub(crate) fn matches(&self, sid: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        let j = ((sid.saturating_sub(self.first_match)) / self.stride) as usize;
        let offsets = &self.bytes[self.offsets.clone()];
        let list = &self.bytes[self.list.clone()];
        let from = u32_at(offsets, 4 * j).unwrap_or(0) as usize;
        let to = u32_at(offsets, 4 * (j + 1)).unwrap_or(0) as usize;
        (from..to.max(from))
            .filter_map(move |e| Some((u32_at(list, 8 * e)?, u32_at(list, 8 * e + 4)?)))
    }
}

/// The state after `sid` on a byte of class `class`, in transitions `trans` (see
/// [`KeywordTable::trans`]).
#[inline(always)]
pub(crate) fn next(trans: &[u8], sid: u32, class: u8) -> u32 {
    let i = (sid + u32::from(class)) as usize * 4;
    let w = &trans[i..i + 4];
    u32::from_le_bytes([w[0], w[1], w[2], w[3]])
}

impl KeywordTable {
    /// Builds the table from the crate's automaton.
    pub(crate) fn new(dfa: &DFA) -> Result<KeywordTable, String> {
        let start = dfa.start_state(Anchored::No).map_err(|e| e.to_string())?;
        let read = |b: u8| if SPACE[usize::from(b)] { b' ' } else { b };
        // Every state reachable from the start, in discovery order, and `raw[s * 256 + b]`, the
        // state `s` goes to on byte `b` (whitespace read as a space).
        // The automaton's state IDs are small integers (row offsets): `index` maps them back.
        let too_big = || "keyword automaton too large".to_string();
        let mut ids = vec![start];
        let start_at = start.as_usize();
        if start_at >= 1 << 26 {
            return Err(too_big());
        }
        let mut index: Vec<usize> = vec![usize::MAX; start_at + 1];
        index[start_at] = 0;
        let mut raw: Vec<u32> = Vec::new();
        let mut k = 0;
        while k < ids.len() {
            let sid = ids[k];
            for b in 0..=255u8 {
                let next = dfa.next_state(Anchored::No, sid, read(b));
                let id = next.as_usize();
                if id >= 1 << 26 {
                    return Err(too_big());
                }
                if id >= index.len() {
                    index.resize(id + 1, usize::MAX);
                }
                if index[id] == usize::MAX {
                    index[id] = ids.len();
                    ids.push(next);
                }
                // Below 1 << 26 (checked above), so it fits.
                raw.push(index[id] as u32);
            }
            k += 1;
        }
        let is_match = |s: usize| dfa.is_special(ids[s]) && dfa.is_match(ids[s]);
        // States entered by a space (other than the start, which a space leaves or keeps).
        let mut spaced = vec![false; ids.len()];
        for s in 0..ids.len() {
            let next = raw[s * 256 + usize::from(b' ')] as usize;
            spaced[next] |= next != 0;
        }
        // Rows: each state, then a match-free copy of each spaced match state.
        let mut rows: Vec<(usize, bool)> = (0..ids.len()).map(|s| (s, is_match(s))).collect();
        let mut copy_of = vec![usize::MAX; ids.len()];
        for s in 0..ids.len() {
            if spaced[s] && is_match(s) {
                copy_of[s] = rows.len();
                rows.push((s, false));
            }
        }
        let next_row = |row: usize, b: u8| -> usize {
            let (s, _) = rows[row];
            if SPACE[usize::from(b)] && spaced[s] {
                return if copy_of[s] != usize::MAX {
                    copy_of[s]
                } else {
                    s
                };
            }
            raw[s * 256 + usize::from(b)] as usize
        };
        // Byte classes: bytes that lead every row to the same row (whitespace kept apart),
        // numbered in the order of their first byte. Each byte's column is built once and looked
        // up by value: comparing every byte with every class row by row was most of the
        // scanner's start-up once the rules' regexes were built lazily.
        let mut class = [0u8; 256];
        let mut reps: Vec<u8> = Vec::new();
        let mut seen: HashMap<(bool, Vec<u32>), u8> = HashMap::new();
        for b in 0..=255u8 {
            let column: Vec<u32> = (0..rows.len()).map(|row| next_row(row, b) as u32).collect();
            let key = (SPACE[usize::from(b)], column);
            let c = match seen.get(&key) {
                Some(&c) => c,
                None => {
                    let c = u8::try_from(reps.len()).map_err(|_| "too many byte classes")?;
                    reps.push(b);
                    seen.insert(key, c);
                    c
                }
            };
            class[usize::from(b)] = c;
        }
        // Number the rows: those without matches first.
        let mut order: Vec<usize> = (0..rows.len()).filter(|&r| !rows[r].1).collect();
        let first = order.len();
        order.extend((0..rows.len()).filter(|&r| rows[r].1));
        let mut number = vec![0usize; rows.len()];
        for (j, &r) in order.iter().enumerate() {
            number[r] = j;
        }
        let stride = reps.len();
        let id = |r: usize| u32::try_from(number[r] * stride).map_err(|_| too_big());
        let mut out: Vec<u8> = Vec::with_capacity(272 + rows.len() * stride * 4);
        out.extend_from_slice(&class);
        let rows_n = u32::try_from(rows.len()).map_err(|_| too_big())?;
        for v in [
            u32::try_from(stride).map_err(|_| too_big())?,
            id(0)?,
            u32::try_from(first * stride).map_err(|_| too_big())?,
            rows_n,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for &r in &order {
            for &b in &reps {
                out.extend_from_slice(&id(next_row(r, b))?.to_le_bytes());
            }
        }
        let matched = &order[first..];
        let mut offsets: Vec<u32> = vec![0];
        let mut list: Vec<u8> = Vec::new();
        for &r in matched {
            let sid = ids[rows[r].0];
            for j in 0..dfa.match_len(sid) {
                let p = dfa.match_pattern(sid, j);
                list.extend_from_slice(&p.as_u32().to_le_bytes());
                let len = u32::try_from(dfa.pattern_len(p)).map_err(|_| too_big())?;
                list.extend_from_slice(&len.to_le_bytes());
            }
            offsets.push(u32::try_from(list.len() / 8).map_err(|_| too_big())?);
        }
        let m = u32::try_from(matched.len()).map_err(|_| too_big())?;
        out.extend_from_slice(&m.to_le_bytes());
        for o in offsets {
            out.extend_from_slice(&o.to_le_bytes());
        }
        out.extend_from_slice(&list);
        KeywordTable::from_bytes(Cow::Owned(out))
            .ok_or_else(|| "keyword table malformed".to_string())
    }
}
