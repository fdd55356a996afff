//! Text rules as data: `rules/text/*.toml`, compiled into the binary. Each rule names the
//! literal keywords that any match must contain (the Aho-Corasick prefilter), one regular
//! expression, a weight, and examples that must and must not match (checked by tests, and at
//! load time for user-supplied rule files through [`RuleSet::check_examples`]).
//!
//! Each rule runs as its [`plan`](crate::plan) says: the branches whose matches start with a
//! keyword are tried anchored at that keyword's hits (a search that stops within a few bytes
//! when the text does not fit), the others on a window around the hits of the keywords their
//! syntax shows every match holds, as wide as their [`reach`](crate::reach) (overlapping
//! windows merged). Common keywords thus cost a short search each rather than a pass over the
//! whole text.

use aho_corasick::dfa::DFA;
use aho_corasick::{MatchKind, StartKind};
use regex::Regex;
use regex_automata::{Input, meta};
use serde::Deserialize;

use std::sync::OnceLock;

use crate::keyword_table::{self, KeywordTable};
use crate::plan::plan;
use crate::reach::{reach, stretch, window_in};
use crate::{Direction, Error};

/// The rule files shipped with airlock, by file name.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "jailbreak.toml",
        include_str!("../../../rules/text/jailbreak.toml"),
    ),
    (
        "extraction.toml",
        include_str!("../../../rules/text/extraction.toml"),
    ),
    (
        "injection.toml",
        include_str!("../../../rules/text/injection.toml"),
    ),
    (
        "crisis.toml",
        include_str!("../../../rules/text/crisis.toml"),
    ),
    (
        "tool_output.toml",
        include_str!("../../../rules/text/tool_output.toml"),
    ),
];

/// The prefilter keeps its woken set in a fixed bit array of this many rules.
pub const MAX_RULES: usize = 512;
/// Rule sets up to this size keep a scan's per-rule state on the stack.
const STACK_RULES: usize = 128;
/// At most this many matches of one rule are reported per text.
const MAX_PER_RULE: u8 = 4;

/// What a rule detects, which decides the verdict it pushes towards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// An attack on the model: jailbreak in a user message, injection in a tool result.
    Attack,
    /// Someone may be in danger.
    Crisis,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    rule: Vec<RuleSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    id: String,
    kind: Kind,
    category: String,
    #[serde(default = "both")]
    directions: Vec<Direction>,
    weight: f32,
    keywords: Vec<String>,
    pattern: String,
    message: String,
    #[serde(rename = "match")]
    must_match: Vec<String>,
    #[serde(default)]
    not_match: Vec<String>,
}

fn both() -> Vec<Direction> {
    vec![Direction::User, Direction::Tool]
}

/// One compiled rule.
#[derive(Debug)]
pub struct Rule {
    pub id: String,
    pub kind: Kind,
    pub category: String,
    pub message: String,
    pub weight: f32,
    pub(crate) user: bool,
    pub(crate) tool: bool,
    pub(crate) pattern: String,
    /// The rule's keywords, lowercased, each once (the prefilter wakes the rule by their index).
    pub(crate) keywords: Vec<String>,
    /// The whole pattern, compiled on first use (checks and tests; the scan runs the parts).
    pub(crate) full: OnceLock<Option<Regex>>,
    /// What the scan runs, built when a keyword first wakes the rule (or at load, see
    /// [`RuleSet::compile`]): most texts wake few rules, and building all of them was nearly
    /// all of `airlock scan`'s start-up. An error is kept and reported as a match (deny).
    pub(crate) parts: OnceLock<Result<Parts, String>>,
    pub must_match: Vec<String>,
    pub not_match: Vec<String>,
}

/// A rule's compiled parts, as its [`plan`] says.
#[derive(Debug)]
pub(crate) struct Parts {
    /// `\A(?:…)` over the branches whose matches start with a keyword: tried at keyword hits.
    anchored: Option<Regex>,
    /// The other branches in at most [`GROUPS`] groups, each searched on windows around the hits
    /// of its own keywords as wide as its reach (how far, in characters, a match can reach from
    /// its keyword).
    /// Compiled without the regex engine's literal prefilter (see [`build_windowed`]).
    windowed: Vec<(meta::Regex, usize)>,
    /// For each of the rule's keywords, what its hit does: bit 0 ([`ANCHORED`]) tries the
    /// anchored branches, bit `1 + g` opens a window for windowed group `g` (0: nothing).
    modes: Vec<u8>,
}

