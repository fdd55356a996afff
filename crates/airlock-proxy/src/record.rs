//! The proxy's events, for what never reaches `Broker::submit`: a tool call refused before
//! the policy saw it (malformed arguments), each verdict of the inbound text scanner (a flagged
//! message alone, the clean ones of a request together) and a request refused for its budget.
//! Each is an `airlock_confirm::Event` recorded through the broker, so it sits in the same
//! signed chain as every decision, marked as an event.

use airlock_confirm::{Broker, Event, Origin, ScanVerdict};
use airlock_ledger::canonical::sha256_hex;

fn origin(agent: &str, session: &str) -> Origin {
    Origin {
        agent: agent.to_string(),
        session: session.to_string(),
    }
}

async fn record(broker: &Broker, event: Event) -> Result<String, String> {
    broker.record_event(&event).await.map_err(|e| e.to_string())
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
    let event = Event::Refusal {
        origin: origin(agent, session),
        tool: tool.to_string(),
        arguments: arguments.to_string(),
        what: code.to_string(),
        reason: reason.to_string(),
    };
    record(broker, event).await
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
    verdict: airlock_shield::TextVerdict,
    handling: &str,
    blocked: bool,
) -> Result<String, String> {
    let event = Event::InboundText {
        origin: origin(agent, session),
        role: role.to_string(),
        text_sha256: sha256_hex(text.as_bytes()),
        verdict: ScanVerdict::of(verdict),
        handling: handling.to_string(),
        blocked,
    };
    record(broker, event).await
}

/// The inbound texts of one request that the scanner found clean, in one receipt: for each,
/// its role, its SHA-256 and the verdict `CLEAN` (never the text).
pub async fn clean(
    broker: &Broker,
    agent: &str,
    session: &str,
    texts: &[(&str, String)],
) -> Result<String, String> {
    let event = Event::CleanTexts {
        origin: origin(agent, session),
        texts: texts
            .iter()
            .map(|(role, sha)| (role.to_string(), sha.clone()))
            .collect(),
    };
    record(broker, event).await
}

/// A request refused because the agent's budget for the period is spent.
pub async fn budget_refusal(
    broker: &Broker,
    agent: &str,
    session: &str,
    period_start_ms: i64,
    message: &str,
) -> Result<String, String> {
    let event = Event::BudgetRefusal {
        origin: origin(agent, session),
        period_start_ms,
        message: message.to_string(),
    };
    record(broker, event).await
}
