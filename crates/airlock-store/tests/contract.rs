//! The same behaviour on both backends: append, idempotency, checkpoints, reopen, rotation.

use std::time::Duration;

use airlock_ledger::Receipt;
use airlock_store::{Ledger, LedgerConfig, LedgerStore, StoreOptions, audit, rotate_ledger_key};

use crate::common::{PgSchema, request};

fn config() -> LedgerConfig {
    LedgerConfig {
        checkpoint_every: 16,
        checkpoint_interval: Duration::from_secs(3600),
        max_batch: 64,
    }
}

async fn contract(opts: StoreOptions) {
    let ledger = Ledger::open(&opts, config()).await.unwrap();
    let mut ids = Vec::new();
    for i in 0..40 {
        let r = ledger
            .append(request(&format!("req-{i}"), &format!("s{}", i % 3)))
            .await
            .unwrap();
        ids.push(r.id.clone());
    }
    // Idempotency: the same request id yields the same receipt and no second row.
    let again = ledger.append(request("req-7", "s1")).await.unwrap();
    assert_eq!(again.id, ids[7]);
    assert_eq!(ledger.receipts(0, 1000).await.unwrap().len(), 40);
    // Two appends of one request id at once (most likely in one batch): one receipt.
    let (x, y) = tokio::join!(
        ledger.append(request("dup", "s9")),
        ledger.append(request("dup", "s9"))
    );
    assert_eq!(x.unwrap(), y.unwrap());
    assert_eq!(ledger.receipts(0, 1000).await.unwrap().len(), 41);
    // Lamport counters are per session, from 1, without gaps.
    let all: Vec<Receipt> = ledger
        .receipts(0, 1000)
        .await
        .unwrap()
        .iter()
        .map(|s| Receipt::parse(s.body.as_bytes()).unwrap())
        .collect();
    let s0: Vec<u64> = all
        .iter()
        .filter(|r| r.session == "s0")
        .map(|r| r.lamport)
        .collect();
    assert_eq!(s0, (1..=14).collect::<Vec<_>>());
    assert!(
        ledger
            .receipt(&ids[3])
            .await
            .unwrap()
            .unwrap()
            .payload
            .unwrap()
            .contains("echo req-3")
    );
    let cp = ledger.checkpoint().await.unwrap().unwrap();
    assert_eq!(cp.size, 41);
    // Sizes 1 (the first receipt: no checkpoint existed yet), 17, 33 (every 16), and 41 (forced).
    assert_eq!(ledger.checkpoints().await.unwrap().len(), 4);
    let rep = audit::verify(ledger.db()).await.unwrap();
    assert_eq!((rep.receipts, rep.sessions, rep.uncovered), (41, 4, 0));
    let anchor = ledger.anchor().to_string();
    ledger.close().await;

    // Reopen, rotate the key, append more: the whole log still verifies.
    let keys = opts.data_dir.join("keys");
    let old_key = std::fs::read(keys.join("ledger.key")).unwrap();
    rotate_ledger_key(&opts).await.unwrap();
    // Simulate a crash after the rotation committed but before the new key file was swapped in:
    // opening finishes the swap.
    std::fs::rename(keys.join("ledger.key"), keys.join("ledger.key.new")).unwrap();
    std::fs::write(keys.join("ledger.key"), old_key).unwrap();
    let ledger = Ledger::open(&opts, config()).await.unwrap();
    assert!(!keys.join("ledger.key.new").exists());
    assert_eq!(ledger.anchor(), anchor);
    for i in 40..50 {
        ledger
            .append(request(&format!("req-{i}"), "s0"))
            .await
            .unwrap();
    }
    let rep = audit::verify(ledger.db()).await.unwrap();
    assert_eq!(rep.receipts, 51);
    assert_eq!(rep.registry_events, 3);
    ledger.close().await;
}

#[tokio::test]
async fn sqlite_contract() {
    let d = tempfile::tempdir().unwrap();
    contract(StoreOptions::new(d.path())).await;
    assert!(d.path().join("airlock.db").is_file());
}

#[tokio::test]
async fn postgres_contract() {
    let Some(pg) = PgSchema::create().await else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    contract(StoreOptions::new(d.path()).with_database(Some(pg.url.clone()))).await;
}