impl Parts {
    fn build(pattern: &str, keywords: &[String]) -> Result<Parts, String> {
        let plan = plan(pattern, keywords);
        let anchored = if plan.anchored.is_empty() {
            None
        } else {
            let src = format!(r"\A(?:{})", plan.anchored.join("|"));
            Some(build_regex(&src).map_err(|e| e.to_string())?)
        };
        let mut windowed = Vec::new();
        for (branches, _) in plan.windowed.iter().take(GROUPS) {
            if branches.is_empty() {
                continue;
            }
            let joined = branches.join("|");
            let re = build_windowed(&joined).map_err(|e| e.to_string())?;
            windowed.push((re, reach(&joined)));
        }
        let modes = (0..keywords.len())
            .map(|i| {
                let windows = plan
                    .windowed
                    .iter()
                    .take(GROUPS)
                    .enumerate()
                    .filter(|(_, (_, wake))| wake.contains(&i))
                    .fold(0, |m, (g, _)| m | (2 << g));
                let anchored = if plan.anchored_wake.contains(&i) {
                    ANCHORED
                } else {
                    0
                };
                anchored | windows
            })
            .collect();
        Ok(Parts {
            anchored,
            windowed,
            modes,
        })
    }
}

impl Rule {
    /// The whole pattern (compiled case-insensitively on first use).
    pub fn regex(&self) -> Option<&Regex> {
        self.full
            .get_or_init(|| build_regex(&self.pattern).ok())
            .as_ref()
    }

    /// The parts the scan runs, built on first use.
    fn parts(&self) -> Result<&Parts, &str> {
        self.parts
            .get_or_init(|| Parts::build(&self.pattern, &self.keywords))
            .as_ref()
            .map_err(String::as_str)
    }

    pub fn applies(&self, d: Direction) -> bool {
        match d {
            Direction::User => self.user,
            Direction::Tool => self.tool,
        }
    }
}

/// All rules, with the keyword prefilter.
#[derive(Debug)]
pub struct RuleSet {
    pub rules: Vec<Rule>,
    pub(crate) prefilter: KeywordTable,
    /// For each prefilter pattern, the rules it can wake, each with the pattern's index among
    /// that rule's keywords (what the hit does is in the rule's [`Parts::modes`]).
    pub(crate) keyword_rules: Vec<Vec<(u16, u8)>>,
    /// Keywords that begin with a letter or digit only count at the start of a word, so "ai"
    /// is not woken by "said" (every pattern starts its words at `\b`).
    pub(crate) word_start: Vec<bool>,
    /// The prefilter's keywords (the tests rebuild the crate's automaton from them).
    #[cfg(test)]
    pub(crate) keywords: Vec<String>,
}

/// A keyword hit tries the rule's anchored branches there.
const ANCHORED: u8 = 1;
/// Keyword hits buffered before the scan handles them.
const HIT_BATCH: usize = 64;

/// Windowed groups per rule (see [`crate::plan::Plan::windowed`]).
const GROUPS: usize = 2;

fn build_regex(pattern: &str) -> Result<Regex, regex::Error> {
    regex::RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(4 << 20)
        .build()
}

/// [`build_regex`]'s regex for windowed search: the same syntax and match semantics (leftmost
/// first, case-insensitive, Unicode, matches on character boundaries), built by the engine the
/// `regex` crate wraps, but without its literal prefilter. A window is at most a few KB, and the
/// prefilter's literals are often common words ("is", "do", "never" in
/// `jailbreak.amoral_persona`): on prose it stopped every few bytes and restarted the lazy DFA,
/// about 200 instructions per window byte, where the DFA alone reads a byte in a few.
fn build_windowed(pattern: &str) -> Result<meta::Regex, Box<regex_automata::meta::BuildError>> {
    meta::Builder::new()
        .configure(
            meta::Config::new()
                .nfa_size_limit(Some(4 << 20))
                .hybrid_cache_capacity(2 << 20)
                .match_kind(regex_automata::MatchKind::LeftmostFirst)
                .utf8_empty(true)
                .auto_prefilter(false),
        )
        .syntax(
            regex_automata::util::syntax::Config::new()
                .case_insensitive(true)
                .utf8(true),
        )
        .build(pattern)
        .map_err(Box::new)
}

