//! Rule packs: TOML files under `rules/shell/`, compiled once into a prefiltered matcher.
//!
//! A rule matches one *text* produced by the analyser (a command's canonical argv, a pipeline,
//! a redirection target, or inline interpreter code). An Aho-Corasick pass over every rule's
//! literal keywords picks the candidates; only the candidates' own regexes then run. A rule whose
//! keywords do not occur is never tried, so every rule must carry keywords that its matches
//! always contain (a test checks every example against the prefilter).
//!
//! Regexes compile lazily, the first time the prefilter names their rule: compiling every
//! pack up front cost ~100 ms, which every hook process would pay. Loading only checks the
//! syntax (cheap); the tests compile every pattern, so a broken rule still fails the build.
//!
//! Why not one `RegexSet` over all rules: with a few hundred patterns its lazy DFA outgrows its
//! cache and matching slowed from ~2 µs to ~150 µs per text; candidates average under five.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use airlock_core::{Decision, Severity, Tier};
use regex::{Regex, RegexBuilder};
use serde::Deserialize;
use std::sync::OnceLock;

/// What text a rule looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// One simple command after unwrapping, rendered as a quoted argv: `rm -rf /`.
    Command,
    /// A whole pipeline: the stages' canonical commands joined by ` | `.
    Pipeline,
    /// The static target path of an output redirection (`> /dev/sda`).
    Redirect,
    /// Inline interpreter code (`python -c CODE`, `perl -e CODE`, heredoc bodies for them).
    Code,
}

impl Target {
    pub const ALL: [Target; 4] = [
        Target::Command,
        Target::Pipeline,
        Target::Redirect,
        Target::Code,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// One pack file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackFile {
    pub pack: String,
    pub description: String,
    #[serde(default, rename = "rules")]
    pub rules: Vec<RuleSpec>,
}

/// One rule as written in a pack file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    pub id: String,
    #[serde(default = "default_target")]
    pub on: Target,
    /// Literal keywords (matched ASCII case-insensitively); at least one occurs in every match.
    pub keywords: Vec<String>,
    /// Regex over the text.
    pub pattern: String,
    /// Optional regex; when it also matches, the rule does not fire.
    #[serde(default)]
    pub unless: Option<String>,
    pub decision: Decision,
    pub tier: u8,
    pub severity: Severity,
    pub message: String,
    #[serde(default)]
    pub remediation: String,
    /// Whole command lines that must produce this rule.
    #[serde(rename = "match")]
    pub examples: Vec<String>,
    /// Whole command lines that must not produce this rule.
    #[serde(default, rename = "not_match")]
    pub counter_examples: Vec<String>,
}

fn default_target() -> Target {
    Target::Command
}

/// A compiled rule.
#[derive(Debug)]
pub struct Rule {
    /// `pack.rule`.
    pub id: String,
    pub on: Target,
    pub decision: Decision,
    pub tier: Tier,
    pub severity: Severity,
    pub message: String,
    pub remediation: String,
    pub pattern: String,
    pub unless: Option<String>,
    compiled: OnceLock<Compiled>,
    pub keywords: Vec<String>,
    pub examples: Vec<String>,
    pub counter_examples: Vec<String>,
}

/// A rule's compiled regexes; `None` when a pattern failed to compile (over the size limit).
struct Compiled {
    pattern: Option<Regex>,
    unless: Option<Option<Regex>>,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Compiled")
    }
}

fn compile(p: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(p).size_limit(8 << 20).build()
}

fn check_syntax(p: &str) -> Result<(), String> {
    regex_syntax::Parser::new()
        .parse(p)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

impl Rule {
    fn compiled(&self) -> &Compiled {
        self.compiled.get_or_init(|| Compiled {
            pattern: compile(&self.pattern).ok(),
            unless: self.unless.as_deref().map(|u| compile(u).ok()),
        })
    }

    /// Whether the rule fires on `text`. A pattern that failed to compile fires (fail closed);
    /// an `unless` that failed to compile never excuses.
    pub fn fires(&self, text: &str) -> bool {
        let c = self.compiled();
        let hit = c.pattern.as_ref().is_none_or(|r| r.is_match(text));
        let excused = matches!(&c.unless, Some(Some(u)) if u.is_match(text));
        hit && !excused
    }

    /// Compiles the rule's regexes now, reporting failures (used by tests and policy checks).
    pub fn compile_now(&self) -> Result<(), String> {
        compile(&self.pattern).map_err(|e| format!("{}: pattern: {e}", self.id))?;
        if let Some(u) = &self.unless {
            compile(u).map_err(|e| format!("{}: unless: {e}", self.id))?;
        }
        Ok(())
    }
}

/// Errors found while loading rule packs: a broken rule fails at load, never in production.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("{file}: invalid TOML: {source}")]
    Toml {
        file: String,
        #[source]
        source: toml::de::Error,
    },
    #[error("rule {id}: {problem}")]
    Invalid { id: String, problem: String },
    #[error("rule set: {0}")]
    Build(String),
}

