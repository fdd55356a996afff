//! The broker's vocabulary on the wire: what a surface submits, what the agent gets back, what
//! approvers see and answer, and the events that wake waiters. Enums serialise lowercase.

use airlock_core::{Action, Decision, Finding, Tier};
use airlock_policy::{Channel, Confirmers};
use serde::{Deserialize, Serialize};

/// One action submitted by a surface (REST, hook, proxy) on behalf of an agent.
#[derive(Debug, Clone, Serialize)]
pub struct Submission {
    /// The same request id yields the same outcome (and at most one approval and receipt).
    pub request_id: Option<String>,
    pub agent: String,
    pub session: String,
    pub action: Action,
    pub cwd: Option<String>,
    pub channel: Channel,
}

/// Where an action stands for the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Allowed,
    Denied,
    Pending,
}

/// What the agent gets back: the status, why, and what to do next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The approval id for an ask, otherwise the request id.
    pub id: String,
    pub status: Status,
    /// `ask` while pending; `allow` or `deny` once decided.
    pub decision: Decision,
    pub tier: Tier,
    pub reasons: Vec<Finding>,
    /// For the agent: why, and what to do (wait, stop, try something else).
    pub message: String,
    /// The id of the receipt recording the decision, once recorded.
    pub receipt: Option<String>,
    /// Unix ms after which a pending approval is denied.
    pub deadline_ms: Option<i64>,
    pub approval: Option<String>,
}

/// The life of an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalStatus {
    Pending,
    /// Approved, but the time lock is running: cancellable, not yet effective.
    Locked,
    Approved,
    Denied,
    /// Nobody answered in time: a denial.
    Expired,
    Cancelled,
}

impl Approval {
    /// The reason code of how this approval ended (or that it waits): the status's, except a
    /// denial by lock-out after wrong tier-4 codes, which has its own.
    pub fn end_code(&self) -> airlock_core::ReasonCode {
        if self.status == ApprovalStatus::Denied
            && self.decided_by.as_deref() == Some(crate::answer::LOCKOUT_BY)
        {
            return airlock_core::ReasonCode::CodeLockout;
        }
        self.status.reason_code()
    }
}

impl ApprovalStatus {
    /// The reason code a decision in this state carries (receipts and the agent's outcome).
    pub fn reason_code(self) -> airlock_core::ReasonCode {
        use airlock_core::ReasonCode;
        match self {
            ApprovalStatus::Approved => ReasonCode::Approved,
            ApprovalStatus::Expired => ReasonCode::ApprovalTimeout,
            ApprovalStatus::Cancelled => ReasonCode::ApprovalCancelled,
            ApprovalStatus::Denied => ReasonCode::ApprovalDenied,
            ApprovalStatus::Pending | ApprovalStatus::Locked => ReasonCode::ApprovalPending,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Locked => "locked",
            ApprovalStatus::Approved => "approved",
            ApprovalStatus::Denied => "denied",
            ApprovalStatus::Expired => "expired",
            ApprovalStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<ApprovalStatus> {
        Some(match s {
            "pending" => ApprovalStatus::Pending,
            "locked" => ApprovalStatus::Locked,
            "approved" => ApprovalStatus::Approved,
            "denied" => ApprovalStatus::Denied,
            "expired" => ApprovalStatus::Expired,
            "cancelled" => ApprovalStatus::Cancelled,
            _ => return None,
        })
    }

    /// No further change can happen.
    pub fn is_final(self) -> bool {
        !matches!(self, ApprovalStatus::Pending | ApprovalStatus::Locked)
    }
}

/// What the LLM reviewer said, or why it said nothing useful.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LlmResult {
    Approve,
    Deny,
    Escalate,
    /// No answer within the reviewer's timeout.
    Timeout,
    /// Transport error, HTTP error or output that is not the required JSON.
    Error,
    /// No reviewer is configured.
    Unavailable,
}

impl LlmResult {
    pub fn as_str(self) -> &'static str {
        match self {
            LlmResult::Approve => "approve",
            LlmResult::Deny => "deny",
            LlmResult::Escalate => "escalate",
            LlmResult::Timeout => "timeout",
            LlmResult::Error => "error",
            LlmResult::Unavailable => "unavailable",
        }
    }

    /// The reviewer did not give a usable approve or deny (the person decides alone).
    pub fn failed(self) -> bool {
        !matches!(self, LlmResult::Approve | LlmResult::Deny)
    }
}