/// A rule match inside one text.
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    pub rule: usize,
    pub start: usize,
    pub end: usize,
}

impl RuleSet {
    /// Parses and compiles rule files `(name, toml)`, every rule's regexes built and checked
    /// now: for rule files a person supplies, whose mistakes must show at load.
    pub fn compile(files: &[(&str, &str)]) -> Result<RuleSet, Error> {
        RuleSet::load(files, true)
    }

    /// Parses rule files `(name, toml)` and builds the keyword prefilter; each rule's regexes
    /// are built when a keyword first wakes it. For the shipped rules, which the tests compile
    /// and check: a short text then builds only the few rules it can reach.
    pub fn compile_lazy(files: &[(&str, &str)]) -> Result<RuleSet, Error> {
        RuleSet::load(files, false)
    }

    /// The shipped rules ([`BUILTIN`]): the prebuilt set when it was made from these very files
    /// ([`crate::prebuilt`]), else compiled lazily from them. Under `--cfg airlock_reference`,
    /// always compiled.
    pub fn builtin() -> Result<RuleSet, Error> {
        if !cfg!(airlock_reference)
            && let Some(set) = crate::prebuilt::shipped()
        {
            return Ok(set);
        }
        RuleSet::compile_lazy(BUILTIN)
    }

    fn load(files: &[(&str, &str)], eager: bool) -> Result<RuleSet, Error> {
        let mut rules = Vec::new();
        let mut keywords: Vec<String> = Vec::new();
        let mut keyword_rules: Vec<Vec<(u16, u8)>> = Vec::new();
        for (name, src) in files {
            let file: File = toml::from_str(src).map_err(|e| Error::Rules {
                file: (*name).to_string(),
                message: e.to_string(),
            })?;
            for spec in file.rule {
                let bad = |m: String| Error::Rules {
                    file: (*name).to_string(),
                    message: format!("rule {}: {m}", spec.id),
                };
                if rules.len() >= MAX_RULES {
                    return Err(bad(format!("at most {MAX_RULES} rules")));
                }
                if !(0.0..=1.0).contains(&spec.weight) {
                    return Err(bad("weight must be in [0, 1]".into()));
                }
                if spec.keywords.is_empty() || spec.must_match.is_empty() {
                    return Err(bad("needs keywords and at least one match example".into()));
                }
                let mut lower: Vec<String> = Vec::with_capacity(spec.keywords.len());
                for k in &spec.keywords {
                    let k = k.to_ascii_lowercase();
                    if !lower.contains(&k) {
                        lower.push(k);
                    }
                }
                let parts = OnceLock::new();
                if eager {
                    let built = Parts::build(&spec.pattern, &lower).map_err(bad)?;
                    // A new cell: setting it cannot fail.
                    let _ = parts.set(Ok(built));
                }
                let idx = u16::try_from(rules.len()).map_err(|_| bad("too many rules".into()))?;
                for (i, k) in lower.iter().enumerate() {
                    let i = u8::try_from(i).map_err(|_| bad("at most 256 keywords".into()))?;
                    match keywords.iter().position(|x| x == k) {
                        Some(p) => keyword_rules[p].push((idx, i)),
                        None => {
                            keywords.push(k.clone());
                            keyword_rules.push(vec![(idx, i)]);
                        }
                    }
                }
                rules.push(Rule {
                    user: spec.directions.contains(&Direction::User),
                    tool: spec.directions.contains(&Direction::Tool),
                    id: spec.id,
                    kind: spec.kind,
                    category: spec.category,
                    message: spec.message,
                    weight: spec.weight,
                    pattern: spec.pattern,
                    keywords: lower,
                    full: OnceLock::new(),
                    parts,
                    must_match: spec.must_match,
                    not_match: spec.not_match,
                });
            }
        }
        // A DFA, copied into a flat table walked by [`RuleSet::keyword_hits`]' own loop: far
        // cheaper than the crate's overlapping iterator over every byte.
        let dfa = DFA::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .start_kind(StartKind::Unanchored)
            .prefilter(false)
            .build(&keywords)
            .map_err(|e| Error::Rules {
                file: "(prefilter)".into(),
                message: e.to_string(),
            })?;
        let word_start: Vec<bool> = keywords
            .iter()
            .map(|k| k.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric()))
            .collect();
        let prefilter = KeywordTable::new(&dfa).map_err(|message| Error::Rules {
            file: "(prefilter)".into(),
            message,
        })?;
        Ok(RuleSet {
            rules,
            prefilter,
            keyword_rules,
            word_start,
            #[cfg(test)]
            keywords,
        })
    }

    /// Runs the prefilter, then each woken rule on the windows around its keyword hits, calling
    /// `hit` for each match (at most four per rule), rule by rule in rule order. Allocates
    /// nothing when no rule matches (in a set of up to 128 rules).
    pub fn scan(&self, text: &str, dir: Direction, hit: impl FnMut(Hit)) {
        self.scan_with_stretch(text, dir, None, hit);
    }

    /// [`RuleSet::scan`], given [`stretch`]`(text)` when the caller already knows it.
    pub fn scan_with_stretch(
        &self,
        text: &str,
        dir: Direction,
        known: Option<Option<usize>>,
        mut hit: impl FnMut(Hit),
    ) {
        let n = self.rules.len().min(MAX_RULES);
        // Per rule: the pending window (start, end) not yet searched (windowed group `g` of rule
        // `r` at `r * GROUPS + g`), the matches found so far, and the last match an anchored try
        // found (later tries inside it are skipped). Sized for the rules there are: filling
        // arrays for `MAX_RULES` rules took about as long as a short text's whole scan.
        let mut on_stack;
        let mut on_heap;
        let (pending, found, anchored_at) = if n <= STACK_RULES {
            on_stack = (
                [(u32::MAX, 0u32); STACK_RULES * GROUPS],
                [0u8; STACK_RULES],
                [(u32::MAX, 0u32); STACK_RULES],
            );
            (
                &mut on_stack.0[..],
                &mut on_stack.1[..],
                &mut on_stack.2[..],
            )
        } else {
            on_heap = (
                vec![(u32::MAX, 0u32); n * GROUPS],
                vec![0u8; n],
                vec![(u32::MAX, 0u32); n],
            );
            (&mut on_heap.0[..], &mut on_heap.1[..], &mut on_heap.2[..])
        };
        let mut hits: Vec<Hit> = Vec::new();
        let mut spread: Option<Option<usize>> = known;
        self.keyword_hits(text, |k, ks, ke| {
            for &(r, ki) in &self.keyword_rules[k] {
                let r = usize::from(r);
                if r >= n || found[r] >= MAX_PER_RULE || !self.rules[r].applies(dir) {
                    continue;
                }
                let rule = &self.rules[r];
                let Ok(parts) = rule.parts() else {
                    // A rule that does not build (only possible for a file nobody checked) is
                    // reported as a match: an internal error denies.
                    hits.push(Hit {
                        rule: r,
                        start: ks,
                        end: ke,
                    });
                    found[r] = MAX_PER_RULE;
                    continue;
                };
                let mode = parts.modes.get(usize::from(ki)).copied().unwrap_or(0);
                if mode & ANCHORED != 0
                    && let Some(re) = &parts.anchored
                    && !(anchored_at[r].0..anchored_at[r].1).contains(&(ks as u32))
                    && !(self.word_start[k] && ends_in_word_char(&text[..ks]))
                    && let Some(m) = re.find(&text[ks..])
                {
                    let end = ks + m.end();
                    hits.push(Hit {
                        rule: r,
                        start: ks,
                        end,
                    });
                    found[r] += 1;
                    anchored_at[r] = (ks as u32, (end.max(ks + 1)) as u32);
                }
                for (g, &(_, reach)) in parts.windowed.iter().enumerate() {
                    if mode & (2 << g) == 0 || found[r] >= MAX_PER_RULE {
                        continue;
                    }
                    let st = *spread.get_or_insert_with(|| stretch(text));
                    let (s, e) = window_in(text, st, ks, ke, reach);
                    let (s, e) = (s as u32, e as u32);
                    let slot = r * GROUPS + g;
                    let (ps, pe) = pending[slot];
                    if ps == u32::MAX {
                        pending[slot] = (s, e);
                    } else if s <= pe {
                        pending[slot] = (ps.min(s), pe.max(e));
                    } else {
                        let (ps, pe) = (ps as usize, pe as usize);
                        self.search(text, (r, g), (ps, pe), &mut found[r], &mut hits);
                        pending[slot] = (s, e);
                    }
                }
            }
        });
        for (slot, &(ps, pe)) in pending.iter().enumerate().take(n * GROUPS) {
            let (r, g) = (slot / GROUPS, slot % GROUPS);
            if ps != u32::MAX && found[r] < MAX_PER_RULE {
                let (ps, pe) = (ps as usize, pe as usize);
                self.search(text, (r, g), (ps, pe), &mut found[r], &mut hits);
            }
        }
        hits.sort_by_key(|h| (h.rule, h.start));
        for h in hits {
            hit(h);
        }
    }

    /// Searches windowed group `g` of rule `r` in `text[s..e]` (with the text before `s` as
    /// context for `\b`).
    fn search(
        &self,
        text: &str,
        (r, g): (usize, usize),
        (s, e): (usize, usize),
        found: &mut u8,
        out: &mut Vec<Hit>,
    ) {
        let Some((re, _)) = self.rules[r].parts().ok().and_then(|p| p.windowed.get(g)) else {
            return;
        };
        let hay = &text[..e];
        let mut at = s;
        while *found < MAX_PER_RULE && at <= e {
            let Some(m) = re.search(&Input::new(hay).range(at..)) else {
                break;
            };
            out.push(Hit {
                rule: r,
                start: m.start(),
                end: m.end(),
            });
            *found += 1;
            at = if m.end() > m.start() {
                m.end()
            } else {
                hay[m.end()..]
                    .chars()
                    .next()
                    .map_or(e + 1, |c| m.end() + c.len_utf8())
            };
        }
    }

    /// True when the scan of `text` finds rule `r` (in a direction the rule applies to).
    pub fn finds(&self, text: &str, r: usize) -> bool {
        [Direction::User, Direction::Tool]
            .into_iter()
            .filter(|&d| self.rules[r].applies(d))
            .any(|d| {
                let mut yes = false;
                self.scan(text, d, |h| yes |= h.rule == r);
                yes
            })
    }

    /// How many rules have their regexes built (all of them once [`RuleSet::compile`] returns).
    pub fn built(&self) -> usize {
        self.rules
            .iter()
            .filter(|r| r.parts.get().is_some())
            .count()
    }

    /// True when the prefilter wakes rule `r` for `text`.
    pub fn prefilter_wakes(&self, text: &str, r: usize) -> bool {
        let mut yes = false;
        self.keyword_hits(text, |k, _, _| {
            yes |= self.keyword_rules[k].iter().any(|&(x, ki)| {
                usize::from(x) == r
                    && self.rules[r]
                        .parts()
                        .is_ok_and(|p| p.modes.get(usize::from(ki)).is_some_and(|&m| m != 0))
            });
        });
        yes
    }

    /// Calls `f(keyword, start, end)` for every keyword occurrence (overlapping, in order of
    /// their end) that starts where its keyword may start. Each run of ASCII whitespace reads as
    /// one space, so "care about" is found in "care \n about".
    fn keyword_hits(&self, text: &str, mut f: impl FnMut(usize, usize, usize)) {
        let t = &self.prefilter;
        let trans = t.trans();
        let b = text.as_bytes();
        // Hits are buffered so the byte loop stays small; the caller's work runs per batch.
        let mut buf = [(0u32, 0u32, 0u32); HIT_BATCH];
        let mut n = 0usize;
        let mut sid = t.start;
        for (i, &c) in b.iter().enumerate() {
            // Whitespace runs are read as one space by the table itself (see [`KeywordTable`]).
            sid = keyword_table::next(trans, sid, t.class[usize::from(c)]);
            if sid >= t.first_match {
                n = self.matches(b, i, sid, &mut buf, n);
                if n > HIT_BATCH / 2 {
                    for &(k, s, e) in &buf[..n] {
                        f(k as usize, s as usize, e as usize);
                    }
                    n = 0;
                }
            }
        }
        for &(k, s, e) in &buf[..n] {
            f(k as usize, s as usize, e as usize);
        }
    }

    /// Appends to `buf[n..]` the keywords of match state `sid`, ending at `b[i]`, that start
    /// where they may (at most half a batch, `n` being at most half); returns the new length.
    #[inline(never)]
    fn matches(
        &self,
        b: &[u8],
        i: usize,
        sid: u32,
        buf: &mut [(u32, u32, u32); HIT_BATCH],
        mut n: usize,
    ) -> usize {
        let t = &self.prefilter;
        let limit = (n + HIT_BATCH / 2).min(HIT_BATCH);
        for (k, len) in t.matches(sid) {
            let start = start_of(b, i, len as usize);
            // A keyword beginning with a letter or digit counts only at the start of a word.
            let word_ok =
                !self.word_start[k as usize] || start == 0 || !b[start - 1].is_ascii_alphanumeric();
            if word_ok && n < limit {
                buf[n] = (k, start as u32, (i + 1) as u32);
                n += 1;
            }
        }
        n
    }
}

