//! The daemon's answers as clients read them: [`ActionAnswer`] (`POST /v1/actions`,
//! `GET /v1/actions/{id}` and `…/wait`) and [`ErrorBody`] (every error). The server writes
//! these types and the hook, the CLI and the tests read them, so a renamed field breaks the
//! build, not a client. `docs/wire/action-answer.schema.json` describes the answer for clients
//! in other languages (the Hermes plugin); a test keeps it and the type together.

use airlock_core::{Decision, Finding, ReasonCode, Tier};
use serde::{Deserialize, Serialize};

/// Where an action stands for the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionStatus {
    Allowed,
    Denied,
    /// An approval is open: wait on `GET /v1/actions/{id}/wait`.
    Pending,
}

/// The daemon's answer about one action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionAnswer {
    /// The approval id for an ask, otherwise the request id.
    pub id: String,
    pub status: ActionStatus,
    /// `ask` while pending; `allow` or `deny` once decided.
    pub decision: Decision,
    pub tier: Tier,
    /// How it ended first (an approval's end, or the policy's strictest reason), then the rest.
    pub reasons: Vec<Finding>,
    /// For the agent: why, and what to do next.
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<String>,
    /// Unix ms after which a pending approval is denied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<String>,
}

impl ActionAnswer {
    /// The code of the first reason: how the action ended.
    pub fn first_code(&self) -> Option<ReasonCode> {
        self.reasons.first().map(|f| f.code)
    }
}

/// Every error the daemon answers: `{"error": {"code", "message"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// A stable code (`INVALID_REQUEST`, `FORBIDDEN`, …; `docs/reason-codes.md` and the
    /// gateway's README).
    pub code: String,
    pub message: String,
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use airlock_core::Severity;

    use super::*;

    fn schema() -> serde_json::Value {
        serde_json::from_str(include_str!("../../../docs/wire/action-answer.schema.json")).unwrap()
    }

    fn keys(v: &serde_json::Value) -> BTreeSet<String> {
        v.as_object().unwrap().keys().cloned().collect()
    }

    /// The schema names exactly the answer's fields, requires exactly the ones always present,
    /// and lists exactly its statuses.
    #[test]
    fn the_schema_is_the_type() {
        let s = schema();
        let finding = Finding::new(
            "r",
            ReasonCode::ApprovalDenied,
            Decision::Deny,
            Tier::High,
            Severity::High,
            "m",
        );
        let mut a = ActionAnswer {
            id: "apr-1".into(),
            status: ActionStatus::Denied,
            decision: Decision::Deny,
            tier: Tier::High,
            reasons: vec![finding.clone()],
            message: "denied".into(),
            receipt: None,
            deadline_ms: None,
            approval: None,
        };
        let required: BTreeSet<String> = s["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        assert_eq!(keys(&serde_json::to_value(&a).unwrap()), required);
        a.receipt = Some("r-1".into());
        a.deadline_ms = Some(1);
        a.approval = Some("apr-1".into());
        assert_eq!(
            keys(&serde_json::to_value(&a).unwrap()),
            keys(&s["properties"])
        );
        let statuses: Vec<String> = [
            ActionStatus::Allowed,
            ActionStatus::Denied,
            ActionStatus::Pending,
        ]
        .iter()
        .map(|st| {
            serde_json::to_value(st)
                .unwrap()
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
        assert_eq!(
            s["properties"]["status"]["enum"],
            serde_json::json!(statuses)
        );
        // a reason is a finding: its always-present fields required, every field named
        let reason = &s["properties"]["reasons"]["items"];
        let reason_required: BTreeSet<String> = reason["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            keys(&serde_json::to_value(&finding).unwrap()),
            reason_required
        );
        let mut full = finding.clone();
        full.remediation = "do this instead".into();
        full.span = Some(airlock_core::Span { start: 0, end: 1 });
        full.evidence = Some("x".into());
        assert_eq!(
            keys(&serde_json::to_value(&full).unwrap()),
            keys(&reason["properties"])
        );
        let back: ActionAnswer = serde_json::from_value(serde_json::to_value(&a).unwrap()).unwrap();
        assert_eq!(back, a);
        assert_eq!(back.first_code(), Some(ReasonCode::ApprovalDenied));
    }
}
