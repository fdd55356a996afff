//! Deciding the tool calls of one model answer: each call is mapped to an action and submitted
//! to the broker (which records it); an ask is held by `Broker::decide_and_wait` until it is
//! answered or its deadline (bounded by the proxy's `max_hold`) passes. Anything but an allow blocks the
//! call: a deny, silence, a broker error, a call whose arguments cannot be read.

use airlock_confirm::{Ruling, Submission};
use airlock_policy::Channel;
use futures_util::future::join_all;

use super::Proxy;
use super::record;

/// One tool call as the model sent it (a call without a `function` object reads as the
/// default: no name, no arguments).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Call {
    pub name: String,
    pub arguments: String,
}

/// What happens to one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallVerdict {
    Allow,
    Block { code: String, reason: String },
}

impl CallVerdict {
    pub fn allowed(&self) -> bool {
        matches!(self, CallVerdict::Allow)
    }
}

/// Who is asking, for the broker.
#[derive(Debug, Clone)]
pub struct Who {
    pub agent: String,
    pub session: String,
    /// The request comes from a person who may be in crisis (this request's scan; a session's
    /// crisis state may set it too): the policy's crisis mode decides its calls, and budgets
    /// do not apply.
    pub crisis: bool,
}

impl Proxy {
    /// Decides every call at once (they are independent); the answer is in the same order.
    pub async fn decide_all(&self, who: &Who, calls: &[Call]) -> Vec<CallVerdict> {
        join_all(calls.iter().map(|c| self.decide(who, c))).await
    }

    /// Decides one call; never fails (every failure is a block).
    pub async fn decide(&self, who: &Who, call: &Call) -> CallVerdict {
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
                return CallVerdict::Block {
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
        match self
            .broker
            .decide_and_wait_with(sub, self.config.max_hold, who.crisis)
            .await
        {
            Ruling::Allow => CallVerdict::Allow,
            Ruling::Deny { code, message } => CallVerdict::Block {
                code: code.as_str().to_string(),
                reason: message,
            },
        }
    }
}