impl RuleSet {
    /// True when the scan finds rule `r` in `text` (raw or normalised), through the prefilter
    /// and the keyword windows: the check that neither hides a rule's examples.
    pub fn example_matches(&self, r: usize, text: &str) -> bool {
        let norm = crate::normalise::normalise(text);
        [text, norm.text.as_ref()].iter().any(|t| self.finds(t, r))
    }

    /// True when rule `r`'s pattern matches `text` in any form, prefilter or not.
    pub fn pattern_matches(&self, r: usize, text: &str) -> bool {
        let norm = crate::normalise::normalise(text);
        self.rules[r]
            .regex()
            .is_some_and(|re| re.is_match(text) || re.is_match(&norm.text))
    }

    /// Checks every rule's examples: each `match` must match (through the prefilter), no
    /// `not_match` may. Run by the tests for the shipped rules and at load for user rules.
    pub fn check_examples(&self) -> Result<(), Error> {
        let mut problems = Vec::new();
        for (r, rule) in self.rules.iter().enumerate() {
            for ex in &rule.must_match {
                if !self.example_matches(r, ex) {
                    problems.push(format!("{}: should match {ex:?}", rule.id));
                }
            }
            for ex in &rule.not_match {
                if self.pattern_matches(r, ex) {
                    problems.push(format!("{}: should not match {ex:?}", rule.id));
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Error::Rules {
                file: "(examples)".into(),
                message: problems.join("\n"),
            })
        }
    }

    /// Rule indices whose pattern matches `text` although the scan (prefilter and keyword
    /// windows) finds them neither in `text` nor in its normalised form, the two forms the
    /// scanner reads (must always be empty; the tests run it over real corpora).
    pub fn hidden_by_prefilter(&self, text: &str) -> Vec<usize> {
        let norm = crate::normalise::normalise(text);
        (0..self.rules.len())
            .filter(|&r| {
                self.rules[r].regex().is_some_and(|re| re.is_match(text))
                    && !self.finds(text, r)
                    && !self.finds(&norm.text, r)
            })
            .collect()
    }
}

/// ASCII whitespace (what `\s` matches in ASCII).
pub(crate) static SPACE: [bool; 256] = {
    let mut t = [false; 256];
    t[b' ' as usize] = true;
    t[b'\t' as usize] = true;
    t[b'\n' as usize] = true;
    t[b'\r' as usize] = true;
    t[0x0B] = true;
    t[0x0C] = true;
    t
};

/// Where a keyword of `len` bytes ends at `b[last]` starts, each whitespace run before `last`
/// counting as one byte (the keyword loop reads runs so).
pub(crate) fn start_of(b: &[u8], last: usize, len: usize) -> usize {
    let mut j = last + 1;
    let mut left = len;
    while left > 0 && j > 0 {
        j -= 1;
        if SPACE[usize::from(b[j])] {
            while j > 0 && SPACE[usize::from(b[j - 1])] {
                j -= 1;
            }
        }
        left -= 1;
    }
    j
}

/// True when `head` ends in a word character (`\w`: a letter, digit or underscore).
fn ends_in_word_char(head: &str) -> bool {
    head.chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use aho_corasick::Anchored;
    use aho_corasick::automaton::Automaton;

    #[test]
    fn shipped_rules_compile_and_their_examples_hold() {
        let set = RuleSet::compile(BUILTIN).unwrap();
        assert!(set.rules.len() >= 20);
        if let Err(e) = set.check_examples() {
            panic!("{e}");
        }
    }

    /// Every example of every shipped rule, in both directions, scanned by a set built at load
    /// and by one built lazily: the same hits, so building on first use changes nothing.
    #[test]
    fn lazy_and_eager_sets_find_the_same() {
        let eager = RuleSet::compile(BUILTIN).unwrap();
        let lazy = RuleSet::compile_lazy(BUILTIN).unwrap();
        assert_eq!(lazy.built(), 0);
        let hits = |set: &RuleSet, text: &str, d: Direction| {
            let mut v = Vec::new();
            set.scan(text, d, |h| v.push((h.rule, h.start, h.end)));
            v
        };
        let mut texts: Vec<&str> = Vec::new();
        for r in &eager.rules {
            texts.extend(r.must_match.iter().map(String::as_str));
            texts.extend(r.not_match.iter().map(String::as_str));
        }
        let mut found = 0;
        for t in &texts {
            for d in [Direction::User, Direction::Tool] {
                let want = hits(&eager, t, d);
                found += want.len();
                assert_eq!(hits(&lazy, t, d), want, "{t:?} {d:?}");
            }
        }
        assert!(found > texts.len());
    }

    /// A short ordinary text builds few of the shipped rules.
    #[test]
    fn a_short_text_builds_few_rules() {
        let lazy = RuleSet::compile_lazy(BUILTIN).unwrap();
        lazy.scan(
            "What time does the library open on Sunday?",
            Direction::User,
            |_| (),
        );
        assert!(
            lazy.built() * 4 < lazy.rules.len(),
            "{} of {} built",
            lazy.built(),
            lazy.rules.len()
        );
    }

    /// A pattern that does not build fails at load when built eagerly; built lazily (never for
    /// files a person supplies), it is reported as a match when woken, so the scan denies.
    #[test]
    fn a_rule_that_does_not_build_fails_or_denies() {
        let file = "[[rule]]\nid = \"t.bad\"\nkind = \"attack\"\ncategory = \"c\"\nweight = 0.9\nkeywords = [\"oops\"]\npattern = '''oops(\\w+'''\nmessage = \"m\"\nmatch = [\"oops\"]\n";
        assert!(RuleSet::compile(&[("bad.toml", file)]).is_err());
        let lazy = RuleSet::compile_lazy(&[("bad.toml", file)]).unwrap();
        let mut hits = Vec::new();
        lazy.scan("well oops there", Direction::User, |h| hits.push(h.rule));
        assert_eq!(hits, vec![0]);
        let mut none = Vec::new();
        lazy.scan("all fine here", Direction::User, |h| none.push(h.rule));
        assert!(none.is_empty());
    }

    #[test]
    fn rule_ids_are_unique_and_namespaced() {
        let set = RuleSet::compile(BUILTIN).unwrap();
        let mut ids: Vec<&str> = set.rules.iter().map(|r| r.id.as_str()).collect();
        assert!(ids.iter().all(|i| i.contains('.')));
        ids.sort_unstable();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n);
    }

