//! The hook's "ask", handed to a running `airlock serve`: the action becomes a pending approval
//! in the inbox (and the other channels), and the hook waits for the answer up to the tier's
//! timeout. When no daemon runs (or it cannot be reached), the hook answers "ask" as before and
//! the agent's own prompt asks the person: the daemon adds a channel, it never removes one.
//!
//! Whatever the daemon says is taken only as far as it is stricter or an explicit approval: a
//! pending action that outlives the hook's own budget is denied (silence is not consent), and an
//! error from the daemon leaves the local "ask" in place.
//!
//! A daemon on loopback (`http://127.0.0.1:…`, as `airlock serve` announces itself by default) is
//! reached with `http::Loopback`, in both binaries, and must prove the data directory's
//! `daemon.key` on every answer before the agent token is sent or an answer believed
//! (`proof`): a daemon that cannot (no key file, or a stranger on the port) is no daemon, and
//! the local ask stays. Any other URL needs TLS or a resolver the
//! lean binary does not carry: `Remote` says what the caller does then (the lean binary re-runs
//! the call through `airlock hook`; the full one connects with its own client).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use airlock_core::{Assessment, Decision, Finding, ReasonCode, Severity, Tier};
use airlock_wire::{ActionAnswer, ActionRequest, ActionStatus};
use serde_json::{Value, json};

use crate::endpoint::Endpoint;
use crate::http::{Loopback, Transport};
use crate::input::ToolCall;
use crate::tools::{self, HookVerdict};

/// How long the hook waits in all. `hook install` gives agents a 90 s hook timeout, and an agent
/// lets a timed-out hook through, so the hook must answer well before that.
pub const BUDGET: Duration = Duration::from_secs(80);

/// Where an `ask` may be handed: the daemon announced in `data_dir` (or named by `AIRLOCK_URL`).
pub struct Handoff<'a> {
    pub data_dir: PathBuf,
    /// How to reach a daemon that is not plain HTTP on loopback.
    pub remote: Remote<'a>,
}

/// Opens a transport to a daemon the built-in loopback client does not reach.
pub type Connect<'a> = &'a (dyn Fn(&Endpoint) -> anyhow::Result<Box<dyn Transport>> + Sync);

/// What to do with a daemon the built-in loopback client does not reach (TLS, another host).
pub enum Remote<'a> {
    /// This process cannot: the whole call is re-run by the full `airlock hook` (the lean
    /// binary has no TLS stack).
    Delegate,
    /// Reach it through this transport.
    Connect(Connect<'a>),
}

/// What became of a verdict on its way through the daemon.
pub enum Escalated {
    /// The verdict to answer with.
    Verdict(HookVerdict),
    /// The daemon needs a client this process does not have; the local verdict stays the
    /// answer if the call cannot be re-run elsewhere.
    Delegate(HookVerdict),
}

/// Hands an ask to the daemon if one runs; returns the verdict to answer with.
pub fn escalate(call: &ToolCall, verdict: HookVerdict, handoff: &Handoff) -> Escalated {
    if verdict.assessment.decision != Decision::Ask {
        return Escalated::Verdict(verdict);
    }
    let Some(action) = tools::action_of(call) else {
        return Escalated::Verdict(verdict);
    };
    let Some(ep) = Endpoint::discover(&handoff.data_dir, None, None, true) else {
        return Escalated::Verdict(verdict);
    };
    if ep.token.is_none() {
        return Escalated::Verdict(verdict);
    }
    let session = crate::crisis::session_key(call.protocol, call.session.as_deref());
    let request = ActionRequest::new(action, session).in_dir(call.cwd.as_deref());
    let body = match serde_json::to_value(&request) {
        Ok(v) => v,
        Err(_) => return Escalated::Verdict(verdict),
    };
    let transport: anyhow::Result<Box<dyn Transport>> = match Loopback::for_url(
        &ep.url,
        ep.token.clone(),
    ) {
        Some(_) if ep.key.is_none() => {
            eprintln!(
                "airlock hook: no {} in {}, so the daemon at {} cannot be verified; asking here",
                crate::proof::DAEMON_KEY_FILE,
                handoff.data_dir.display(),
                ep.url
            );
            return Escalated::Verdict(verdict);
        }
        Some(l) => Ok(Box::new(l.with_key(ep.key.clone()))),
        None => match &handoff.remote {
            Remote::Delegate => return Escalated::Delegate(verdict),
            Remote::Connect(connect) => connect(&ep),
        },
    };
    match transport.and_then(|t| ask_daemon(t.as_ref(), &body)) {
        Ok(Some(out)) => Escalated::Verdict(apply(verdict, &out)),
        Ok(None) => Escalated::Verdict(timed_out(verdict)),
        Err(e) => {
            eprintln!("airlock hook: the daemon could not take this approval ({e:#}); asking here");
            Escalated::Verdict(verdict)
        }
    }
}

