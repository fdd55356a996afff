//! JSON-RPC method names as the MCP specification spells them. Methods are case-sensitive
//! strings: a server that reads `Tools/call` (or `tools/call ` or `tools/call\u{200b}`) as
//! `tools/call` would run a call the gateway never gated, so the gateway relays only the
//! methods the specification (and the official Rust SDK, rmcp 3.11, the gateway's schema
//! authority) names, spelt exactly. A request with any other method is answered with JSON-RPC
//! `-32601` (method not found, `MCP_METHOD_UNKNOWN`) and not relayed; such a notification is
//! dropped.

/// Every method of the protocol, requests and notifications, in either direction.
const KNOWN: &[&str] = &[
    // lifecycle and utilities
    "initialize",
    "ping",
    "server/discover",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "logging/setLevel",
    "notifications/message",
    "completion/complete",
    // tools
    "tools/list",
    "tools/call",
    "notifications/tools/list_changed",
    // resources
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/directory/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
    "subscriptions/listen",
    "notifications/subscriptions/acknowledged",
    // prompts
    "prompts/list",
    "prompts/get",
    "notifications/prompts/list_changed",
    // the client's features
    "sampling/createMessage",
    "elicitation/create",
    "notifications/elicitation/response",
    "notifications/elicitation/complete",
    "roots/list",
    "notifications/roots/list_changed",
    // tasks
    "tasks/get",
    "tasks/list",
    "tasks/result",
    "tasks/update",
    "tasks/cancel",
    "notifications/tasks",
    "notifications/tasks/status",
    // skills
    "skills/list",
    "skills/get",
];

/// JSON-RPC "method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;

/// The stable reason of a refused method.
pub const UNKNOWN: &str = "MCP_METHOD_UNKNOWN";

/// Whether `method` is one of the protocol's, spelt exactly.
pub fn known(method: &str) -> bool {
    KNOWN.contains(&method)
}

/// The protocol method `method` is a misspelling of (other case, spaces, invisible or
/// look-alike characters), for the message; `None` when it resembles none.
pub fn resembles(method: &str) -> Option<&'static str> {
    let fold = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_alphanumeric() || *c == '/')
            .flat_map(char::to_lowercase)
            .collect()
    };
    let folded = airlock_shell::evasion::fold_confusables(method).unwrap_or(method.to_string());
    let f = fold(&folded);
    KNOWN.iter().copied().find(|k| fold(k) == f)
}

/// The message of a refusal of `method`.
pub fn refusal_message(method: &str) -> String {
    let shown: String = method.chars().take(80).collect();
    match resembles(method) {
        Some(k) => format!(
            "`{}` is not an MCP method: methods are case-sensitive, did you mean `{k}`?",
            shown.escape_debug()
        ),
        None => format!(
            "`{}` is not an MCP method this gateway relays",
            shown.escape_debug()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exact_spellings_are_known() {
        for m in [
            "tools/call",
            "tools/list",
            "initialize",
            "notifications/initialized",
        ] {
            assert!(known(m), "{m}");
        }
        for m in [
            "Tools/call",
            "TOOLS/CALL",
            "tools/Call",
            "tools/call ",
            " tools/call",
            "tools/call\u{200b}",
            "tооls/call",
            "tools//call",
            "tools/call/",
            "",
            "x/custom",
        ] {
            assert!(!known(m), "{m:?}");
        }
        assert_eq!(resembles("Tools/call"), Some("tools/call"));
        assert_eq!(resembles("tools/call\u{200b}"), Some("tools/call"));
        assert_eq!(resembles("tооls/call"), Some("tools/call"));
        assert_eq!(resembles("x/custom"), None);
        assert!(refusal_message("Tools/call").contains("did you mean `tools/call`"));
    }
}