    /// The keyword hits as the crate's automaton, walked byte by byte with each whitespace run
    /// read as one space, reports them: what the flat table must reproduce exactly.
    fn reference_hits(set: &RuleSet, dfa: &DFA, text: &str) -> Vec<(usize, usize, usize)> {
        let b = text.as_bytes();
        let mut sid = dfa.start_state(Anchored::No).unwrap();
        let mut in_space = false;
        let mut out = Vec::new();
        for (i, &c) in b.iter().enumerate() {
            let space = SPACE[usize::from(c)];
            if space && in_space {
                continue;
            }
            in_space = space;
            sid = dfa.next_state(Anchored::No, sid, if space { b' ' } else { c });
            if dfa.is_special(sid) && dfa.is_match(sid) {
                for j in 0..dfa.match_len(sid) {
                    let k = dfa.match_pattern(sid, j);
                    let start = start_of(b, i, dfa.pattern_len(k));
                    if !set.word_start[k.as_usize()]
                        || start == 0
                        || !b[start - 1].is_ascii_alphanumeric()
                    {
                        out.push((k.as_usize(), start, i + 1));
                    }
                }
            }
        }
        out
    }

    #[test]
    fn keyword_table_walks_like_the_automaton() {
        let extra = [(
            "x.toml",
            r#"[[rule]]
id = "t.space"
kind = "attack"
category = "c"
weight = 0.5
keywords = ["2 ", " zq", "care  about", "zz"]
pattern = '\b(?:2 |care\s+about|zz)| zq'
message = "m"
match = ["care about"]
"#,
        )];
        for files in [BUILTIN, &extra[..]] {
            let set = RuleSet::compile(files).unwrap();
            let dfa = DFA::builder()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .start_kind(StartKind::Unanchored)
                .prefilter(false)
                .build(&set.keywords)
                .unwrap();
            let mut pieces: Vec<String> = set.keywords.clone();
            for p in [
                " ", "  ", "\n\t ", "\r\n", "x", "A", ".", "é", "2", "-", "\u{212A}",
            ] {
                pieces.push(p.to_string());
            }
            let mut next = crate::test_rng::xorshift(0x9E37_79B9_7F4A_7C15u64);
            for _ in 0..2000 {
                let n = (next() % 24) as usize;
                let mut text = String::new();
                for _ in 0..n {
                    let p = &pieces[(next() % pieces.len() as u64) as usize];
                    if next().is_multiple_of(3) {
                        text.push_str(&p.to_uppercase());
                    } else {
                        text.push_str(p);
                    }
                }
                let mut got = Vec::new();
                set.keyword_hits(&text, |k, s, e| got.push((k, s, e)));
                assert_eq!(got, reference_hits(&set, &dfa, &text), "{text:?}");
            }
        }
    }

