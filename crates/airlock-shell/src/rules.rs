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
use std::borrow::Cow;
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

/// A compiled rule. Built-in rules borrow their text from the binary.
#[derive(Debug)]
pub struct Rule {
    /// `pack.rule`.
    pub id: String,
    pub on: Target,
    pub decision: Decision,
    pub tier: Tier,
    pub severity: Severity,
    pub message: Cow<'static, str>,
    pub remediation: Cow<'static, str>,
    pub pattern: Cow<'static, str>,
    pub unless: Option<Cow<'static, str>>,
    compiled: OnceLock<Compiled>,
    pub keywords: Vec<Cow<'static, str>>,
    pub examples: Vec<Cow<'static, str>>,
    pub counter_examples: Vec<Cow<'static, str>>,
}

/// A built-in rule as `build.rs` pre-parsed it from the packs.
#[derive(Debug)]
pub struct StaticRule {
    pub pack: &'static str,
    pub id: &'static str,
    pub on: Target,
    pub keywords: &'static [&'static str],
    pub pattern: &'static str,
    pub unless: Option<&'static str>,
    pub decision: Decision,
    pub tier: i64,
    pub severity: Severity,
    pub message: &'static str,
    pub remediation: &'static str,
    pub examples: &'static [&'static str],
    pub counter_examples: &'static [&'static str],
}

/// The built-in packs, pre-parsed.
pub const BUILTIN_TABLE: &[StaticRule] = include!(concat!(env!("OUT_DIR"), "/table.rs"));

/// A rule before validation, from either source.
struct Draft {
    id: String,
    on: Target,
    keywords: Vec<Cow<'static, str>>,
    pattern: Cow<'static, str>,
    unless: Option<Cow<'static, str>>,
    decision: Decision,
    tier: i64,
    severity: Severity,
    message: Cow<'static, str>,
    remediation: Cow<'static, str>,
    examples: Vec<Cow<'static, str>>,
    counter_examples: Vec<Cow<'static, str>>,
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
    // the AST parse catches syntax errors without the cost of translating Unicode classes
    // (that translation was ~0.4M instructions per pattern); compile errors are left to tests
    regex_syntax::ast::parse::Parser::new()
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
    /// Parses pack files and checks every pattern's syntax (regexes compile on first use).
    pub fn from_packs<'a>(
        packs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, RuleError> {
        let mut drafts = Vec::new();
        for (file, text) in packs {
            let pack: PackFile = toml::from_str(text).map_err(|source| RuleError::Toml {
                file: file.to_string(),
                source,
            })?;
            for spec in pack.rules {
                drafts.push(Draft {
                    id: format!("{}.{}", pack.pack, spec.id),
                    on: spec.on,
                    keywords: spec
                        .keywords
                        .iter()
                        .map(|k| Cow::Owned(k.to_ascii_lowercase()))
                        .collect(),
                    pattern: Cow::Owned(spec.pattern),
                    unless: spec.unless.map(Cow::Owned),
                    decision: spec.decision,
                    tier: i64::from(spec.tier),
                    severity: spec.severity,
                    message: Cow::Owned(spec.message),
                    remediation: Cow::Owned(spec.remediation),
                    examples: spec.examples.into_iter().map(Cow::Owned).collect(),
                    counter_examples: spec.counter_examples.into_iter().map(Cow::Owned).collect(),
                });
            }
        }
        Self::load(drafts, true)
    }

    /// The packs compiled into the binary, pre-parsed by `build.rs`. Their patterns are not
    /// re-checked here: the tests compile every one of them, and every hook process would pay.
    pub fn builtin() -> Result<Self, RuleError> {
        let drafts = BUILTIN_TABLE
            .iter()
            .map(|r| Draft {
                id: format!("{}.{}", r.pack, r.id),
                on: r.on,
                keywords: r.keywords.iter().map(|k| Cow::Borrowed(*k)).collect(),
                pattern: Cow::Borrowed(r.pattern),
                unless: r.unless.map(Cow::Borrowed),
                decision: r.decision,
                tier: r.tier,
                severity: r.severity,
                message: Cow::Borrowed(r.message),
                remediation: Cow::Borrowed(r.remediation),
                examples: r.examples.iter().map(|e| Cow::Borrowed(*e)).collect(),
                counter_examples: r
                    .counter_examples
                    .iter()
                    .map(|e| Cow::Borrowed(*e))
                    .collect(),
            })
            .collect();
        Self::load(drafts, false)
    }

    fn load(drafts: Vec<Draft>, check_patterns: bool) -> Result<Self, RuleError> {
        let mut rules = Vec::with_capacity(drafts.len());
        let mut seen = std::collections::HashSet::new();
        let mut kinds: Vec<Vec<usize>> = vec![Vec::new(); Target::ALL.len()];
        for d in drafts {
            let bad = |problem: &str| RuleError::Invalid {
                id: d.id.clone(),
                problem: problem.to_string(),
            };
            if !seen.insert(d.id.clone()) {
                return Err(bad("duplicate rule id"));
            }
            if d.keywords.is_empty() || d.keywords.iter().any(|k| k.trim().is_empty()) {
                return Err(bad("needs at least one non-empty keyword"));
            }
            if d.examples.is_empty() {
                return Err(bad("needs at least one `match` example"));
            }
            if d.message.trim().is_empty() {
                return Err(bad("needs a message"));
            }
            let tier = u8::try_from(d.tier)
                .map_err(|_| format!("tier must be 0-4, got {}", d.tier))
                .and_then(Tier::try_from)
                .map_err(|e| bad(&e))?;
            if check_patterns {
                check_syntax(&d.pattern).map_err(|e| bad(&format!("pattern: {e}")))?;
                if let Some(u) = &d.unless {
                    check_syntax(u).map_err(|e| bad(&format!("unless: {e}")))?;
                }
            }
            kinds[d.on.index()].push(rules.len());
            rules.push(Rule {
                id: d.id,
                on: d.on,
                decision: d.decision,
                tier,
                severity: d.severity,
                message: d.message,
                remediation: d.remediation,
                pattern: d.pattern,
                unless: d.unless,
                compiled: OnceLock::new(),
                keywords: d.keywords,
                examples: d.examples,
                counter_examples: d.counter_examples,
            });
        }
        let mut kw: Vec<&str> = Vec::new();
        let mut keyword_owner = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            for k in &r.keywords {
                kw.push(k);
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
