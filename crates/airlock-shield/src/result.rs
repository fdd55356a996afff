//! The scan result and its wire shape (a public format, pinned by snapshot tests).

use serde::{Deserialize, Serialize, Serializer};

use crate::crisis::CrisisResponse;
use crate::flags::Flags;

/// Who wrote the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// A person's message to the agent.
    User,
    /// Text returned by a tool or read from a document.
    Tool,
}

impl std::str::FromStr for Direction {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "user" => Ok(Direction::User),
            "tool" => Ok(Direction::Tool),
            _ => Err(format!(
                "unknown direction `{s}` (expected `user` or `tool`)"
            )),
        }
    }
}

/// The outcome of a scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TextVerdict {
    Clean,
    /// A user message tries to jailbreak the model.
    JailbreakDetected,
    /// A tool result or document carries instructions for the model.
    InjectionDetected,
    /// The person may be in danger.
    CrisisDetected,
    /// Crisis signals together with a jailbreak attempt.
    CrisisUnderAttack,
}

impl TextVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            TextVerdict::Clean => "CLEAN",
            TextVerdict::JailbreakDetected => "JAILBREAK_DETECTED",
            TextVerdict::InjectionDetected => "INJECTION_DETECTED",
            TextVerdict::CrisisDetected => "CRISIS_DETECTED",
            TextVerdict::CrisisUnderAttack => "CRISIS_UNDER_ATTACK",
        }
    }

    pub fn is_clean(self) -> bool {
        self == TextVerdict::Clean
    }

    pub fn is_crisis(self) -> bool {
        matches!(
            self,
            TextVerdict::CrisisDetected | TextVerdict::CrisisUnderAttack
        )
    }

    pub fn is_attack(self) -> bool {
        matches!(
            self,
            TextVerdict::JailbreakDetected
                | TextVerdict::InjectionDetected
                | TextVerdict::CrisisUnderAttack
        )
    }
}

/// Where in the pipeline a rule matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The text as given.
    Raw,
    /// The normalised text (span mapped back to the input).
    // the wire keeps the spelling receipts and clients already read
    #[serde(rename = "normalized")]
    Normalised,
    /// Text spelled with invisible tag characters.
    Hidden,
    /// A base64 segment (span of the segment).
    Base64,
    Hex,
    UrlEncoded,
    Rot13,
}

pub use airlock_core::Span;

/// One rule that matched.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Match {
    pub rule_id: String,
    pub category: String,
    pub span: Span,
    pub source: Source,
    /// The matched text (bounded), as the rule saw it.
    pub evidence: String,
    /// For the agent: what was found.
    pub message: String,
}

/// The configured crisis response, attached to crisis verdicts, in the person's language.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CrisisAdvice {
    /// The language the response is in (the person's, when recognised).
    pub lang: String,
    /// Asked first.
    pub safety_question: String,
    pub message: String,
    pub resources: Vec<crate::crisis::Resource>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub organisation_message: Option<String>,
    pub route_to_trusted_model: bool,
    pub trusted_models: Vec<String>,
}

impl From<&CrisisResponse> for CrisisAdvice {
    /// The response in its default language.
    fn from(r: &CrisisResponse) -> Self {
        CrisisAdvice::of(r, r.for_lang(&r.lang))
    }
}

impl CrisisAdvice {
    /// The response in the language `text` is written in.
    pub fn for_text(r: &CrisisResponse, text: &str) -> CrisisAdvice {
        CrisisAdvice::of(r, r.for_text(text))
    }

    fn of(r: &CrisisResponse, g: crate::crisis::Guidance) -> CrisisAdvice {
        CrisisAdvice {
            lang: g.lang,
            safety_question: g.safety_question,
            message: g.message,
            resources: g.resources,
            organisation_message: g.organisation_message,
            route_to_trusted_model: r.route_to_trusted_model,
            trusted_models: r.trusted_models.clone(),
        }
    }

