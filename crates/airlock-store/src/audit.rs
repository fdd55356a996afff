//! Verification of a stored ledger: reads everything in leaf order and hands it to
//! `airlock_ledger::LogVerifier`.

use airlock_ledger::{LogVerifier, VerifyReport};

use crate::{Db, StoreError};

/// Everything needed to verify or export a ledger, as canonical bytes.
pub struct Snapshot {
    pub receipts: Vec<(u64, Vec<u8>)>,
    pub checkpoints: Vec<Vec<u8>>,
    pub events: Vec<Vec<u8>>,
}

pub async fn snapshot(db: &Db) -> Result<Snapshot, StoreError> {
    // Registry and checkpoints first: a checkpoint never covers a receipt we do not read next.
    let events = db
        .registry_events()
        .await?
        .into_iter()
        .map(String::into_bytes)
        .collect();
    let checkpoints = db
        .checkpoints()
        .await?
        .into_iter()
        .map(String::into_bytes)
        .collect();
    let mut receipts = Vec::new();
    let mut from = 0u64;
    loop {
        let page = db.receipts(from, 20_000).await?;
        let Some(last) = page.last() else { break };
        from = last.leaf + 1;
        receipts.extend(page.into_iter().map(|r| (r.leaf, r.body.into_bytes())));
    }
    Ok(Snapshot {
        receipts,
        checkpoints,
        events,
    })
}

pub async fn verify(db: &Db) -> Result<VerifyReport, StoreError> {
    let s = snapshot(db).await?;
    Ok(LogVerifier::new(&s.events)?.verify(&s.receipts, &s.checkpoints)?)
}
