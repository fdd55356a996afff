//! Verification of a stored ledger: reads everything in leaf order and hands it to
//! `airlock_ledger::LogVerifier`, with the witnessed tree heads and the stored payloads when the
//! caller asks for them (`verify_full`).

use std::path::Path;

use airlock_ledger::{Extra, LogVerifier, PayloadCheck, VerifyReport};

use crate::{Db, StoreError};

/// Everything needed to verify or export a ledger, as canonical bytes.
pub struct Snapshot {
    pub receipts: Vec<(u64, Vec<u8>)>,
    pub checkpoints: Vec<Vec<u8>>,
    pub events: Vec<Vec<u8>>,
    /// Each receipt's stored payload (the recorded action), in the same order.
    pub payloads: Vec<Option<String>>,
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
    let mut payloads = Vec::new();
    let mut from = 0u64;
    loop {
        let page = db.receipts(from, 20_000).await?;
        let Some(last) = page.last() else { break };
        from = last.leaf + 1;
        for r in page {
            receipts.push((r.leaf, r.body.into_bytes()));
            payloads.push(r.payload);
        }
    }
    Ok(Snapshot {
        receipts,
        checkpoints,
        events,
        payloads,
    })
}

/// The log on its own: signatures, chains, Lamport order, checkpoints, registry.
pub async fn verify(db: &Db) -> Result<VerifyReport, StoreError> {
    let s = snapshot(db).await?;
    Ok(LogVerifier::new(&s.events)?.verify(&s.receipts, &s.checkpoints)?)
}

/// The log, and that it extends every tree head witnessed in `witness` (a directory, see
/// `witness`), and that every stored payload meets `payload` (the recorder's rule).
pub async fn verify_full(
    db: &Db,
    witness: Option<&Path>,
    payload: Option<&PayloadCheck>,
) -> Result<VerifyReport, StoreError> {
    let s = snapshot(db).await?;
    verify_snapshot(&s, witness, payload)
}

/// `verify_full` over a snapshot already read.
pub fn verify_snapshot(
    s: &Snapshot,
    witness: Option<&Path>,
    payload: Option<&PayloadCheck>,
) -> Result<VerifyReport, StoreError> {
    let witnessed = match witness {
        Some(dir) => crate::witness::read(dir)?,
        None => Vec::new(),
    };
    let extra = Extra {
        witnessed: &witnessed,
        payloads: payload.map(|p| (s.payloads.as_slice(), p)),
    };
    Ok(LogVerifier::new(&s.events)?.verify_with(&s.receipts, &s.checkpoints, extra)?)
}
