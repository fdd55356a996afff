//! Budget counters against real SQLite and PostgreSQL databases: a request is admitted while
//! every counter is under its limit, and 40 concurrent requests against a limit of 25 admit
//! exactly 25; tokens and cost added after the answer close the budget; periods and agents are
//! separate; a zero limit admits nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
mod common;

use airlock_store::{BudgetLimits, Db, StoreOptions};

use crate::common::PgSchema;

const P: i64 = 1_800_000_000_000;

async fn budgets(opts: StoreOptions) {
    let db = Db::open(&opts).await.unwrap();
    let limits = BudgetLimits {
        requests: Some(25),
        tokens: None,
        cost_micros: None,
    };
    let mut tasks = Vec::new();
    for _ in 0..40 {
        let db = db.clone();
        tasks.push(tokio::spawn(async move {
            db.budget_charge("a", P, limits).await.unwrap().is_some()
        }));
    }
    let mut admitted = 0;
    for t in tasks {
        admitted += usize::from(t.await.unwrap());
    }
    assert_eq!(admitted, 25);
    assert_eq!(db.budget_usage("a", P).await.unwrap().requests, 25);
    // Another agent and the next period have their own counters.
    assert!(db.budget_charge("b", P, limits).await.unwrap().is_some());
    assert!(
        db.budget_charge("a", P + 1, limits)
            .await
            .unwrap()
            .is_some()
    );

    // Tokens: admitted while under, closed once an answer's usage reaches the limit.
    let tok = BudgetLimits {
        requests: None,
        tokens: Some(100),
        cost_micros: Some(5_000_000),
    };
    let u = db.budget_charge("c", P, tok).await.unwrap().unwrap();
    assert_eq!((u.requests, u.tokens), (1, 0));
    db.budget_add_usage("c", P, 60, 1_000).await.unwrap();
    assert!(db.budget_charge("c", P, tok).await.unwrap().is_some());
    db.budget_add_usage("c", P, 40, 1_000).await.unwrap();
    assert!(db.budget_charge("c", P, tok).await.unwrap().is_none());
    let u = db.budget_usage("c", P).await.unwrap();
    assert_eq!((u.requests, u.tokens, u.cost_micros), (2, 100, 2_000));
    // Cost closes it too.
    db.budget_charge("d", P, tok).await.unwrap().unwrap();
    db.budget_add_usage("d", P, 1, 5_000_000).await.unwrap();
    assert!(db.budget_charge("d", P, tok).await.unwrap().is_none());
    // A zero limit admits nothing and counts nothing.
    let zero = BudgetLimits {
        requests: Some(0),
        ..BudgetLimits::default()
    };
    assert!(db.budget_charge("e", P, zero).await.unwrap().is_none());
    assert_eq!(db.budget_usage("e", P).await.unwrap().requests, 0);
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_budgets() {
    let d = tempfile::tempdir().unwrap();
    budgets(StoreOptions::new(d.path())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_budgets() {
    let Some(pg) = PgSchema::create().await else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    budgets(StoreOptions::new(d.path()).with_database(Some(pg.url.clone()))).await;
}
