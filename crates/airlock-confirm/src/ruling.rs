//! Submit and wait, once for every surface that holds a call until it is decided (the proxy,
//! the MCP gateway, the CLI through the REST API's outcome): the broker's outcome turned into a
//! typed [`Ruling`]. An ask is held with `Broker::wait` until it is answered, its deadline (plus
//! a little slack for the broker to settle it) or the caller's limit passes; anything but an
//! allow is a denial with a [`ReasonCode`], and a broker failure denies with `INTERNAL_ERROR`.

use std::time::Duration;

use airlock_core::ReasonCode;
use tokio::time::Instant;

use crate::broker::Broker;
use crate::model::{Outcome, Status, Submission};

/// How long past an approval's deadline a waiter keeps waiting for the broker to settle it.
const SETTLE_SLACK: Duration = Duration::from_secs(2);

/// What became of one action, for a surface to translate into its own wire format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ruling {
    Allow,
    /// `code` says how it ended: the approval's end (`APPROVAL_DENIED`, `APPROVAL_TIMEOUT`,
    /// `APPROVAL_CANCELLED`, `CODE_LOCKOUT`), the policy's first reason, or `INTERNAL_ERROR`;
    /// `message` is for the agent.
    Deny {
        code: ReasonCode,
        message: String,
    },
}

impl Ruling {
    pub fn allowed(&self) -> bool {
        matches!(self, Ruling::Allow)
    }

    /// The ruling on a final outcome (a pending one is not final: it reads as a timeout).
    /// Clients of the REST API use it on the outcome they waited for.
    pub fn of_outcome(o: &Outcome) -> Ruling {
        match o.status {
            Status::Allowed => Ruling::Allow,
            Status::Pending => Ruling::Deny {
                code: ReasonCode::ApprovalTimeout,
                message: o.message.clone(),
            },
            Status::Denied => Ruling::Deny {
                // how it ended comes first in an outcome's reasons (`view::outcome_of`)
                code: o
                    .reasons
                    .first()
                    .map(|f| f.code)
                    .unwrap_or(ReasonCode::PolicyRule),
                message: o.message.clone(),
            },
        }
    }

    /// The ruling on the daemon's final answer, for clients of the REST API (a pending answer
    /// reads as a timeout).
    pub fn of_answer(a: &airlock_wire::ActionAnswer) -> Ruling {
        use airlock_wire::ActionStatus;
        match a.status {
            ActionStatus::Allowed => Ruling::Allow,
            ActionStatus::Pending => Ruling::Deny {
                code: ReasonCode::ApprovalTimeout,
                message: a.message.clone(),
            },
            ActionStatus::Denied => Ruling::Deny {
                code: a.first_code().unwrap_or(ReasonCode::PolicyRule),
                message: a.message.clone(),
            },
        }
    }

    /// Nobody answered within `limit`.
    pub fn timed_out(limit: Duration) -> Ruling {
        Ruling::Deny {
            code: ReasonCode::ApprovalTimeout,
            message: format!(
                "nobody answered within {} s: the call is denied (silence is not consent); ask the user before trying again",
                limit.as_secs()
            ),
        }
    }

    /// The broker failed: fail safe.
    pub fn internal() -> Ruling {
        Ruling::Deny {
            code: ReasonCode::InternalError,
            message: "airlock could not decide this call, so it is denied.".into(),
        }
    }
}

impl Broker {
    /// Submits `s` and, for an ask, waits until it is decided or `limit` passes (never past
    /// the approval's deadline and a little slack). Never fails: every failure is a denial.
    pub async fn decide_and_wait(&self, s: Submission, limit: Duration) -> Ruling {
        self.decide_and_wait_with(s, limit, false).await
    }

    /// As [`Broker::decide_and_wait`], in the policy's crisis mode when `crisis` (see
    /// [`Broker::submit_with`]).
    pub async fn decide_and_wait_with(
        &self,
        s: Submission,
        limit: Duration,
        crisis: bool,
    ) -> Ruling {
        let end = Instant::now() + limit;
        let mut o = match self.submit_with(s, crisis).await {
            Ok(o) => o,
            Err(e) => {
                tracing::error!(error = %e, "the broker failed to decide a call");
                return Ruling::internal();
            }
        };
        while o.status == Status::Pending {
            let now = Instant::now();
            let to_deadline = o
                .deadline_ms
                .map(|d| {
                    let left = d.saturating_sub(self.now());
                    Duration::from_millis(u64::try_from(left).unwrap_or(0)) + SETTLE_SLACK
                })
                .unwrap_or(limit);
            let left = end.saturating_duration_since(now).min(to_deadline);
            if left.is_zero() {
                return Ruling::timed_out(limit);
            }
            o = match self.wait(&o.id, left).await {
                Ok(next) => next,
                Err(e) => {
                    tracing::error!(error = %e, "the broker failed while a call waited");
                    return Ruling::internal();
                }
            };
        }
        Ruling::of_outcome(&o)
    }
}
