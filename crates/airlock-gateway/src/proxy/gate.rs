//! Deciding the tool calls of one model answer: each call is mapped to an action and submitted
//! to the broker (which records it); an ask is held with `Broker::wait` until it is answered or
//! its deadline (bounded by the proxy's `max_hold`) passes. Anything but an allow blocks the
//! call: a deny, silence, a broker error, a call whose arguments cannot be read.

use std::time::Duration;

use airlock_confirm::{ApprovalStatus, ConfirmError, Outcome, Status, Submission};
use airlock_policy::Channel;
use futures_util::future::join_all;

use super::Proxy;
use super::record;
use airlock_grants::system_now_ms as now_ms;

/// One tool call as the model sent it (a call without a `function` object reads as the
/// default: no name, no arguments).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Call {
    pub name: String,
    pub arguments: String,
}

/// What happens to one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Block { code: String, reason: String },
}

impl Verdict {
    pub fn allowed(&self) -> bool {
        matches!(self, Verdict::Allow)
    }
}

/// Who is asking, for the broker.
#[derive(Debug, Clone)]
pub struct Who {
    pub agent: String,
    pub session: String,
}

/// How long past an approval's deadline the proxy keeps waiting for the broker to settle it.
const SETTLE_SLACK: Duration = Duration::from_secs(2);

impl Proxy {
    /// Decides every call at once (they are independent); the answer is in the same order.
    pub async fn decide_all(&self, who: &Who, calls: &[Call]) -> Vec<Verdict> {
        join_all(calls.iter().map(|c| self.decide(who, c))).await
    }

    /// Decides one call; never fails (every failure is a block).
    pub async fn decide(&self, who: &Who, call: &Call) -> Verdict {
        let action = match self.config.tools.action(&call.name, &call.arguments) {
            Ok(a) => a,
            Err(r) => {
                if let Err(e) = record::refusal(
                    &self.broker,
                    &who.agent,
                    &who.session,
                    &call.name,
                    &call.arguments,
                    r.code,
                    &r.reason,
                )
                .await
                {
                    tracing::error!(error = %e, "recording a refused tool call");
                }
                return Verdict::Block {
                    code: r.code.to_string(),
                    reason: r.reason,
                };
            }
        };
        let cwd = match &action {
            airlock_core::Action::Shell { cwd, .. } => cwd.clone(),
            _ => None,
        };
        let sub = Submission {
            request_id: None,
            agent: who.agent.clone(),
            session: who.session.clone(),
            action,
            cwd,
            channel: Channel::Api,
        };
        match self.broker.submit(sub).await {
            Ok(o) => self.settle(o).await,
            Err(e) => broker_error(e),
        }
    }

    /// Holds a pending outcome until it is decided or its time is up.
    async fn settle(&self, first: Outcome) -> Verdict {
        let mut o = first;
        let end = tokio::time::Instant::now() + self.config.max_hold;
        while o.status == Status::Pending {
            let now = tokio::time::Instant::now();
            let to_deadline = o
                .deadline_ms
                .map(|d| {
                    let left = d.saturating_sub(now_ms());
                    Duration::from_millis(u64::try_from(left).unwrap_or(0)) + SETTLE_SLACK
                })
                .unwrap_or(self.config.max_hold);
            let left = end.saturating_duration_since(now).min(to_deadline);
            if left.is_zero() {
                return Verdict::Block {
                    code: "APPROVAL_TIMEOUT".into(),
                    reason:
                        "no one answered in time, so the call is denied (silence is not consent)."
                            .into(),
                };
            }
            o = match self.broker.wait(&o.id, left).await {
                Ok(next) => next,
                Err(e) => return broker_error(e),
            };
        }
        if o.status == Status::Allowed {
            return Verdict::Allow;
        }
        // A person's (or the clock's) answer: its code says which, not the rule that asked.
        let asked = match &o.approval {
            Some(id) => self.broker.approval(id).await.ok().map(|a| a.status),
            None => None,
        };
        let code = match asked {
            Some(ApprovalStatus::Expired) => "APPROVAL_TIMEOUT".to_string(),
            Some(ApprovalStatus::Denied) => "APPROVAL_DENIED".to_string(),
            Some(ApprovalStatus::Cancelled) => "APPROVAL_CANCELLED".to_string(),
            _ => o
                .reasons
                .first()
                .map(|f| f.code.as_str().to_string())
                .unwrap_or_else(|| "DENIED".into()),
        };
        Verdict::Block {
            code,
            reason: o.message,
        }
    }
}

fn broker_error(e: ConfirmError) -> Verdict {
    tracing::error!(error = %e, "the broker failed on a proxied tool call");
    Verdict::Block {
        code: "INTERNAL_ERROR".into(),
        reason: "airlock could not decide this call, so it is denied.".into(),
    }
}
