//! The person's words on the MCP surface, checked for a crisis: the `user` messages of a
//! server's sampling request (the conversation a server hands the client's model, as the
//! proxy's user messages are) are scanned in the person's direction, where the crisis rules
//! apply. A crisis verdict goes to the decider, which rescans and records it and puts the
//! session in crisis mode (`Broker::record_scan`, or `POST /v1/scan` for a daemon), so the
//! session's later tool calls, on every surface, are decided in the policy's crisis mode.
//! The request itself is never held back for it; other verdicts are the injection scan's
//! (tool direction, `scan.rs`) and are not recorded twice.

use airlock_shield::Direction;
use serde_json::Value;

use super::core::Core;
use super::gate::{Decider, ScanCall};

/// The text of a sampling request's `user` messages (their text blocks).
pub fn person_text(params: &Value) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for m in params
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
    {
        let items: Vec<&Value> = match m.get("content") {
            Some(Value::Array(items)) => items.iter().collect(),
            Some(item) => vec![item],
            None => Vec::new(),
        };
        parts.extend(
            items
                .into_iter()
                .filter(|i| i.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|i| i.get("text").and_then(Value::as_str)),
        );
    }
    parts.join("\n")
}

/// Checks the person's words of a sampling request (`params`, as the client will see them)
/// for a crisis; on one, has the decider record it and mark the session. A mark that fails is
/// logged and the request still goes on: a person in crisis is never turned away.
pub async fn check_sampling<D: Decider>(core: &Core<D>, params: &Value) {
    let text = person_text(params);
    if text.is_empty() {
        return;
    }
    let local = tokio::task::spawn_blocking(move || {
        let crisis = airlock_shield::scan(&text, Direction::User)
            .verdict
            .is_crisis();
        crisis.then_some(text)
    })
    .await;
    let text = match local {
        Ok(Some(text)) => text,
        Ok(None) => return,
        Err(e) => {
            eprintln!(
                "airlock mcp [{}]: a sampling request's messages could not be checked for a crisis: {e}",
                core.gw.server
            );
            return;
        }
    };
    let gw = &core.gw;
    let call = ScanCall {
        text,
        session: gw.session.clone(),
        source: format!("mcp:{}:sampling/createMessage", gw.server),
        handling: "pass",
        direction: Direction::User,
    };
    match gw.decider.scan(call).await {
        Ok(s) if s.verdict.is_crisis() => eprintln!(
            "airlock mcp [{}]: a sampling request carries a person in crisis: session {} is in crisis mode",
            gw.server, gw.session
        ),
        Ok(_) => {}
        Err(e) => eprintln!(
            "airlock mcp [{}]: could not mark session {} in crisis: {e}",
            gw.server, gw.session
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_user_messages_texts_are_the_persons_words() {
        let p = json!({
            "systemPrompt": "sys",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "one"}},
                {"role": "assistant", "content": {"type": "text", "text": "reply"}},
                {"role": "user", "content": [
                    {"type": "image", "data": "aGk=", "mimeType": "image/png"},
                    {"type": "text", "text": "two"}
                ]}
            ],
            "maxTokens": 5
        });
        assert_eq!(person_text(&p), "one\ntwo");
        assert_eq!(person_text(&json!({"messages": []})), "");
    }
}
