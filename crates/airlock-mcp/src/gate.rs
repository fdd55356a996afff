//! Who decides a tool call. The relay hands each gated call to a [`Decider`]; it never decides
//! itself. [`BrokerDecider`] calls an in-process approval broker (`Broker::decide_and_wait`,
//! the one submit-and-wait of every surface); the `airlock` binary has one that asks a
//! running daemon over its REST API. Whatever goes wrong becomes a denial with a stable code.
//! The same decider scans (and records) what the server answers, so the verdicts sit in the
//! ledger beside the decisions, and a crisis verdict marks the session as every surface does;
//! and it replaces (and records) the secrets of a server's sampling request.

use std::future::Future;
use std::time::Duration;

use airlock_confirm::{Broker, Submission};
use airlock_core::{Action, Finding};
use airlock_policy::Channel;
use airlock_shield::{Direction, TextVerdict};

/// The answer for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallRuling {
    Allow,
    /// `code` is stable (a reason code of the broker, or `MCP_…`); `message` is for the model.
    Deny {
        code: String,
        message: String,
    },
}

impl CallRuling {
    /// The broker's ruling, with its reason code as this surface's code.
    pub fn of(r: airlock_confirm::Ruling) -> CallRuling {
        match r {
            airlock_confirm::Ruling::Allow => CallRuling::Allow,
            airlock_confirm::Ruling::Deny { code, message } => CallRuling::Deny {
                code: code.as_str().to_string(),
                message,
            },
        }
    }

    pub fn deny(code: &str, message: impl Into<String>) -> CallRuling {
        CallRuling::Deny {
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
    /// What the gateway does with a flagged text: `annotate` or `block` (`pass` for the
    /// person's words checked for a crisis, which are never held back).
    pub handling: &'static str,
    /// `Tool` for what a server hands the model; `User` for the person's words (`crisis.rs`).
    pub direction: Direction,
}

/// The scanner's verdict on a [`ScanCall`], recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Scanned {
    pub verdict: TextVerdict,
    pub categories: Vec<String>,
    pub score: f32,
}

/// A value bound for the client's model (a server's sampling request's params) whose secrets
/// are replaced by typed placeholders and recorded.
#[derive(Debug, Clone)]
pub struct SecretsCall {
    pub session: String,
    /// `mcp:<server>:sampling`.
    pub surface: String,
    pub value: serde_json::Value,
}

/// What a [`SecretsCall`] came back as, recorded: the value with its secrets replaced and the
/// rule ids of what was (`None` and no rules: nothing was found, nothing recorded).
#[derive(Debug, Clone, PartialEq)]
pub struct SecretsRuling {
    pub value: Option<serde_json::Value>,
    pub rules: Vec<String>,
}

/// One tool result to check against its declared output schema and record.
#[derive(Debug, Clone)]
pub struct OutputCall {
    pub session: String,
    /// The tool as the policy names it (`mcp__<server>__<tool>`).
    pub tool: String,
    /// What the declared schema is checked against (see `output::contract_value`).
    pub output: serde_json::Value,
    pub cwd: Option<String>,
}

/// The drift found in an [`OutputCall`], recorded: `None` when the output keeps its contract
/// (or no schema is declared).
#[derive(Debug, Clone, PartialEq)]
pub struct OutputRuling {
    pub drift: Option<Finding>,
}

/// Decides tool calls, and scans and records what servers answer.
pub trait Decider: Send + Sync + 'static {
    fn decide(&self, call: Call) -> impl Future<Output = CallRuling> + Send;
    /// The verdict on a server's text, once it is a receipt (and, for a crisis verdict, once
    /// the session is in crisis mode); an error when either failed.
    fn scan(&self, call: ScanCall) -> impl Future<Output = Result<Scanned, String>> + Send;
    /// The value with its secrets replaced, once what was replaced is a receipt (rule ids and
    /// salted hashes, never the values); an error when either failed.
    fn secrets(
        &self,
        call: SecretsCall,
    ) -> impl Future<Output = Result<SecretsRuling, String>> + Send;
    /// A tool result checked against its output contract, once it is a receipt (carrying the
    /// output's SHA-256); an error when either failed.
    fn output(&self, call: OutputCall)
    -> impl Future<Output = Result<OutputRuling, String>> + Send;
}

/// Decides through an approval broker in this process.
#[derive(Clone)]
pub struct BrokerDecider {
    pub broker: Broker,
    /// The agent name the broker records.
    pub agent: String,
}

impl Decider for BrokerDecider {
    async fn decide(&self, call: Call) -> CallRuling {
        let s = Submission {
            request_id: Some(call.request_id),
            agent: self.agent.clone(),
            session: call.session,
            action: call.action,
            cwd: call.cwd,
            channel: Channel::Api,
        };
        CallRuling::of(self.broker.decide_and_wait(s, call.timeout).await)
    }

    async fn scan(&self, call: ScanCall) -> Result<Scanned, String> {
        let ScanCall {
            text,
            session,
            source,
            handling,
            direction,
        } = call;
        let (r, text) =
            tokio::task::spawn_blocking(move || (airlock_shield::scan(&text, direction), text))
                .await
                .map_err(|e| e.to_string())?;
        let origin = airlock_confirm::Origin {
            agent: self.agent.clone(),
            session,
        };
        self.broker
            .record_scan(origin, &source, direction, &text, &r, handling)
            .await
            .map_err(|e| e.to_string())?;
        Ok(Scanned {
            verdict: r.verdict,
            categories: r.categories,
            score: r.score,
        })
    }

    async fn secrets(&self, call: SecretsCall) -> Result<SecretsRuling, String> {
        let origin = airlock_confirm::Origin {
            agent: self.agent.clone(),
            session: call.session,
        };
        let mut value = call.value;
        match self
            .broker
            .replace_secrets(origin, &call.surface, &mut value)
            .await
        {
            Ok(None) => Ok(SecretsRuling {
                value: None,
                rules: Vec::new(),
            }),
            Ok(Some(r)) => Ok(SecretsRuling {
                value: Some(value),
                rules: r.rules,
            }),
            Err(e) => Err(e.to_string()),
        }
    }

    async fn output(&self, call: OutputCall) -> Result<OutputRuling, String> {
        let origin = airlock_confirm::Origin {
            agent: self.agent.clone(),
            session: call.session,
        };
        let checked = self
            .broker
            .check_output(
                origin,
                &call.tool,
                call.cwd.as_deref().map(std::path::Path::new),
                &call.output,
            )
            .await
            .map_err(|e| e.to_string())?;
        Ok(OutputRuling {
            drift: checked.drift,
        })
    }
}

/// The denial for a call nobody answered in time.
pub fn timed_out(t: Duration) -> CallRuling {
    CallRuling::of(airlock_confirm::Ruling::timed_out(t))
}