/// The LLM factor of an approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmReview {
    pub model: String,
    pub result: LlmResult,
    /// 0 (harmless) to 1 (dangerous), as the model judged it.
    pub risk: Option<f64>,
    pub rationale: String,
    /// Why the review failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A grant the model proposed (inactive until a person confirms it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed_grant: Option<String>,
    pub ms: u64,
}

/// How an answer applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnswerScope {
    /// This action, this time.
    Once,
    /// This exact action for the rest of the agent's session (a person-created grant).
    Session,
}

impl AnswerScope {
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerScope::Once => "once",
            AnswerScope::Session => "session",
        }
    }
}

/// An approver's choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Choice {
    Approve,
    Deny,
}

impl Choice {
    pub fn as_str(self) -> &'static str {
        match self {
            Choice::Approve => "approve",
            Choice::Deny => "deny",
        }
    }
}

/// What a token may do; the gateway maps token roles onto it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Submits and waits; never approves anything, its own requests included.
    Agent,
    Approver,
    Admin,
}

/// Who is answering.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Principal {
    pub name: String,
    pub role: Role,
}

impl Principal {
    pub fn new(name: impl Into<String>, role: Role) -> Self {
        Principal {
            name: name.into(),
            role,
        }
    }
}

/// A person's answer to one approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    pub by: Principal,
    pub decision: Choice,
    pub scope: AnswerScope,
    pub reason: String,
    /// The deliberate code, for an approval that requires it.
    pub code: Option<String>,
    /// When given, the answer applies only if the approval is for this exact action.
    pub action_sha256: Option<String>,
    /// Where the answer was given when not the inbox, the terminal or the API: a chat channel
    /// and message (`telegram:ops/chat=42/message=7`), named by the receipt. Set by the
    /// channel's own code, never read from a request.
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

/// One approval as approvers see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    pub id: String,
    pub request_id: String,
    pub agent: String,
    pub session: String,
    pub action: Action,
    pub action_sha256: String,
    pub tier: Tier,
    pub reasons: Vec<Finding>,
    pub confirm: Confirmers,
    pub status: ApprovalStatus,
    pub llm: Option<LlmReview>,
    /// Tier 4: the approver must type `Broker::deliberate_code(&action_sha256)` (shown to approvers
    /// only, never to the agent).
    pub code_required: bool,
    pub time_lock_ms: i64,
    pub deadline_ms: i64,
    pub effective_ms: Option<i64>,
    pub decided_by: Option<String>,
    pub decided_ms: Option<i64>,
    pub approvers: Vec<String>,
    pub scope: Option<AnswerScope>,
    pub reason: Option<String>,
    pub grant: Option<String>,
    pub receipt: Option<String>,
    /// A policy rule text suggested after repeated approvals of this action; never applied.
    pub suggestion: Option<String>,
    pub policy_sha256: String,
    pub created_ms: i64,
    /// Where a person answered from, when it was a chat channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_via: Option<String>,
}

impl Approval {
    /// Whether a person is asked now: it is pending and a person confirms it, or the reviewer
    /// alone was to confirm it and escalated or failed.
    pub fn asks_person(&self) -> bool {
        self.status == ApprovalStatus::Pending
            && (self.confirm.person()
                || (self.confirm == Confirmers::Llm
                    && self.llm.as_ref().is_some_and(|r| r.result.failed())))
    }
}

/// Something happened to an approval (its id): opened (sent again when its LLM review is
/// recorded, since what approvers see changed), or decided (including time-locked, cancelled
/// and expired). Waiters re-read the row; an event is only a hint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "event", content = "id")]
pub enum ApprovalEvent {
    Opened(String),
    Decided(String),
}

impl ApprovalEvent {
    pub fn id(&self) -> &str {
        match self {
            ApprovalEvent::Opened(id) | ApprovalEvent::Decided(id) => id,
        }
    }
}

/// The daemon's answer about an action, as it goes on the wire.
impl From<Outcome> for airlock_wire::ActionAnswer {
    fn from(o: Outcome) -> Self {
        airlock_wire::ActionAnswer {
            id: o.id,
            status: match o.status {
                Status::Allowed => airlock_wire::ActionStatus::Allowed,
                Status::Denied => airlock_wire::ActionStatus::Denied,
                Status::Pending => airlock_wire::ActionStatus::Pending,
            },
            decision: o.decision,
            tier: o.tier,
            reasons: o.reasons,
            message: o.message,
            receipt: o.receipt,
            deadline_ms: o.deadline_ms,
            approval: o.approval,
        }
    }
}
