//! Receipts the proxy writes itself, for what never reaches `Broker::submit`: a tool call
//! refused before the policy saw it (malformed arguments), each verdict of the inbound text
//! scanner (a flagged message alone, the clean ones of a request together) and a request
//! refused for its budget. All go through airlock-confirm's receipt builder into the broker's
//! ledger, so they sit in the same signed chain as every decision on an action.

use airlock_confirm::{Broker, RecordContext};
use airlock_core::{Action, Assessment, Decision, Finding, ReasonCode, Severity, Tier};
use airlock_ledger::canonical::sha256_hex;
use airlock_store::LedgerStore;
use serde_json::json;

/// What the proxy's own receipts name as their policy: the rule that produced them.
fn proxy_policy(what: &str) -> String {
    sha256_hex(format!("airlock-proxy:{what}").as_bytes())
}

/// Records one decision the proxy took; returns the receipt id.
pub async fn record(
    broker: &Broker,
    agent: &str,
    session: &str,
    action: &Action,
    assessment: &Assessment,
    policy: &str,
) -> Result<String, String> {
    record_by(
        broker,
        agent,
        session,
        action,
        assessment,
        policy,
        Vec::new(),
    )
    .await
}

/// [`record`] with the people who approved it.
pub async fn record_by(
    broker: &Broker,
    principal: &str,
    session: &str,
    action: &Action,
    assessment: &Assessment,
    policy: &str,
    approvers: Vec<String>,
) -> Result<String, String> {
    let ctx = RecordContext {
        request_id: None,
        session: session.to_string(),
        principal: principal.to_string(),
        policy_sha256: proxy_policy(policy),
        grant: None,
        approvers,
        output_sha256: None,
    };
    let req =
        airlock_confirm::receipt::request(action, assessment, &ctx).map_err(|e| e.to_string())?;
    let r = broker
        .ledger()
        .append(req)
        .await
        .map_err(|e| e.to_string())?;
    Ok(r.id)
}

/// A tool call refused before the broker (the arguments were unusable).
pub async fn refusal(
    broker: &Broker,
    agent: &str,
    session: &str,
    tool: &str,
    arguments: &str,
    code: &str,
    reason: &str,
) -> Result<String, String> {
    let action = Action::Tool {
        tool: tool.to_string(),
        arguments: json!({ "unparsed_sha256": sha256_hex(arguments.as_bytes()) }),
    };
    let f = Finding::new(
        format!("proxy.{}", code.to_ascii_lowercase()),
        ReasonCode::MalformedInput,
        Decision::Deny,
        Tier::Medium,
        Severity::Medium,
        reason.to_string(),
    );
    let a = Assessment::from_findings(vec![f], Decision::Deny);
    record(broker, agent, session, &action, &a, "tool-call-arguments").await
}

/// One verdict of the inbound scanner on a message (`role` user or tool): the receipt holds
/// the text's hash, never the text, and the decision the proxy took (`deny` for block, `allow`
/// otherwise, the verdict's code as the reason).
#[allow(clippy::too_many_arguments)]
pub async fn verdict(
    broker: &Broker,
    agent: &str,
    session: &str,
    role: &str,
    text: &str,
    verdict: airlock_shield::Verdict,
    handling: &str,
    blocked: bool,
) -> Result<String, String> {
    let decision = if blocked {
        Decision::Deny
    } else {
        Decision::Allow
    };
    let action = Action::Tool {
        tool: "airlock.proxy.inbound_text".to_string(),
        arguments: json!({
            "role": role,
            "text_sha256": sha256_hex(text.as_bytes()),
            "verdict": verdict.as_str(),
            "handling": handling,
        }),
    };
    let a = flagged(
        "proxy.scan",
        verdict,
        decision,
        format!("inbound {role} text: {} ({handling})", verdict.as_str()),
    );
    record(
        broker,
        agent,
        session,
        &action,
        &a,
        &format!("scan:{handling}"),
    )
    .await
}

/// The inbound texts of one request that the scanner found clean, in one receipt: for each,
/// its role, its SHA-256 and the verdict `CLEAN` (never the text).
pub async fn clean(
    broker: &Broker,
    agent: &str,
    session: &str,
    texts: &[(&str, String)],
) -> Result<String, String> {
    let scanned: Vec<_> = texts
        .iter()
        .map(|(role, sha)| json!({"role": role, "text_sha256": sha, "verdict": "CLEAN"}))
        .collect();
    let action = Action::Tool {
        tool: "airlock.proxy.inbound_text".to_string(),
        arguments: json!({ "scanned": scanned, "handling": "forward" }),
    };
    record(
        broker,
        agent,
        session,
        &action,
        &Assessment::allow(),
        "scan:clean",
    )
    .await
}

/// A request refused because the agent's budget for the period is spent.
pub async fn budget_refusal(
    broker: &Broker,
    agent: &str,
    session: &str,
    period_start_ms: i64,
    message: &str,
) -> Result<String, String> {
    let action = Action::Tool {
        tool: "airlock.proxy.request".to_string(),
        arguments: json!({ "budget_period_start_ms": period_start_ms }),
    };
    let f = Finding::new(
        "proxy.budget_exceeded",
        ReasonCode::BudgetExceeded,
        Decision::Deny,
        Tier::Low,
        Severity::Low,
        message.to_string(),
    );
    let a = Assessment::from_findings(vec![f], Decision::Deny);
    record(broker, agent, session, &action, &a, "budget").await
}

/// A verdict of the text scanner on text from `source` (an MCP server's answer, or whatever a
/// client of `POST /v1/scan` names), recorded by the text's SHA-256: decision `deny` when a
/// flagged text is blocked, `allow` otherwise; a flagged verdict carries its reason code.
#[allow(clippy::too_many_arguments)]
pub async fn scanned(
    broker: &Broker,
    agent: &str,
    session: &str,
    source: &str,
    direction: airlock_shield::Direction,
    text: &str,
    verdict: airlock_shield::Verdict,
    handling: &str,
) -> Result<String, String> {
    let clean = verdict.is_clean();
    let handling = if clean { "forward" } else { handling };
    let decision = if !clean && handling == "block" {
        Decision::Deny
    } else {
        Decision::Allow
    };
    let action = Action::Tool {
        tool: "airlock.scan".to_string(),
        arguments: json!({
            "source": source,
            "direction": direction,
            "text_sha256": sha256_hex(text.as_bytes()),
            "verdict": verdict.as_str(),
            "handling": handling,
        }),
    };
    let a = if clean {
        Assessment::allow()
    } else {
        flagged(
            "scan",
            verdict,
            decision,
            format!("text from {source}: {} ({handling})", verdict.as_str()),
        )
    };
    record(
        broker,
        agent,
        session,
        &action,
        &a,
        &format!("scan:{handling}"),
    )
    .await
}

/// The assessment of a flagged verdict: one finding with the verdict's reason code.
fn flagged(
    prefix: &str,
    verdict: airlock_shield::Verdict,
    decision: Decision,
    message: String,
) -> Assessment {
    let code = match verdict {
        airlock_shield::Verdict::JailbreakDetected => ReasonCode::TextJailbreak,
        airlock_shield::Verdict::InjectionDetected => ReasonCode::TextInjection,
        _ => ReasonCode::TextCrisis,
    };
    let f = Finding::new(
        format!("{prefix}.{}", verdict.as_str().to_ascii_lowercase()),
        code,
        decision,
        Tier::Medium,
        Severity::Medium,
        message,
    );
    Assessment::from_findings(vec![f], decision)
}
