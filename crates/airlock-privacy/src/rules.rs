//! The rule packs: `rules/privacy/*.toml` read and compiled. A rule with keywords is tried only
//! near an occurrence of one of them (the prefilter); a rule without is a shape rule, run in
//! one automaton with every other shape rule.

use regex_automata::meta::Regex;
use regex_automata::util::syntax;
use serde::Deserialize;

/// The built-in packs, as (file name, TOML).
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "secrets.toml",
        include_str!("../../../rules/privacy/secrets.toml"),
    ),
    (
        "personal.toml",
        include_str!("../../../rules/privacy/personal.toml"),
    ),
];

/// What a rule finds: a secret (replaced one way) or personal data (restored in the answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Secret,
    Personal,
}

impl Kind {
    /// The placeholder's tag: `SECRET` or `PII`.
    pub fn tag(self) -> &'static str {
        match self {
            Kind::Secret => "SECRET",
            Kind::Personal => "PII",
        }
    }
}

/// A check a match must pass (see `validate.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    Entropy,
    Mixed,
    NotPlaceholder,
    AssignedSecret,
    Email,
    Phone,
    Luhn,
    Iban,
    PublicIpv4,
    PublicIpv6,
    UsSsn,
    EsDni,
    FrNir,
    UkNino,
    Elfproef,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PackFile {
    kind: Kind,
    rules: Vec<RuleFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    id: String,
    #[serde(default)]
    keywords: Vec<String>,
    before: Option<usize>,
    after: Option<usize>,
    pattern: String,
    #[serde(default)]
    validate: Vec<Check>,
    #[serde(default, rename = "match")]
    examples: Vec<String>,
    #[serde(default)]
    not_match: Vec<String>,
}

/// A compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The rule's id, also the placeholder's type.
    pub id: String,
    pub kind: Kind,
    /// Lower-cased literals; at least one occurs in every match. Empty: a shape rule.
    pub keywords: Vec<String>,
    /// How far before a keyword a match may start.
    pub before: usize,
    /// How far after a keyword a match may end (`None`: anywhere after it).
    pub after: Option<usize>,
    pub pattern: String,
    pub(crate) regex: Regex,
    /// The capture group whose text is replaced, if the rule names one (`secret`).
    pub(crate) group: Option<usize>,
    pub checks: Vec<Check>,
    pub examples: Vec<String>,
    pub counter_examples: Vec<String>,
}

/// A pack that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("{file}: {message}")]
    Toml { file: String, message: String },
    #[error("{file}: rule {id}: {message}")]
    Rule {
        file: String,
        id: String,
        message: String,
    },
}

/// The syntax every pattern is read with: ASCII classes and word boundaries (they keep the
/// lazy DFA usable on any text), matches on bytes.
pub(crate) fn syntax() -> syntax::Config {
    syntax::Config::new().unicode(false).utf8(false)
}

pub(crate) fn compile(patterns: &[&str]) -> Result<Regex, String> {
    build(patterns, true)
}

/// The shape rules together: no literal prefilter (what the engine would pick from classes
/// like `[A-Z]{2}` matches everywhere and costs more than the lazy DFA it gates).
pub(crate) fn compile_shapes(patterns: &[&str]) -> Result<Regex, String> {
    build(patterns, false)
}

fn build(patterns: &[&str], prefilter: bool) -> Result<Regex, String> {
    Regex::builder()
        .syntax(syntax())
        .configure(
            Regex::config()
                .utf8_empty(false)
                .auto_prefilter(prefilter)
                // Several shape patterns in one lazy DFA have many states: a small cache makes
                // it give up and fall back to a slower engine.
                .hybrid_cache_capacity(8 << 20),
        )
        .build_many(patterns)
        .map_err(|e| e.to_string())
}

/// Reads one pack.
pub fn parse_pack(file: &str, text: &str) -> Result<Vec<Rule>, RuleError> {
    let pack: PackFile = toml::from_str(text).map_err(|e| RuleError::Toml {
        file: file.to_string(),
        message: e.to_string(),
    })?;
    let mut out = Vec::new();
    for r in pack.rules {
        let bad = |message: String| RuleError::Rule {
            file: file.to_string(),
            id: r.id.clone(),
            message,
        };
        if r.id.is_empty()
            || !r
                .id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            return Err(bad("the id must be lower-case letters, digits and _".into()));
        }
        if r.keywords.iter().any(|k| k.is_empty() || !k.is_ascii()) {
            return Err(bad("keywords must be non-empty ASCII".into()));
        }
        let regex = compile(&[r.pattern.as_str()]).map_err(&bad)?;
        let group = regex
            .group_info()
            .to_index(regex_automata::PatternID::ZERO, "secret");
        out.push(Rule {
            id: r.id.clone(),
            kind: pack.kind,
            keywords: r.keywords.iter().map(|k| k.to_ascii_lowercase()).collect(),
            before: r.before.unwrap_or(64),
            after: match r.after {
                Some(0) => None,
                Some(n) => Some(n),
                None => Some(1024),
            },
            pattern: r.pattern,
            regex,
            group,
            checks: r.validate,
            examples: r.examples,
            counter_examples: r.not_match,
        });
    }
    Ok(out)
}

/// Every built-in rule, in pack order (earlier rules win ties).
pub fn load() -> Result<Vec<Rule>, RuleError> {
    let mut out = Vec::new();
    for (file, text) in BUILTIN {
        out.extend(parse_pack(file, text)?);
    }
    let mut seen = std::collections::HashSet::new();
    for r in &out {
        if !seen.insert(r.id.as_str()) {
            return Err(RuleError::Rule {
                file: "rules/privacy".into(),
                id: r.id.clone(),
                message: "the id is used twice".into(),
            });
        }
    }
    Ok(out)
}
