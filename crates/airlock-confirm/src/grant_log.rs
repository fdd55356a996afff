//! A grant's life cycle with its receipts: each change a person makes (create, confirm, revoke,
//! end a session's grants) happens in the grant book and is recorded as an [`Event::Grant`]
//! naming them. The CLI, the REST API and the inbox all change grants through here, so no
//! surface changes a grant without a receipt.

use airlock_grants::{Grant, GrantBook, NewGrant};
use airlock_store::Ledger;
use serde_json::json;

use crate::ConfirmError;
use crate::event::{Event, GrantChange, record};

/// How a person is named in a grant event's receipt.
pub fn person_principal(name: &str) -> String {
    format!("person:{name}")
}

async fn log(
    ledger: &Ledger,
    person: &str,
    change: GrantChange,
    details: serde_json::Value,
    grant: Option<&str>,
) -> Result<(), ConfirmError> {
    let event = Event::Grant {
        person: person_principal(person),
        change,
        details,
        grant: grant.map(str::to_string),
    };
    record(ledger, &event).await.map(|_| ())
}

fn json_of(g: &Grant) -> Result<serde_json::Value, ConfirmError> {
    serde_json::to_value(g).map_err(|e| ConfirmError::Internal(format!("a grant: {e}")))
}

/// `person` creates a grant.
pub async fn create(
    book: &GrantBook,
    ledger: &Ledger,
    req: NewGrant,
    person: &str,
) -> Result<Grant, ConfirmError> {
    let g = book.create(req, person).await?;
    log(ledger, person, GrantChange::Add, json_of(&g)?, Some(&g.id)).await?;
    Ok(g)
}

/// `person` confirms a proposed grant.
pub async fn confirm(
    book: &GrantBook,
    ledger: &Ledger,
    id: &str,
    person: &str,
) -> Result<Grant, ConfirmError> {
    let g = book.confirm(id, person).await?;
    log(
        ledger,
        person,
        GrantChange::Confirm,
        json_of(&g)?,
        Some(&g.id),
    )
    .await?;
    Ok(g)
}

/// `person` revokes grant `id` and what was derived from it; returns how many it revoked (0:
/// it was revoked already, and nothing is recorded).
pub async fn revoke(
    book: &GrantBook,
    ledger: &Ledger,
    id: &str,
    reason: &str,
    person: &str,
) -> Result<u64, ConfirmError> {
    let n = book.revoke(id, reason).await?;
    if n > 0 {
        let details = json!({"id": id, "reason": reason, "revoked": n});
        log(ledger, person, GrantChange::Revoke, details, Some(id)).await?;
    }
    Ok(n)
}

/// `person` ends a session: its grants are revoked; returns how many.
pub async fn end_session(
    book: &GrantBook,
    ledger: &Ledger,
    session: &str,
    person: &str,
) -> Result<u64, ConfirmError> {
    let n = book.end_session(session).await?;
    let details = json!({"session": session, "revoked": n});
    log(ledger, person, GrantChange::EndSession, details, None).await?;
    Ok(n)
}