    /// What the person is shown: the safety question, the message, the resources (and the
    /// organisation's words when configured).
    pub fn text(&self) -> String {
        crate::crisis::Guidance {
            lang: self.lang.clone(),
            safety_question: self.safety_question.clone(),
            message: self.message.clone(),
            resources: self.resources.clone(),
            organisation_message: self.organisation_message.clone(),
        }
        .text()
    }
}

/// The result of scanning one text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScanResult {
    pub verdict: TextVerdict,
    /// How sure the scanner is of `verdict`, in [0, 1].
    pub confidence: f32,
    /// Risk score in [0, 1] (0: nothing suspicious; the verdict fires at 0.5).
    pub score: f32,
    pub direction: Direction,
    /// Matched categories, sorted, without repeats.
    pub categories: Vec<String>,
    pub matches: Vec<Match>,
    #[serde(serialize_with = "flag_names")]
    pub flags: Flags,
    /// The statistical model's own score in [0, 1] (0.5 at its threshold).
    pub model_score: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crisis: Option<CrisisAdvice>,
}

fn flag_names<S: Serializer>(f: &Flags, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(f.names())
}

/// Rounds to three decimals so the wire shows stable, readable numbers.
pub fn round3(x: f32) -> f32 {
    (x.clamp(0.0, 1.0) * 1000.0).round() / 1000.0
}

impl ScanResult {
    /// The id of the first matching rule whose id starts with `prefix` (`"crisis."`, or `""`
    /// for any), else the verdict's name: what a mark or a notice names as its cause.
    pub fn first_rule(&self, prefix: &str) -> String {
        self.matches
            .iter()
            .find(|m| m.rule_id.starts_with(prefix))
            .map(|m| m.rule_id.clone())
            .unwrap_or_else(|| self.verdict.as_str().to_string())
    }

    /// The result in airlock's vocabulary, for policy: nothing for a clean text; otherwise one
    /// finding per match (a crisis asks and routes, an injection in tool text denies, a
    /// jailbreak asks), plus one for evidential flags or for the model when no rule named it.
    pub fn findings(&self) -> Vec<airlock_core::Finding> {
        use airlock_core::{Decision, Finding, ReasonCode, Severity, Tier};
        if self.verdict.is_clean() {
            return Vec::new();
        }
        let attack = match self.direction {
            Direction::User => (ReasonCode::TextJailbreak, Decision::Ask, Tier::Medium),
            Direction::Tool => (ReasonCode::TextInjection, Decision::Deny, Tier::High),
        };
        let mut out = Vec::new();
        for m in &self.matches {
            let crisis = m.rule_id.starts_with("crisis.");
            if (crisis && !self.verdict.is_crisis()) || (!crisis && !self.verdict.is_attack()) {
                continue;
            }
            let (code, decision, tier, severity) = if crisis {
                (
                    ReasonCode::TextCrisis,
                    Decision::Ask,
                    Tier::Medium,
                    Severity::Critical,
                )
            } else if m.category == "hidden_text" {
                (ReasonCode::HiddenText, attack.1, attack.2, Severity::High)
            } else {
                (attack.0, attack.1, attack.2, Severity::High)
            };
            out.push(
                Finding::new(
                    m.rule_id.clone(),
                    code,
                    decision,
                    tier,
                    severity,
                    m.message.clone(),
                )
                .with_span(m.span)
                .with_evidence(m.evidence.clone()),
            );
        }
        if self.verdict.is_attack() {
            for (_, cat) in self.flags.evidence() {
                out.push(Finding::new(
                    format!("flag.{cat}"),
                    ReasonCode::HiddenText,
                    Decision::Ask,
                    Tier::Medium,
                    Severity::Medium,
                    "The text contains characters or markup that people cannot see.",
                ));
            }
            if out.is_empty() {
                out.push(Finding::new(
                    "model.text",
                    attack.0,
                    attack.1,
                    attack.2,
                    Severity::Medium,
                    "The statistical text model scores this text as an attack.",
                ));
            }
        }
        out
    }
}
