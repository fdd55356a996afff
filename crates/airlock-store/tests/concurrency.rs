//! Two writers on one database (two pools, as two airlock nodes would have): no fork of a
//! session's chain, no duplicate Lamport value, and the log verifies.

use std::sync::Arc;
use std::time::Duration;

use airlock_ledger::Receipt;
use airlock_store::{Ledger, LedgerConfig, LedgerStore, StoreOptions, audit};

use crate::common::{PgSchema, request};

async fn two_writers(opts: StoreOptions) {
    let cfg = LedgerConfig {
        checkpoint_every: 50,
        checkpoint_interval: Duration::from_millis(200),
        max_batch: 32,
    };
    let a = Arc::new(Ledger::open(&opts, cfg.clone()).await.unwrap());
    let b = Arc::new(Ledger::open(&opts, cfg).await.unwrap());
    let mut tasks = Vec::new();
    for t in 0..8 {
        let l = if t % 2 == 0 { a.clone() } else { b.clone() };
        tasks.push(tokio::spawn(async move {
            for i in 0..40 {
                l.append(request(&format!("w{t}-{i}"), &format!("s{}", i % 4)))
                    .await
                    .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    a.checkpoint().await.unwrap();
    let rows = a.receipts(0, 10_000).await.unwrap();
    assert_eq!(rows.len(), 320);
    for s in 0..4 {
        let mut l: Vec<u64> = rows
            .iter()
            .map(|r| Receipt::parse(r.body.as_bytes()).unwrap())
            .filter(|r| r.session == format!("s{s}"))
            .map(|r| r.lamport)
            .collect();
        l.sort();
        assert_eq!(l, (1..=80).collect::<Vec<_>>(), "session s{s}");
    }
    let rep = audit::verify(a.db()).await.unwrap();
    assert_eq!(rep.receipts, 320);
    assert_eq!(rep.uncovered, 0);
    for l in [a, b] {
        if let Ok(l) = Arc::try_unwrap(l) {
            l.close().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_two_writers() {
    let d = tempfile::tempdir().unwrap();
    two_writers(StoreOptions::new(d.path())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_two_writers() {
    let Some(pg) = PgSchema::create().await else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    two_writers(StoreOptions::new(d.path()).with_database(Some(pg.url.clone()))).await;
}

/// One writer under load seals each batch while the one before it commits: the receipts
/// sealed ahead are used, every session's Lamport values run 1..n, and the log verifies.
async fn one_writer_seals_ahead(opts: StoreOptions) {
    let cfg = LedgerConfig {
        checkpoint_every: 100,
        checkpoint_interval: Duration::from_secs(60),
        max_batch: 16,
    };
    let l = Arc::new(Ledger::open(&opts, cfg).await.unwrap());
    let mut tasks = Vec::new();
    for t in 0..128 {
        let l = l.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..6 {
                let r = l
                    .append(request(&format!("t{t}-{i}"), &format!("s{}", t % 8)))
                    .await
                    .unwrap();
                assert_eq!(r.request_id, format!("t{t}-{i}"));
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let (used, _dropped) = l.sealed_ahead();
    assert!(used > 0, "no batch was sealed ahead");
    l.checkpoint().await.unwrap();
    let rows = l.receipts(0, 10_000).await.unwrap();
    assert_eq!(rows.len(), 768);
    for s in 0..8 {
        let mut lamports: Vec<u64> = rows
            .iter()
            .map(|r| Receipt::parse(r.body.as_bytes()).unwrap())
            .filter(|r| r.session == format!("s{s}"))
            .map(|r| r.lamport)
            .collect();
        lamports.sort();
        assert_eq!(lamports, (1..=96).collect::<Vec<_>>(), "session s{s}");
    }
    let rep = audit::verify(l.db()).await.unwrap();
    assert_eq!((rep.receipts, rep.uncovered), (768, 0));
    if let Ok(l) = Arc::try_unwrap(l) {
        l.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_one_writer_seals_ahead() {
    let d = tempfile::tempdir().unwrap();
    one_writer_seals_ahead(StoreOptions::new(d.path())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_one_writer_seals_ahead() {
    let Some(pg) = PgSchema::create().await else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    one_writer_seals_ahead(StoreOptions::new(d.path()).with_database(Some(pg.url.clone()))).await;
}
