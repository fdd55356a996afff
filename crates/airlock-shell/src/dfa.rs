//! Rule regexes determinized ahead of time: a table DFA answers `is_match` for a built-in
//! rule's ASCII form without building anything at run time.
//!
//! A hook process decides one command, so every regex it needs it compiles once, for one
//! text: for a deny-like command (`rm -rf …`) the `rm` rules' NFAs, their lazy DFAs and the
//! trees they are built from were about 2.6M of the call's 3.9M instructions, most of it
//! allocation. The automaton the lazy DFA builds state by state is built here in full, once,
//! by `regex-automata`'s dense DFA determinizer from the same NFA (same settings,
//! leftmost-first, unanchored), minimized, and written to `dfa_tables.bin` beside this file
//! (committed; a test regenerates it and compares). Tests check that every table answers as
//! `meta::Regex` (`rules::tests`). `build.rs` embeds the table of every rule whose ASCII program
//! is byte-for-byte the one the table was made from, so a changed rule simply loses its table
//! (and goes back to the lazy DFA) until the file is regenerated:
//!
//! ```text
//! AIRLOCK_WRITE_DFA_TABLES=1 cargo test -p airlock-shell --lib dfa::tests::the_committed_tables_are_current
//! ```
//!
//! Only patterns whose table stays under 96 KB get one (`MAX_TABLE` in the tests); the others
//! keep the lazy DFA.
//!
//! The table format (all numbers u16 little-endian after the class map):
//! - 256 bytes: each byte's equivalence class;
//! - `stride` (the number of classes plus one, the last being end of input), `start`,
//!   `first_match`, `rows`;
//! - `rows × stride` transitions. State 0 is the dead state; states `1..first_match` do not
//!   match and have a row; states from `first_match` on are match states, which an
//!   `is_match` search stops at, so they have no row.
//!
//! Matches are reported one byte late, as in every `regex-automata` DFA: a search steps each
//! byte, stops with "yes" on entering a match state and "no" on the dead state, and at the end
//! steps the end-of-input class. It is the loop `regex-automata` runs for an earliest search.

/// A DFA table borrowed from the binary (see the module documentation).
#[derive(Debug, Clone, Copy)]
pub struct Table {
    classes: &'static [u8],
    stride: usize,
    start: u16,
    first_match: u16,
    trans: &'static [u8],
}

fn u16_at(b: &[u8], i: usize) -> Option<u16> {
    Some(u16::from_le_bytes([*b.get(i)?, *b.get(i + 1)?]))
}

impl Table {
    /// Reads a table; `None` when it is malformed (the caller then builds the lazy DFA).
    pub fn new(bytes: &'static [u8]) -> Option<Table> {
        let classes = bytes.get(..256)?;
        let stride = usize::from(u16_at(bytes, 256)?);
        let start = u16_at(bytes, 258)?;
        let first_match = u16_at(bytes, 260)?;
        let rows = usize::from(u16_at(bytes, 262)?);
        let trans = bytes.get(264..)?;
        // every class and state a search can read lies inside the table
        // and every state below `first_match` has a row, so a search never steps outside
        let fits = stride >= 1
            && usize::from(first_match) == rows
            && trans.len() == rows.checked_mul(stride)?.checked_mul(2)?
            && classes.iter().all(|&c| usize::from(c) + 1 < stride);
        fits.then_some(Table {
            classes,
            stride,
            start,
            first_match,
            trans,
        })
    }

    fn next(&self, state: u16, class: usize) -> Option<u16> {
        u16_at(self.trans, (usize::from(state) * self.stride + class) * 2)
    }