    #[test]
    fn a_set_larger_than_the_stack_state_finds_its_last_rules() {
        // Past `STACK_RULES`, a scan keeps its per-rule state on the heap: the rules at the end
        // are found as the first ones are, windowed and anchored alike.
        let rule = |i: usize| {
            format!(
                "[[rule]]\nid = \"t.r{i}\"\nkind = \"attack\"\ncategory = \"c\"\nweight = 0.5\nkeywords = [\"word{i}x\"]\npattern = '''\\bword{i}x\\s+\\w+\\b'''\nmessage = \"m\"\nmatch = [\"word{i}x here\"]\n"
            )
        };
        let file: String = (0..STACK_RULES + 10).map(rule).collect();
        let set = RuleSet::compile(&[("big.toml", &file)]).unwrap();
        assert_eq!(set.rules.len(), STACK_RULES + 10);
        for r in [0, STACK_RULES - 1, STACK_RULES, STACK_RULES + 9] {
            let text = format!("first word{r}x there, then word{r}x again");
            let mut hits = Vec::new();
            set.scan(&text, Direction::User, |h| {
                hits.push((h.rule, h.start, h.end))
            });
            let at = text.find("word").unwrap();
            let again = text.rfind("word").unwrap();
            assert_eq!(hits.len(), 2, "{text}: {hits:?}");
            assert_eq!((hits[0].0, hits[0].1), (r, at));
            assert_eq!((hits[1].0, hits[1].1), (r, again));
        }
    }

    #[test]
    fn bad_rule_files_are_rejected() {
        assert!(RuleSet::compile(&[("x.toml", "[[rule]]\nid = 1")]).is_err());
        let bad_regex = r#"[[rule]]
id = "a.b"
kind = "attack"
category = "c"
weight = 0.5
keywords = ["x"]
pattern = "("
message = "m"
match = ["x"]
"#;
        assert!(RuleSet::compile(&[("x.toml", bad_regex)]).is_err());
    }
}
