//! The hook's "ask", handed to a running `airlock serve`: the action becomes a pending approval
//! in the inbox (and the other channels), and the hook waits for the answer up to the tier's
//! timeout. When no daemon runs (or it cannot be reached), the hook answers "ask" as before and
//! the agent's own prompt asks the person: the daemon adds a channel, it never removes one.
//!
//! Whatever the daemon says is taken only as far as it is stricter or an explicit approval: a
//! pending action that outlives the hook's own budget is denied (silence is not consent), and an
//! error from the daemon leaves the local "ask" in place.

use std::time::{Duration, Instant};

use airlock_core::{Assessment, Decision, Finding, ReasonCode, Severity, Tier};
use serde_json::{Value, json};

use super::input::ToolCall;
use super::tools::{self, Verdict};
use crate::daemon::{Client, Endpoint};

/// How long the hook waits in all. `hook install` gives agents a 90 s hook timeout, and an agent
/// lets a timed-out hook through, so the hook must answer well before that.
pub const BUDGET: Duration = Duration::from_secs(80);

/// Hands an ask to the daemon if one runs; returns the verdict to answer with.
pub fn escalate(call: &ToolCall, verdict: Verdict) -> Verdict {
    if verdict.assessment.decision != Decision::Ask {
        return verdict;
    }
    let Some(action) = tools::action_of(call) else {
        return verdict;
    };
    let Some(ep) = Endpoint::discover(&crate::daemon::data_dir(), None, None, true) else {
        return verdict;
    };
    if ep.token.is_none() {
        return verdict;
    }
    let mut body = match serde_json::to_value(&action) {
        Ok(v) => v,
        Err(_) => return verdict,
    };
    let session = std::env::var("AIRLOCK_SESSION")
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| call.session.clone())
        .unwrap_or_else(|| format!("{}-hook", call.protocol.name()));
    body["session"] = json!(session);
    if let (Some(cwd), Some(m)) = (&call.cwd, body.as_object_mut()) {
        m.entry("cwd").or_insert_with(|| json!(cwd));
    }
    match ask_daemon(ep, &body) {
        Ok(Some(out)) => apply(verdict, &out),
        Ok(None) => timed_out(verdict),
        Err(e) => {
            eprintln!("airlock hook: the daemon could not take this approval ({e:#}); asking here");
            verdict
        }
    }
}

/// Submits and long-polls; `None` when the hook's budget ran out first.
fn ask_daemon(ep: Endpoint, body: &Value) -> anyhow::Result<Option<Value>> {
    let started = Instant::now();
    let client = Client::new(ep)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let call = Duration::from_secs(10);
        let mut out = client.post("/v1/actions", body, call).await?;
        while out["status"] == "pending" {
            let left = BUDGET.saturating_sub(started.elapsed());
            if left < Duration::from_secs(1) {
                return Ok(None);
            }
            let wait = left.min(Duration::from_secs(30)).as_secs();
            let id = out["id"].as_str().unwrap_or_default().to_string();
            let path = format!("/v1/actions/{id}/wait?timeout={wait}");
            out = client.get(&path, Duration::from_secs(wait + 10)).await?;
        }
        Ok(Some(out))
    })
}

/// The daemon's final answer, onto the local verdict. Only "allowed" allows; anything else
/// that is not "denied" keeps the local ask.
fn apply(mut verdict: Verdict, out: &Value) -> Verdict {
    let message = out["message"].as_str().unwrap_or_default().to_string();
    let tier = verdict.assessment.tier;
    let who = out["id"].as_str().unwrap_or("?");
    match out["status"].as_str() {
        Some("allowed") => {
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
        Some("denied") => {
            let code = out["reasons"]
                .as_array()
                .and_then(|r| r.first())
                .and_then(|r| r["code"].as_str())
                .and_then(ReasonCode::parse)
                .unwrap_or(ReasonCode::ApprovalDenied);
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
        _ => {}
    }
    verdict
}

fn timed_out(mut verdict: Verdict) -> Verdict {
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
