//! A session's crisis mode, one use-case whichever surface saw the crisis (a hook's prompt
//! through `POST /v1/crisis`, the proxy's inbound scan, the MCP gateway, `POST /v1/scan`) and
//! whoever ends it (the REST API, the inbox, `airlock crisis clear`): [`mark`] keeps the state in
//! the store (every node of a shared PostgreSQL sees it) and records the first mark as a
//! receipt; [`clear`] is an approver's, recorded before the state ends. The broker reads the
//! state on every submission of the session (its policy evaluation runs in crisis mode).

use airlock_core::{Finding, ReasonCode};
use airlock_store::{CrisisRow, Ledger};

use crate::ConfirmError;
use crate::broker::Broker;
use crate::event::{CrisisChange, Event, Origin, record};
use crate::model::{Principal, Role};

/// Whether findings say the action decides something for a person who may be in crisis
/// (contacting emergency services or someone they know, sharing a location, ending the
/// conversation): such an action is answered by a person every time, and nothing stands in for
/// one (no grant, learned or not, no batch answer, no LLM verdict, approve or deny).
pub fn decides_for_person(reasons: &[Finding]) -> bool {
    reasons.iter().any(|f| f.code == ReasonCode::CrisisDecision)
}

/// Marks `origin.session` in crisis mode after a crisis verdict from `source` (`rule`: the
/// scanner's first crisis rule). The first mark is recorded as a receipt (its id is returned);
/// a session already in crisis mode keeps its mark and records nothing more (`None`).
pub async fn mark(
    ledger: &Ledger,
    origin: &Origin,
    source: &str,
    rule: &str,
    now_ms: i64,
) -> Result<Option<String>, ConfirmError> {
    let row = CrisisRow {
        session: origin.session.clone(),
        since_ms: now_ms,
        source: source.to_string(),
        rule: rule.to_string(),
        agent: origin.agent.clone(),
    };
    if !ledger.db().crisis_set(&row).await? {
        return Ok(None);
    }
    let event = Event::Crisis {
        session: row.session,
        who: row.agent,
        change: CrisisChange::Set,
        source: row.source,
        rule: row.rule,
    };
    Ok(Some(record(ledger, &event).await?.id))
}

/// An approver ends `session`'s crisis mode: recorded (naming them) before the state ends.
/// `Ok(None)` when the session was not in crisis mode (nothing recorded).
pub async fn clear(
    ledger: &Ledger,
    by: &Principal,
    session: &str,
) -> Result<Option<(CrisisRow, String)>, ConfirmError> {
    if by.role == Role::Agent {
        return Err(ConfirmError::Forbidden(
            "only an approver may end a session's crisis mode".into(),
        ));
    }
    let Some(row) = ledger.db().crisis_get(session).await? else {
        return Ok(None);
    };
    let event = Event::Crisis {
        session: row.session.clone(),
        who: by.name.clone(),
        change: CrisisChange::Clear,
        source: row.source.clone(),
        rule: row.rule.clone(),
    };
    let receipt = record(ledger, &event).await?.id;
    ledger.db().crisis_clear(session).await?;
    Ok(Some((row, receipt)))
}

impl Broker {
    /// [`mark`] in the broker's ledger.
    pub async fn mark_crisis(
        &self,
        origin: &Origin,
        source: &str,
        rule: &str,
    ) -> Result<Option<String>, ConfirmError> {
        mark(self.ledger(), origin, source, rule, self.now()).await
    }

    /// [`clear`] in the broker's ledger.
    pub async fn clear_crisis(
        &self,
        by: &Principal,
        session: &str,
    ) -> Result<Option<(CrisisRow, String)>, ConfirmError> {
        clear(self.ledger(), by, session).await
    }

    /// Every session in crisis mode, oldest mark first.
    pub async fn crisis_sessions(&self) -> Result<Vec<CrisisRow>, ConfirmError> {
        Ok(self.db().crisis_list().await?)
    }

    /// Whether `session` is in crisis mode.
    pub async fn in_crisis(&self, session: &str) -> Result<bool, ConfirmError> {
        Ok(self.db().crisis_get(session).await?.is_some())
    }
}
