//! Sessions in crisis mode against real SQLite and PostgreSQL databases: a mark is seen by every
//! handle on the same database (two nodes of one PostgreSQL agree), the first of concurrent
//! marks stays, and a clear ends it everywhere.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
mod common;

use airlock_store::{CrisisRow, Db, StoreOptions};

use crate::common::PgSchema;

fn row(session: &str, since_ms: i64, source: &str) -> CrisisRow {
    CrisisRow {
        session: session.into(),
        since_ms,
        source: source.into(),
        rule: "crisis.self_harm".into(),
        agent: "claude".into(),
    }
}

/// `a` and `b` are two handles (nodes) on one database.
async fn crisis(a: Db, b: Db) {
    assert_eq!(b.crisis_get("s1").await.unwrap(), None);
    assert!(a.crisis_set(&row("s1", 10, "hook:claude")).await.unwrap());
    // the other node sees it; a second mark keeps the first
    assert_eq!(
        b.crisis_get("s1").await.unwrap(),
        Some(row("s1", 10, "hook:claude"))
    );
    assert!(!b.crisis_set(&row("s1", 20, "proxy")).await.unwrap());
    assert_eq!(
        a.crisis_get("s1").await.unwrap().unwrap().source,
        "hook:claude"
    );

    // both nodes mark one session at once: one mark
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let db = if i % 2 == 0 { a.clone() } else { b.clone() };
            tokio::spawn(async move { db.crisis_set(&row("race", 30 + i, "mcp:x")).await.unwrap() })
        })
        .collect();
    let mut set = 0;
    for t in tasks {
        set += usize::from(t.await.unwrap());
    }
    assert_eq!(set, 1);
    let sessions: Vec<String> = a
        .crisis_list()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.session)
        .collect();
    assert_eq!(sessions, ["s1", "race"]);

    // a clear on one node ends it on both
    assert_eq!(
        b.crisis_clear("s1").await.unwrap(),
        Some(row("s1", 10, "hook:claude"))
    );
    assert_eq!(a.crisis_get("s1").await.unwrap(), None);
    assert_eq!(a.crisis_clear("s1").await.unwrap(), None);
    assert_eq!(b.crisis_list().await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_crisis() {
    let d = tempfile::tempdir().unwrap();
    let opts = StoreOptions::new(d.path());
    let a = Db::open(&opts).await.unwrap();
    let b = Db::open(&opts).await.unwrap();
    crisis(a, b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_two_nodes_agree_on_crisis() {
    let Some(pg) = PgSchema::create().await else {
        return;
    };
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = Db::open(&StoreOptions::new(d1.path()).with_database(Some(pg.url.clone())))
        .await
        .unwrap();
    let b = Db::open(&StoreOptions::new(d2.path()).with_database(Some(pg.url.clone())))
        .await
        .unwrap();
    crisis(a, b).await;
}
