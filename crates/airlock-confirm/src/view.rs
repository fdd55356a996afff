//! Turning stored rows into what callers see: an [`Approval`] for approvers, an [`Outcome`]
//! with its message for the agent. Messages say why and what to do next; a pending outcome
//! never carries the tier-4 code (only approvers see it).

use airlock_core::{Action, Decision, Finding, ReasonCode, Severity, Tier};
use airlock_policy::Confirmers;
use airlock_store::ApprovalRow;

use crate::ConfirmError;
use crate::model::{AnswerScope, Approval, ApprovalStatus, LlmReview, Outcome, Status};

/// The text an agent gets when nobody answered in time.
pub const SILENCE: &str = "no one answered in time: silence is not consent";

pub(crate) fn bad_row(id: &str, what: &str, e: impl std::fmt::Display) -> ConfirmError {
    ConfirmError::Internal(format!("approval {id}: stored {what} does not read: {e}"))
}

pub(crate) fn confirmers_of(s: &str) -> Option<Confirmers> {
    Some(match s {
        "none" => Confirmers::Nobody,
        "llm" => Confirmers::Llm,
        "human" => Confirmers::Human,
        "llm+human" => Confirmers::LlmAndHuman,
        _ => return None,
    })
}

pub(crate) fn approval_of(r: &ApprovalRow) -> Result<Approval, ConfirmError> {
    let action: Action =
        serde_json::from_str(&r.action).map_err(|e| bad_row(&r.id, "action", e))?;
    let reasons: Vec<Finding> =
        serde_json::from_str(&r.reasons).map_err(|e| bad_row(&r.id, "reasons", e))?;
    let llm: Option<LlmReview> = match &r.llm {
        Some(j) => Some(serde_json::from_str(j).map_err(|e| bad_row(&r.id, "llm review", e))?),
        None => None,
    };
    let approvers: Vec<String> = match &r.approvers {
        Some(j) => serde_json::from_str(j).map_err(|e| bad_row(&r.id, "approvers", e))?,
        None => Vec::new(),
    };
    let tier = u8::try_from(r.tier)
        .ok()
        .and_then(|t| Tier::try_from(t).ok())
        .ok_or_else(|| bad_row(&r.id, "tier", r.tier))?;
    Ok(Approval {
        id: r.id.clone(),
        request_id: r.request_id.clone(),
        agent: r.agent.clone(),
        session: r.session.clone(),
        action,
        action_sha256: r.action_sha256.clone(),
        tier,
        reasons,
        confirm: confirmers_of(&r.confirm).ok_or_else(|| bad_row(&r.id, "confirm", &r.confirm))?,
        status: ApprovalStatus::parse(&r.status)
            .ok_or_else(|| bad_row(&r.id, "status", &r.status))?,
        llm,
        code_required: r.deliberate,
        time_lock_ms: r.time_lock_ms,
        deadline_ms: r.deadline_ms,
        effective_ms: r.effective_ms,
        decided_by: r.decided_by.clone(),
        decided_ms: r.decided_ms,
        approvers,
        scope: match r.scope.as_deref() {
            Some("session") => Some(AnswerScope::Session),
            Some("once") => Some(AnswerScope::Once),
            _ => None,
        },
        reason: r.reason.clone(),
        grant: r.grant_id.clone(),
        receipt: r.receipt.clone(),
        suggestion: r.suggestion.clone(),
        policy_sha256: r.policy_sha256.clone(),
        created_ms: r.created_ms,
        answered_via: r.answered_via.clone(),
    })
}

/// Who must confirm, in words.
pub(crate) fn who(c: Confirmers) -> &'static str {
    match c {
        Confirmers::Nobody => "nobody",
        Confirmers::Llm => "the reviewer",
        Confirmers::Human => "a person",
        Confirmers::LlmAndHuman => "the reviewer and a person",
    }
}