/// Tells the daemon, if one runs, that `mark.session` is in crisis: it keeps the state in its
/// store for every node and records it as a receipt. Best effort and short (2 s at most): the
/// person's prompt never waits on anyone, and the mark in the data directory stands anyway.
pub fn report_crisis(mark: &crate::crisis::Mark, handoff: &Handoff) {
    let Some(ep) = Endpoint::discover(&handoff.data_dir, None, None, true) else {
        return;
    };
    if ep.token.is_none() {
        return;
    }
    let transport: anyhow::Result<Box<dyn Transport>> =
        match Loopback::for_url(&ep.url, ep.token.clone()) {
            // a daemon that cannot prove the data directory's key is no daemon
            Some(_) if ep.key.is_none() => return,
            Some(l) => Ok(Box::new(l.with_key(ep.key.clone()))),
            None => match &handoff.remote {
                Remote::Delegate => {
                    eprintln!(
                        "airlock hook: the daemon at {} is not on loopback; the crisis mark stays \
                         in {} only",
                        ep.url,
                        handoff.data_dir.display()
                    );
                    return;
                }
                Remote::Connect(connect) => connect(&ep),
            },
        };
    let body = json!({"session": mark.session, "source": mark.source, "rule": mark.rule});
    if let Err(e) =
        transport.and_then(|t| t.call("POST", "/v1/crisis", Some(&body), Duration::from_secs(2)))
    {
        eprintln!("airlock hook: the daemon did not take the crisis mark ({e:#})");
    }
}

/// Submits and long-polls; `None` when the hook's budget ran out first.
pub fn ask_daemon(t: &dyn Transport, body: &Value) -> anyhow::Result<Option<ActionAnswer>> {
    let started = Instant::now();
    let read = |v: Value| -> anyhow::Result<ActionAnswer> {
        serde_json::from_value(v)
            .map_err(|e| anyhow::anyhow!("the daemon's answer is not an action answer: {e}"))
    };
    let mut out = read(t.call("POST", "/v1/actions", Some(body), Duration::from_secs(10))?)?;
    while out.status == ActionStatus::Pending {
        let left = BUDGET.saturating_sub(started.elapsed());
        if left < Duration::from_secs(1) {
            return Ok(None);
        }
        let wait = left.min(Duration::from_secs(30)).as_secs();
        let id = out.id.as_str();
        if id.is_empty()
            || !id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        {
            anyhow::bail!("the daemon answered a pending action without a usable id");
        }
        let path = format!("/v1/actions/{id}/wait?timeout={wait}");
        out = read(t.call("GET", &path, None, Duration::from_secs(wait + 10))?)?;
    }
    Ok(Some(out))
}

/// The daemon's final answer, onto the local verdict. Only "allowed" allows; "denied" denies
/// with its first reason's code.
fn apply(mut verdict: HookVerdict, out: &ActionAnswer) -> HookVerdict {
    let message = out.message.clone();
    let tier = verdict.assessment.tier;
    let who = if out.id.is_empty() {
        "?"
    } else {
        out.id.as_str()
    };
    match out.status {
        ActionStatus::Allowed => {
            let f = Finding::new(
                "daemon.approved",
                ReasonCode::Approved,
                Decision::Allow,
                tier,
                Severity::Info,
                if message.is_empty() {
                    format!("approved through airlock serve ({who})")
                } else {
                    message
                },
            );
            verdict.assessment = Assessment::from_findings(vec![f], Decision::Allow);
            verdict.assessment.tier = tier;
        }
        ActionStatus::Denied => {
            let code = out.first_code().unwrap_or(ReasonCode::ApprovalDenied);
            let f = Finding::new(
                "daemon.denied",
                code,
                Decision::Deny,
                tier,
                Severity::High,
                if message.is_empty() {
                    format!("denied through airlock serve ({who})")
                } else {
                    message
                },
            );
            verdict.assessment.reasons.insert(0, f);
            verdict.assessment.decision = Decision::Deny;
        }
        ActionStatus::Pending => {}
    }
    verdict
}

fn timed_out(mut verdict: HookVerdict) -> HookVerdict {
    let f = Finding::new(
        "daemon.timeout",
        ReasonCode::ApprovalTimeout,
        Decision::Deny,
        verdict.assessment.tier.max(Tier::Low),
        Severity::High,
        format!(
            "nobody answered within {} s: the action is denied (silence is not consent). Ask the user before trying again.",
            BUDGET.as_secs()
        ),
    );
    verdict.assessment.reasons.insert(0, f);
    verdict.assessment.decision = Decision::Deny;
    verdict
}
