//! Text rules as data: `rules/text/*.toml`, compiled into the binary. Each rule names the
//! literal keywords that any match must contain (the Aho-Corasick prefilter), one regular
//! expression, a weight, and examples that must and must not match (checked by tests, and at
//! load time for user-supplied rule files through [`RuleSet::check_examples`]).

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::Regex;
use serde::Deserialize;

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
                    regex,
                    must_match: spec.must_match,
                    not_match: spec.not_match,
                });
            }
        }
        let prefilter = AhoCorasickBuilder::new()
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

    /// Runs the prefilter then the woken rules over `text`, calling `hit` for each match (at
    /// most a few per rule). Allocates nothing when no keyword occurs.
    pub fn scan(&self, text: &str, dir: Direction, mut hit: impl FnMut(Hit)) {
        let mut woken = [0u64; MAX_RULES / 64];
        let mut any = false;
        for m in self.prefilter.find_overlapping_iter(text) {
            if !self.at_word_start(text, m.pattern().as_usize(), m.start()) {
                continue;
            }
            for &r in &self.keyword_rules[m.pattern().as_usize()] {
                let r = usize::from(r);
                if r < MAX_RULES {
                    woken[r / 64] |= 1 << (r % 64);
                    any = true;
                }
            }
        }
        if !any {
            return;
        }
        for (r, rule) in self.rules.iter().enumerate() {
            if r >= MAX_RULES || woken[r / 64] & (1 << (r % 64)) == 0 || !rule.applies(dir) {
                continue;
            }
            for m in rule.regex.find_iter(text).take(4) {
                hit(Hit {
                    rule: r,
                    start: m.start(),
                    end: m.end(),
                });
            }
        }
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
    /// True when rule `r` matches `text` (raw or normalised) with the prefilter waking it on the
    /// same form: the check that the prefilter never hides a rule's examples.
    pub fn example_matches(&self, r: usize, text: &str) -> bool {
        let norm = crate::normalize::normalize(text);
        let rule = &self.rules[r];
        [text, norm.text.as_ref()]
            .iter()
            .any(|t| rule.regex.is_match(t) && self.prefilter_wakes(t, r))
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

    /// Rule indices whose pattern matches `text` although the prefilter did not wake them
    /// (must always be empty; the eval and tests run it over whole corpora).
    pub fn hidden_by_prefilter(&self, text: &str) -> Vec<usize> {
        (0..self.rules.len())
            .filter(|&r| self.rules[r].regex.is_match(text) && !self.prefilter_wakes(text, r))
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
