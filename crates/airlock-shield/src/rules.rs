//! Text rules as data: `rules/text/*.toml`, compiled into the binary. Each rule names the
//! literal keywords that any match must contain (the Aho-Corasick prefilter), one regular
//! expression, a weight, and examples that must and must not match (checked by tests, and at
//! load time for user-supplied rule files through [`RuleSet::check_examples`]).
//!
//! A keyword hit wakes its rules, and each woken rule's regex runs only on a window around the
//! hit as wide as the rule's [`reach`](crate::reach) (overlapping windows of one rule merged), so
//! common keywords cost a short search each rather than a pass over the whole text.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::Regex;
use serde::Deserialize;

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
];

/// The prefilter keeps its woken set in a fixed bit array of this many rules.
pub const MAX_RULES: usize = 512;
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
    /// How far (in characters) a match can reach from its keyword.
    pub reach: usize,
    user: bool,
    tool: bool,
    regex: Regex,
    pub must_match: Vec<String>,
    pub not_match: Vec<String>,
}

impl Rule {
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
    prefilter: AhoCorasick,
    /// For each prefilter pattern, the rules it can wake.
    keyword_rules: Vec<Vec<u16>>,
    /// Keywords that begin with a letter or digit only count at the start of a word, so "ai"
    /// is not woken by "said" (every pattern starts its words at `\b`).
    word_start: Vec<bool>,
}

/// A rule match inside one text.
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    pub rule: usize,
    pub start: usize,
    pub end: usize,
}

impl RuleSet {
    /// Parses and compiles rule files `(name, toml)`.
    pub fn compile(files: &[(&str, &str)]) -> Result<RuleSet, Error> {
        let mut rules = Vec::new();
        let mut keywords: Vec<String> = Vec::new();
        let mut keyword_rules: Vec<Vec<u16>> = Vec::new();
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
                let regex = regex::RegexBuilder::new(&spec.pattern)
                    .case_insensitive(true)
                    .size_limit(4 << 20)
                    .build()
                    .map_err(|e| bad(e.to_string()))?;
                let idx = u16::try_from(rules.len()).map_err(|_| bad("too many rules".into()))?;
                for k in &spec.keywords {
                    let k = k.to_ascii_lowercase();
                    match keywords.iter().position(|x| *x == k) {
                        Some(p) => keyword_rules[p].push(idx),
                        None => {
                            keywords.push(k);
                            keyword_rules.push(vec![idx]);
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
                    reach: reach(&spec.pattern),
                    regex,
                    must_match: spec.must_match,
                    not_match: spec.not_match,
                });
            }
        }
        // A DFA: the overlapping search runs over every text, several times faster than the NFA.
        let prefilter = AhoCorasickBuilder::new()
            .kind(Some(AhoCorasickKind::DFA))
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&keywords)
            .map_err(|e| Error::Rules {
                file: "(prefilter)".into(),
                message: e.to_string(),
            })?;
        let word_start = keywords
            .iter()
            .map(|k| k.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric()))
            .collect();
        Ok(RuleSet {
            rules,
            prefilter,
            keyword_rules,
            word_start,
        })
    }

    /// Runs the prefilter, then each woken rule on the windows around its keyword hits, calling
    /// `hit` for each match (at most four per rule), rule by rule in rule order. Allocates
    /// nothing when no rule matches.
    pub fn scan(&self, text: &str, dir: Direction, mut hit: impl FnMut(Hit)) {
        let n = self.rules.len().min(MAX_RULES);
        // Per rule: the pending window (start, end) not yet searched, and matches found so far.
        let mut pending = [(u32::MAX, 0u32); MAX_RULES];
        let mut found = [0u8; MAX_RULES];
        let mut hits: Vec<Hit> = Vec::new();
        let mut spread: Option<Option<usize>> = None;
        for m in self.prefilter.find_overlapping_iter(text) {
            let k = m.pattern().as_usize();
            if !self.at_word_start(text, k, m.start()) {
                continue;
            }
            for &r in &self.keyword_rules[k] {
                let r = usize::from(r);
                if r >= n || found[r] >= MAX_PER_RULE || !self.rules[r].applies(dir) {
                    continue;
                }
                let st = *spread.get_or_insert_with(|| stretch(text));
                let (s, e) = window_in(text, st, m.start(), m.end(), self.rules[r].reach);
                let (s, e) = (s as u32, e as u32);
                let (ps, pe) = pending[r];
                if ps == u32::MAX {
                    pending[r] = (s, e);
                } else if s <= pe {
                    pending[r] = (ps.min(s), pe.max(e));
                } else {
                    self.search(text, r, ps as usize, pe as usize, &mut found[r], &mut hits);
                    pending[r] = (s, e);
                }
            }
        }
        for r in 0..n {
            let (ps, pe) = pending[r];
            if ps != u32::MAX && found[r] < MAX_PER_RULE {
                self.search(text, r, ps as usize, pe as usize, &mut found[r], &mut hits);
            }
        }
        hits.sort_by_key(|h| (h.rule, h.start));
        for h in hits {
            hit(h);
        }
    }

    /// Searches rule `r` in `text[s..e]` (with the text before `s` as context for `\b`).
    fn search(&self, text: &str, r: usize, s: usize, e: usize, found: &mut u8, out: &mut Vec<Hit>) {
        let hay = &text[..e];
        let mut at = s;
        while *found < MAX_PER_RULE && at <= e {
            let Some(m) = self.rules[r].regex.find_at(hay, at) else {
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

    /// True when the prefilter wakes rule `r` for `text`.
    pub fn prefilter_wakes(&self, text: &str, r: usize) -> bool {
        self.prefilter
            .find_overlapping_iter(text)
            .filter(|m| self.at_word_start(text, m.pattern().as_usize(), m.start()))
            .any(|m| self.keyword_rules[m.pattern().as_usize()].contains(&(r as u16)))
    }

    fn at_word_start(&self, text: &str, k: usize, start: usize) -> bool {
        !self.word_start[k] || start == 0 || !text.as_bytes()[start - 1].is_ascii_alphanumeric()
    }
}

impl RuleSet {
    /// True when the scan finds rule `r` in `text` (raw or normalised), through the prefilter
    /// and the keyword windows: the check that neither hides a rule's examples.
    pub fn example_matches(&self, r: usize, text: &str) -> bool {
        let norm = crate::normalize::normalize(text);
        [text, norm.text.as_ref()].iter().any(|t| self.finds(t, r))
    }

    /// True when rule `r`'s pattern matches `text` in any form, prefilter or not.
    pub fn pattern_matches(&self, r: usize, text: &str) -> bool {
        let norm = crate::normalize::normalize(text);
        let rule = &self.rules[r];
        rule.regex.is_match(text) || rule.regex.is_match(&norm.text)
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
    /// windows) does not find them (must always be empty; the tests run it over real corpora).
    pub fn hidden_by_prefilter(&self, text: &str) -> Vec<usize> {
        (0..self.rules.len())
            .filter(|&r| self.rules[r].regex.is_match(text) && !self.finds(text, r))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_rules_compile_and_their_examples_hold() {
        let set = RuleSet::compile(BUILTIN).unwrap();
        assert!(set.rules.len() >= 20);
        if let Err(e) = set.check_examples() {
            panic!("{e}");
        }
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
