//! A person's re-approval of a quarantined MCP tool, as a ledger record: the same action and
//! reasons whether it comes through the REST API (`/v1/mcp/pins/…/approve`) or the terminal
//! (`airlock mcp approve-tool`), so the ledger reads the same either way.

use airlock_core::{Action, Assessment, Decision, Finding, ReasonCode, Severity, Tier};
use airlock_store::PinRow;
use serde_json::json;

/// The session pin approvals are recorded in.
pub const SESSION: &str = "mcp-pins";

/// Whether `s` is a SHA-256 as the pins store it (64 lowercase hex digits).
pub fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Why a pin cannot be approved as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotApprovable {
    /// The tool is usable already (or nothing waits).
    NotQuarantined,
    /// It now presents another definition than the one the person reviewed.
    Changed { presented: String },
}

/// The pending hash a person may approve on `row`: the definition waiting now, and when
/// `reviewed` is given, only if it is that one (a server that swapped its definition after the
/// person read it gets nothing approved).
pub fn approvable(row: &PinRow, reviewed: Option<&str>) -> Result<String, NotApprovable> {
    let pending = match (&row.pending_sha256, row.status.as_str()) {
        (Some(p), "quarantined") => p,
        _ => return Err(NotApprovable::NotQuarantined),
    };
    match reviewed {
        Some(h) if h != pending => Err(NotApprovable::Changed {
            presented: pending.clone(),
        }),
        _ => Ok(pending.clone()),
    }
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

    fn row(status: &str, pending: Option<&str>) -> PinRow {
        PinRow {
            server: "s".into(),
            tool: "t".into(),
            sha256: "a".repeat(64),
            status: status.into(),
            pending_sha256: pending.map(str::to_string),
            pending_definition: None,
            first_seen_ms: 1,
            updated_ms: 1,
        }
    }

    #[test]
    fn only_the_reviewed_pending_definition_is_approvable() {
        let b = "b".repeat(64);
        let q = row("quarantined", Some(&b));
        assert_eq!(approvable(&q, Some(&b)), Ok(b.clone()));
        assert_eq!(approvable(&q, None), Ok(b.clone()));
        assert_eq!(
            approvable(&q, Some(&"a".repeat(64))),
            Err(NotApprovable::Changed { presented: b })
        );
        assert_eq!(
            approvable(&row("approved", None), None),
            Err(NotApprovable::NotQuarantined)
        );
    }

    #[test]
    fn hashes_are_64_lowercase_hex_digits() {
        assert!(is_sha256(&"ab".repeat(32)));
        assert!(!is_sha256(&"AB".repeat(32)));
        assert!(!is_sha256("abc"));
        assert!(!is_sha256(&"g".repeat(64)));
    }
}