/// The agent's view of an approval; `streak` is the session's current run of denials.
pub(crate) fn outcome_of(a: &Approval, streak: u32, streak_limit: u32) -> Outcome {
    let (status, decision) = match a.status {
        ApprovalStatus::Pending | ApprovalStatus::Locked => (Status::Pending, Decision::Ask),
        ApprovalStatus::Approved => (Status::Allowed, Decision::Allow),
        _ => (Status::Denied, Decision::Deny),
    };
    let why = a.reason.as_deref().filter(|r| !r.trim().is_empty());
    let mut message = match a.status {
        ApprovalStatus::Pending => format!(
            "Waiting for {} to confirm this tier {} action (approval {}). Wait for the answer; \
             no answer by the deadline is a denial.",
            who(a.confirm),
            a.tier.as_u8(),
            a.id
        ),
        ApprovalStatus::Locked => format!(
            "Approved by {}, but the approval takes effect only when its time lock ends and can \
             be cancelled until then. Wait.",
            a.decided_by.as_deref().unwrap_or("a person")
        ),
        ApprovalStatus::Approved => format!(
            "Approved by {}.{}",
            if a.approvers.is_empty() {
                a.decided_by.clone().unwrap_or_default()
            } else {
                a.approvers.join(" and ")
            },
            match a.grant.as_deref() {
                Some(g) =>
                    format!(" The same action is allowed for the rest of this session (grant {g})."),
                None => String::new(),
            }
        ),
        ApprovalStatus::Denied => format!(
            "Denied by {}{}. Do not retry this action or a variation of it; ask the user how to \
             proceed.",
            a.decided_by.as_deref().unwrap_or("an approver"),
            why.map(|w| format!(": {w}")).unwrap_or_default()
        ),
        ApprovalStatus::Expired => {
            format!("Denied: {SILENCE}. Do not retry this action without asking the user.")
        }
        ApprovalStatus::Cancelled => format!(
            "Cancelled by {} before it took effect{}. The action is denied.",
            a.decided_by.as_deref().unwrap_or("an approver"),
            why.map(|w| format!(": {w}")).unwrap_or_default()
        ),
    };
    if status == Status::Denied {
        push_streak(&mut message, streak, streak_limit);
    }
    // How it ended comes first, so an agent (or a hook) reading only the first reason sees it.
    let mut reasons = a.reasons.clone();
    if status == Status::Denied {
        reasons.extend(streak_finding(streak, streak_limit, a.tier));
    }
    if status != Status::Pending {
        reasons.insert(
            0,
            Finding::new(
                format!("approval.{}", a.status.as_str()),
                a.end_code(),
                decision,
                a.tier,
                if decision == Decision::Allow {
                    Severity::Info
                } else {
                    Severity::High
                },
                message.clone(),
            ),
        );
    }
    Outcome {
        id: a.id.clone(),
        status,
        decision,
        tier: a.tier,
        reasons,
        message,
        receipt: a.receipt.clone(),
        deadline_ms: Some(a.deadline_ms),
        approval: Some(a.id.clone()),
    }
}

/// The finding that tells the agent to stop, once `limit` denials came in a row.
fn streak_finding(streak: u32, limit: u32, tier: Tier) -> Option<Finding> {
    (limit > 0 && streak >= limit).then(|| {
        Finding::new(
            "approval.denial_streak",
            ReasonCode::DenialStreak,
            Decision::Deny,
            tier,
            Severity::High,
            format!(
                "denial {streak} in a row in this session: stop trying variations of this action and ask the user how to proceed"
            ),
        )
    })
}

/// After `limit` denials in a row the agent is told to stop.
pub(crate) fn push_streak(message: &mut String, streak: u32, limit: u32) {
    if limit > 0 && streak >= limit {
        message.push_str(&format!(
            " This is denial {streak} in a row in this session: stop trying variations of this \
             action and ask the user how to proceed."
        ));
    }
}

/// The agent's view of an action decided at once by the policy (or a grant).
pub(crate) fn immediate(
    id: String,
    decision: Decision,
    tier: Tier,
    reasons: Vec<Finding>,
    receipt: Option<String>,
    streak: u32,
    streak_limit: u32,
) -> Outcome {
    let first = reasons
        .iter()
        .find(|f| f.decision == decision)
        .or(reasons.first())
        .map(|f| f.message.clone())
        .unwrap_or_default();
    let (status, mut message) = match decision {
        Decision::Allow => (Status::Allowed, format!("Allowed. {first}")),
        _ => (
            Status::Denied,
            format!("Denied: {first} Do not retry it unchanged; ask the user how to proceed."),
        ),
    };
    let mut reasons = reasons;
    if status == Status::Denied {
        push_streak(&mut message, streak, streak_limit);
        reasons.extend(streak_finding(streak, streak_limit, tier));
    }
    Outcome {
        id,
        status,
        decision,
        tier,
        reasons,
        message: message.trim().to_string(),
        receipt,
        deadline_ms: None,
        approval: None,
    }
}

/// A finding for a broker-side failure: fail safe, deny.
pub(crate) fn internal_finding(why: &str) -> Finding {
    Finding::new(
        "confirm.internal_error",
        ReasonCode::InternalError,
        Decision::Deny,
        Tier::High,
        Severity::High,
        format!("airlock could not decide this action, so it is denied: {why}"),
    )
}