/// All compiled rules with their prefilter.
pub struct RuleSet {
    rules: Vec<Rule>,
    /// Keyword automaton; pattern `k` belongs to rule `keyword_owner[k]`.
    keywords: AhoCorasick,
    keyword_owner: Vec<usize>,
    /// Rule indices per text kind.
    kinds: Vec<Vec<usize>>,
}

impl std::fmt::Debug for RuleSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuleSet")
            .field("rules", &self.rules.len())
            .finish()
    }
}

/// Pack files compiled into the binary, as `(file name, contents)`.
pub const BUILTIN_PACKS: &[(&str, &str)] = &include!(concat!(env!("OUT_DIR"), "/packs.rs"));

impl RuleSet {
    /// Parses and compiles pack files.
    pub fn from_packs<'a>(
        packs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, RuleError> {
        let mut rules = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut kinds: Vec<Vec<usize>> = vec![Vec::new(); Target::ALL.len()];
        for (file, text) in packs {
            let pack: PackFile = toml::from_str(text).map_err(|source| RuleError::Toml {
                file: file.to_string(),
                source,
            })?;
            for spec in pack.rules {
                let id = format!("{}.{}", pack.pack, spec.id);
                let bad = |problem: &str| RuleError::Invalid {
                    id: id.clone(),
                    problem: problem.to_string(),
                };
                if !seen.insert(id.clone()) {
                    return Err(bad("duplicate rule id"));
                }
                if spec.keywords.is_empty() || spec.keywords.iter().any(|k| k.trim().is_empty()) {
                    return Err(bad("needs at least one non-empty keyword"));
                }
                if spec.examples.is_empty() {
                    return Err(bad("needs at least one `match` example"));
                }
                if spec.message.trim().is_empty() {
                    return Err(bad("needs a message"));
                }
                let tier = Tier::try_from(spec.tier).map_err(|e| bad(&e))?;
                check_syntax(&spec.pattern).map_err(|e| bad(&format!("pattern: {e}")))?;
                if let Some(u) = &spec.unless {
                    check_syntax(u).map_err(|e| bad(&format!("unless: {e}")))?;
                }
                kinds[spec.on.index()].push(rules.len());
                rules.push(Rule {
                    id,
                    on: spec.on,
                    decision: spec.decision,
                    tier,
                    severity: spec.severity,
                    message: spec.message,
                    remediation: spec.remediation,
                    pattern: spec.pattern,
                    unless: spec.unless,
                    compiled: OnceLock::new(),
                    keywords: spec
                        .keywords
                        .iter()
                        .map(|k| k.to_ascii_lowercase())
                        .collect(),
                    examples: spec.examples,
                    counter_examples: spec.counter_examples,
                });
            }
        }
        let mut kw = Vec::new();
        let mut keyword_owner = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            for k in &r.keywords {
                kw.push(k.clone());
                keyword_owner.push(i);
            }
        }
        let keywords = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&kw)
            .map_err(|e| RuleError::Build(e.to_string()))?;
        Ok(RuleSet {
            rules,
            keywords,
            keyword_owner,
            kinds,
        })
    }

    /// The packs compiled into the binary.
    pub fn builtin() -> Result<Self, RuleError> {
        Self::from_packs(BUILTIN_PACKS.iter().copied())
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Rules of kind `on` that match `text`. With `prefilter` off every rule of the kind is
    /// tried (used by the test that proves the prefilter hides nothing).
    pub fn matches(&self, on: Target, text: &str, prefilter: bool) -> Vec<&Rule> {
        let fires = |r: &Rule| r.fires(text);
        if !prefilter {
            return self.kinds[on.index()]
                .iter()
                .map(|&i| &self.rules[i])
                .filter(|r| fires(r))
                .collect();
        }
        let mut candidates: Vec<usize> = self
            .keywords
            .find_overlapping_iter(text)
            .map(|m| self.keyword_owner[m.pattern().as_usize()])
            .filter(|&r| self.rules[r].on == on)
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        candidates
            .into_iter()
            .map(|i| &self.rules[i])
            .filter(|r| fires(r))
            .collect()
    }
}