    /// Whether the pattern matches anywhere in `text`; `None` if the table is inconsistent
    /// (a state without a row: cannot happen for a table the generator wrote).
    pub fn is_match(&self, text: &[u8]) -> Option<bool> {
        let mut s = self.start;
        for &b in text {
            if s == 0 {
                return Some(false);
            }
            if s >= self.first_match {
                return Some(true);
            }
            s = self.next(s, usize::from(self.classes[usize::from(b)]))?;
        }
        if s == 0 {
            return Some(false);
        }
        if s >= self.first_match {
            return Some(true);
        }
        let eoi = self.next(s, self.stride - 1)?;
        Some(eoi != 0 && eoi >= self.first_match)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rules::BUILTIN_TABLE;
    use regex_automata::Anchored;
    use regex_automata::dfa::{Automaton, StartKind, dense};
    use regex_automata::nfa::thompson::NFA;
    use regex_automata::util::primitives::StateID;
    use regex_automata::util::start;
    use std::collections::HashMap;

    /// The largest table written (bytes); larger patterns keep the lazy DFA.
    pub const MAX_TABLE: usize = 96 << 10;

    /// The table for one NFA (the [`crate::rules`] matcher's NFA), or `None` when the DFA would
    /// be larger than [`MAX_TABLE`] or cannot answer every text (quit bytes).
    pub fn table_for(nfa: &NFA) -> Option<Vec<u8>> {
        let dfa = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .start_kind(StartKind::Unanchored)
                    .minimize(true)
                    .dfa_size_limit(Some(4 * MAX_TABLE))
                    .determinize_size_limit(Some(16 * MAX_TABLE)),
            )
            .build_from_nfa(nfa)
            .ok()?;
        let start = dfa
            .start_state(&start::Config::new().anchored(Anchored::No))
            .ok()?;
        // one byte per class, and the classes in order
        let mut reps: Vec<u8> = Vec::new();
        let mut classes = [0u8; 256];
        let mut class_of: HashMap<u8, u8> = HashMap::new();
        for b in 0..=255u8 {
            let c = dfa.byte_classes().get(b);
            let n = class_of.len();
            let id = *class_of.entry(c).or_insert_with(|| {
                reps.push(b);
                n as u8
            });
            classes[usize::from(b)] = id;
        }
        // every state reachable from the start, through bytes and end of input
        let mut order: Vec<StateID> = vec![start];
        let mut seen: HashMap<StateID, ()> = HashMap::from([(start, ())]);
        let mut i = 0;
        while let Some(&s) = order.get(i) {
            i += 1;
            if dfa.is_quit_state(s) {
                return None;
            }
            if dfa.is_dead_state(s) || dfa.is_match_state(s) {
                continue;
            }
            for &b in &reps {
                let t = dfa.next_state(s, b);
                if seen.insert(t, ()).is_none() {
                    order.push(t);
                }
            }
            let t = dfa.next_eoi_state(s);
            if dfa.is_quit_state(t) {
                return None;
            }
            if seen.insert(t, ()).is_none() {
                order.push(t);
            }
        }
        if dfa.is_match_state(start) {
            return None;
        }
        // numbering: dead 0, then the states that do not match, then the match states
        let mut number: HashMap<StateID, u16> = HashMap::new();
        let mut rows: Vec<StateID> = Vec::new();
        let dead = order.iter().copied().find(|&s| dfa.is_dead_state(s));
        rows.push(dead.unwrap_or(StateID::ZERO));
        if let Some(d) = dead {
            number.insert(d, 0);
        }
        for &s in &order {
            if !dfa.is_dead_state(s) && !dfa.is_match_state(s) {
                number.insert(s, u16::try_from(rows.len()).ok()?);
                rows.push(s);
            }
        }
        let first_match = u16::try_from(rows.len()).ok()?;
        let mut n = rows.len();
        for &s in &order {
            if dfa.is_match_state(s) {
                number.insert(s, u16::try_from(n).ok()?);
                n += 1;
            }
        }
        u16::try_from(n).ok()?;
        let stride = reps.len() + 1;
        if rows.len() * stride * 2 + 264 > MAX_TABLE {
            return None;
        }
        let mut out = classes.to_vec();
        for v in [
            stride,
            usize::from(number[&start]),
            usize::from(first_match),
            rows.len(),
        ] {
            out.extend_from_slice(&u16::try_from(v).ok()?.to_le_bytes());
        }
        for (r, &s) in rows.iter().enumerate() {
            for col in 0..stride {
                let t = if r == 0 {
                    0
                } else if col < reps.len() {
                    number[&dfa.next_state(s, reps[col])]
                } else {
                    number[&dfa.next_eoi_state(s)]
                };
                out.extend_from_slice(&t.to_le_bytes());
            }
        }
        Some(out)
    }

    /// `dfa_tables.bin` as the current rules make it: for each built-in ASCII program (pattern
    /// and `unless`, in table order, each once), `u32` program length, the program, `u32`
    /// table length, the table.
    fn generate() -> Vec<u8> {
        let mut out = Vec::new();
        let mut done = std::collections::HashSet::new();
        for r in BUILTIN_TABLE {
            for code in [r.ascii(), r.unless_ascii()].into_iter().flatten() {
                if !done.insert(code) {
                    continue;
                }
                let Some(nfa) =
                    crate::prebuilt::decode(code).and_then(|h| crate::rules::nfa_for(&h))
                else {
                    continue;
                };
                let Some(table) = table_for(&nfa) else {
                    continue;
                };
                for part in [code, &table[..]] {
                    out.extend_from_slice(&(part.len() as u32).to_le_bytes());
                    out.extend_from_slice(part);
                }
            }
        }
        out
    }

    const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/dfa_tables.bin");

    #[test]
    fn the_committed_tables_are_current() {
        let want = generate();
        if std::env::var_os("AIRLOCK_WRITE_DFA_TABLES").is_some() {
            std::fs::write(FILE, &want).unwrap_or_else(|e| panic!("{FILE}: {e}"));
        }
        let have = std::fs::read(FILE).unwrap_or_default();
        assert!(
            have == want,
            "src/dfa_tables.bin is not what the rules make ({} bytes, want {}); regenerate it: \
             AIRLOCK_WRITE_DFA_TABLES=1 cargo test -p airlock-shell --lib \
             dfa::tests::the_committed_tables_are_current",
            have.len(),
            want.len()
        );
    }

    #[test]
    fn malformed_tables_are_refused() {
        let mut t = vec![0u8; 256];
        t.extend_from_slice(&[2, 0, 1, 0, 2, 0, 2, 0]);
        t.extend_from_slice(&[0; 8]);
        let ok: &'static [u8] = t.clone().leak();
        assert!(Table::new(ok).is_some());
        let short: &'static [u8] = t[..t.len() - 1].to_vec().leak();
        assert!(Table::new(short).is_none());
        let mut bad_class = t.clone();
        bad_class[7] = 1;
        assert!(Table::new(bad_class.leak()).is_none());
        // the dead state's row: nothing matches
        assert_eq!(Table::new(ok).and_then(|t| t.is_match(b"abc")), Some(false));
    }
}
