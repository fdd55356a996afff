//! One reason behind a decision: which rule fired, why, how bad, and where in the input.

use serde::{Deserialize, Serialize};

use crate::{Decision, ReasonCode, Severity, Tier};

/// Byte range `[start, end)` of the input that triggered a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span {
            start,
            end: end.max(start),
        }
    }
}

/// One reason. `message` is written for the agent (what was blocked and what it may do instead);
/// `remediation` for the person reviewing it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable rule id, `pack.rule` (for example `fs.rm_root`).
    pub rule_id: String,
    pub code: ReasonCode,
    pub decision: Decision,
    pub tier: Tier,
    pub severity: Severity,
    pub message: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub remediation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
    /// The piece of input the span points at, for display (bounded by the producer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

impl Finding {
    pub fn new(
        rule_id: impl Into<String>,
        code: ReasonCode,
        decision: Decision,
        tier: Tier,
        severity: Severity,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            rule_id: rule_id.into(),
            code,
            decision,
            tier,
            severity,
            message: message.into(),
            remediation: String::new(),
            span: None,
            evidence: None,
        }
    }

    pub fn with_remediation(mut self, r: impl Into<String>) -> Self {
        self.remediation = r.into();
        self
    }

    pub fn with_span(mut self, span: Span) -> Self {
        self.span = Some(span);
        self
    }

    pub fn with_evidence(mut self, e: impl Into<String>) -> Self {
        self.evidence = Some(e.into());
        self
    }
}
