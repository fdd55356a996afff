//! airlock's approval broker. It decides each submitted action as every surface does (policy,
//! then grants), records allow and deny as signed receipts at once, and turns a remaining ask
//! into an approval routed by tier: the LLM reviewer, a person, or both, with deliberate
//! confirmation and an optional time lock at tier 4. Approvals live in the store, so they
//! survive restarts and are shared by every node on one PostgreSQL; every decision happens once
//! (a conditional UPDATE) and is exactly one receipt. Timeouts deny. It knows nothing of how a
//! request arrived (HTTP, hook, CLI).

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod answer;
mod broker;
mod code;
mod config;
pub mod crisis;
pub mod decide;
mod error;
pub mod event;
pub mod grant_log;
mod hosts;
mod http;
pub mod learn;
pub mod llm;
mod metrics;
mod model;
mod notify;
pub mod output;
pub mod pins;
pub mod precedent;
pub mod privacy;
pub mod receipt;
mod route;
mod ruling;
mod scanned;
mod settle;
pub mod stats;
mod submit;
pub mod suggest;
mod view;
mod wait;
pub mod webhook;

pub use broker::Broker;
pub use code::MAX_CODE_ATTEMPTS;
pub use config::{BrokerConfig, LlmConfig, PolicyProvider, WebhookConfig};
pub use decide::{Decided, decide};
pub use error::ConfirmError;
pub use event::{CrisisChange, Event, GrantChange, Origin, ScanVerdict};
pub use learn::Learned;
pub use metrics::Metrics;
pub use model::{
    Answer, AnswerScope, Approval, ApprovalEvent, ApprovalStatus, Choice, LlmResult, LlmReview,
    Outcome, Principal, Role, Status, Submission,
};
pub use notify::CHANNEL as NOTIFY_CHANNEL;
pub use output::OutputChecked;
pub use pins::{PinApprovalError, PinApproved, approve_pin};
pub use privacy::SecretsReplaced;
pub use receipt::RecordContext;
pub use ruling::Ruling;
pub use scanned::ScanRecorded;
pub use stats::{DayStats, Stats};
pub use view::SILENCE;
