//! A person's re-approval of a quarantined MCP tool, as a ledger record: the same action and
//! reasons whether it comes through the REST API (`/v1/mcp/pins/…/approve`) or the terminal
//! (`airlock mcp approve-tool`), so the ledger reads the same either way.

use airlock_core::{Action, Assessment, Decision, Finding, ReasonCode, Severity, Tier};
use serde_json::json;

/// The session pin approvals are recorded in.
pub const SESSION: &str = "mcp-pins";

/// Whether `s` is a SHA-256 as the pins store it (64 lowercase hex digits).
pub fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The action and assessment recorded when `person` approves definition `approved` of
/// `server`/`tool` in place of `previous`.
pub fn approval(
    server: &str,
    tool: &str,
    approved: &str,
    previous: &str,
    person: &str,
) -> (Action, Assessment) {
    let action = Action::Tool {
        tool: "airlock.mcp.approve_tool".to_string(),
        arguments: json!({
            "server": server,
            "tool": tool,
            "approved_sha256": approved,
            "previous_sha256": previous,
        }),
    };
    let f = Finding::new(
        "mcp.tool_reapproved",
        ReasonCode::Approved,
        Decision::Allow,
        Tier::High,
        Severity::Medium,
        format!("{person} approved the changed definition of {tool} ({server})"),
    );
    (action, Assessment::from_findings(vec![f], Decision::Allow))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_64_lowercase_hex_digits() {
        assert!(is_sha256(&"ab".repeat(32)));
        assert!(!is_sha256(&"AB".repeat(32)));
        assert!(!is_sha256("abc"));
        assert!(!is_sha256(&"g".repeat(64)));
    }
}
