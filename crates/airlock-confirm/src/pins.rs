//! A person's re-approval of a quarantined MCP tool, one use-case ([`approve_pin`]) whether it
//! comes through the REST API (`/v1/mcp/pins/…/approve`), the inbox or the terminal (`airlock
//! mcp approve-tool`): the same checks, the same receipt, the same order (recorded, then moved).

use airlock_store::{Ledger, PinRow};

use crate::ConfirmError;
use crate::event::Event;

/// The session pin approvals are recorded in.
pub const SESSION: &str = crate::event::PIN_SESSION;

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

/// Why a person's pin approval did not happen (or not wholly).
#[derive(Debug, thiserror::Error)]
pub enum PinApprovalError {
    #[error("sha256 must be 64 lowercase hex digits (the pending hash you reviewed)")]
    BadHash,
    #[error("no pin for {tool} ({server})")]
    NoPin { server: String, tool: String },
    #[error("{tool} ({server}) is not quarantined")]
    NotQuarantined { server: String, tool: String },
    #[error(
        "{tool} ({server}) now presents another definition ({presented}) than the one you reviewed; read it again"
    )]
    Changed {
        server: String,
        tool: String,
        presented: String,
    },
    /// Recorded, but the pin changed before it moved: the receipt records the approval of the
    /// definition the person reviewed, and nothing is usable.
    #[error(
        "{tool} ({server}) changed while it was approved; read it again (receipt {receipt} records your approval of the definition you reviewed)"
    )]
    ChangedMeanwhile {
        server: String,
        tool: String,
        receipt: String,
    },
    #[error(transparent)]
    Failed(#[from] ConfirmError),
}

/// A person re-approves a quarantined tool: the definition they reviewed (`reviewed`; without
/// it, the one waiting now) is recorded as an [`Event::PinApproval`] naming them, before the
/// pin moves. The REST API, the inbox and `airlock mcp approve-tool` all go through here.
pub async fn approve_pin(
    ledger: &Ledger,
    server: &str,
    tool: &str,
    reviewed: Option<&str>,
    person: &str,
) -> Result<PinApproved, PinApprovalError> {
    if reviewed.is_some_and(|h| !is_sha256(h)) {
        return Err(PinApprovalError::BadHash);
    }
    let names = || (server.to_string(), tool.to_string());
    let db = ledger.db();
    let Some(row) = db
        .mcp_pin_get(server, tool)
        .await
        .map_err(ConfirmError::from)?
    else {
        let (server, tool) = names();
        return Err(PinApprovalError::NoPin { server, tool });
    };
    let pending = match approvable(&row, reviewed) {
        Ok(p) => p,
        Err(NotApprovable::NotQuarantined) => {
            let (server, tool) = names();
            return Err(PinApprovalError::NotQuarantined { server, tool });
        }
        Err(NotApprovable::Changed { presented }) => {
            let (server, tool) = names();
            return Err(PinApprovalError::Changed {
                server,
                tool,
                presented,
            });
        }
    };
    let event = Event::PinApproval {
        person: person.to_string(),
        server: server.to_string(),
        tool: tool.to_string(),
        approved_sha256: pending.clone(),
        previous_sha256: row.sha256.clone(),
    };
    let receipt = crate::event::record(ledger, &event).await?.id;
    let moved = db
        .mcp_pin_approve(server, tool, &pending, airlock_grants::system_now_ms())
        .await
        .map_err(ConfirmError::from)?;
    if !moved {
        let (server, tool) = names();
        return Err(PinApprovalError::ChangedMeanwhile {
            server,
            tool,
            receipt,
        });
    }
    Ok(PinApproved {
        receipt,
        approved_sha256: pending,
    })
}

/// A pin approval done: its receipt, and the definition now usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinApproved {
    pub receipt: String,
    pub approved_sha256: String,
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
