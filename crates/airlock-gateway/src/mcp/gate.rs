//! Who decides a tool call. The relay hands each gated call to a [`Decider`]; it never decides
//! itself. [`BrokerDecider`] calls an in-process approval broker (`Broker::submit`, then
//! `Broker::wait` until the answer or the deadline); the `airlock` binary has one that asks a
//! running daemon over its REST API. Whatever goes wrong becomes a denial with a stable code.
//! The same decider scans (and records) what the server answers, so the verdicts sit in the
//! ledger beside the decisions.

use std::future::Future;
use std::time::{Duration, Instant};

use airlock_confirm::{Broker, Status, Submission};
use airlock_core::Action;
use airlock_policy::Channel;
use airlock_shield::{Direction, Verdict};

/// The answer for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ruling {
    Allow,
    /// `code` is stable (a reason code of the broker, or `MCP_…`); `message` is for the model.
    Deny {
        code: String,
        message: String,
    },
}

impl Ruling {
    pub fn deny(code: &str, message: impl Into<String>) -> Ruling {
        Ruling::Deny {
            code: code.to_string(),
            message: message.into(),
        }
    }
}

/// One call to decide.
#[derive(Debug, Clone)]
pub struct Call {
    pub action: Action,
    /// The session the decision belongs to (the wrap's session).
    pub session: String,
    /// Unique per call, so a retried call is a new decision.
    pub request_id: String,
    pub cwd: Option<String>,
    /// How long an ask may wait for its answer; no answer denies.
    pub timeout: Duration,
}

/// One text an MCP server handed the model, to scan and record.
#[derive(Debug, Clone)]
pub struct ScanCall {
    pub text: String,
    pub session: String,
    /// `mcp:<server>:<method>`.
    pub source: String,
    /// What the gateway does with a flagged text: `annotate` or `block`.
    pub handling: &'static str,
}

/// The scanner's verdict on a [`ScanCall`], recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Scanned {
    pub verdict: Verdict,
    pub categories: Vec<String>,
    pub score: f32,
}

/// Decides tool calls, and scans and records what servers answer.
pub trait Decider: Send + Sync + 'static {
    fn decide(&self, call: Call) -> impl Future<Output = Ruling> + Send;
    /// The verdict on a server's text, once it is a receipt; an error when either failed.
    fn scan(&self, call: ScanCall) -> impl Future<Output = Result<Scanned, String>> + Send;
}

/// Decides through an approval broker in this process.
#[derive(Clone)]
pub struct BrokerDecider {
    pub broker: Broker,
    /// The agent name the broker records.
    pub agent: String,
}

impl Decider for BrokerDecider {
    async fn decide(&self, call: Call) -> Ruling {
        let started = Instant::now();
        let s = Submission {
            request_id: Some(call.request_id),
            agent: self.agent.clone(),
            session: call.session,
            action: call.action,
            cwd: call.cwd,
            channel: Channel::Api,
        };
        let mut out = match self.broker.submit(s).await {
            Ok(o) => o,
            Err(e) => return Ruling::deny("INTERNAL", format!("airlock could not decide: {e}")),
        };
        while out.status == Status::Pending {
            let left = call.timeout.saturating_sub(started.elapsed());
            if left.is_zero() {
                return timed_out(call.timeout);
            }
            out = match self
                .broker
                .wait(&out.id, left.min(Duration::from_secs(30)))
                .await
            {
                Ok(o) => o,
                Err(e) => {
                    return Ruling::deny("INTERNAL", format!("airlock could not decide: {e}"));
                }
            };
        }
        match out.status {
            Status::Allowed => Ruling::Allow,
            _ => {
                let code = out
                    .reasons
                    .first()
                    .map(|f| f.code.as_str().to_string())
                    .unwrap_or_else(|| "DENIED".into());
                Ruling::Deny {
                    code,
                    message: out.message,
                }
            }
        }
    }

    async fn scan(&self, call: ScanCall) -> Result<Scanned, String> {
        let ScanCall {
            text,
            session,
            source,
            handling,
        } = call;
        let (r, text) = tokio::task::spawn_blocking(move || {
            (airlock_shield::scan(&text, Direction::Tool), text)
        })
        .await
        .map_err(|e| e.to_string())?;
        crate::proxy::record::scanned(
            &self.broker,
            &self.agent,
            &session,
            &source,
            Direction::Tool,
            &text,
            r.verdict,
            handling,
        )
        .await?;
        Ok(Scanned {
            verdict: r.verdict,
            categories: r.categories,
            score: r.score,
        })
    }
}

/// The denial for a call nobody answered in time.
pub fn timed_out(t: Duration) -> Ruling {
    Ruling::deny(
        "APPROVAL_TIMEOUT",
        format!(
            "nobody answered within {} s: the call is denied (silence is not consent); ask the user before trying again",
            t.as_secs()
        ),
    )
}
