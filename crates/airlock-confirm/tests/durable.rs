//! Durability and several nodes: a broker dropped with approvals pending and a new one on the
//! same SQLite file (still pending, answered once, a decision left without its receipt gets it
//! at start, an approval that expired meanwhile is denied); two brokers on one PostgreSQL
//! database (an answer on B releases the waiter on A, concurrent answers on both nodes decide
//! once, exactly one receipt).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use airlock_confirm::{ApprovalEvent, ApprovalStatus, BrokerConfig, ConfirmError, Status};
use airlock_store::Transition;
use airlock_testkit::PgDb;

use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_survive_a_restart() {
    let d = tempfile::tempdir().unwrap();
    let first = broker_at(d.path(), None, policy(""), BrokerConfig::default()).await;
    // Tier 4 (5 s to answer), and two tier-3 ones (2 s).
    let kept = first
        .submit(sub("claude", "s1", "tier4 keep"))
        .await
        .unwrap()
        .approval
        .unwrap();
    let half = first
        .submit(sub("claude", "s1", "tier3 half decided"))
        .await
        .unwrap()
        .approval
        .unwrap();
    let lapsed = first
        .submit(sub("claude", "s1", "tier3 lapses"))
        .await
        .unwrap()
        .approval
        .unwrap();
    // A crash between the decision's UPDATE and its receipt: the row is decided, no receipt.
    let db = first.ledger().db().clone();
    let row = db.approval_get(&half).await.unwrap().unwrap();
    assert!(
        db.approval_transition(
            &half,
            "pending",
            &Transition {
                to: "approved".into(),
                decided_by: Some("alice".into()),
                by_person: true,
                approvers: Some("[\"alice\"]".into()),
                scope: Some("session".into()),
                decided_ms: Some(row.created_ms + 1),
                effective_ms: Some(row.created_ms + 1),
                ..Transition::default()
            },
        )
        .await
        .unwrap()
    );
    drop(first);
    // Long enough for the tier-3 deadline to pass while no broker runs.
    tokio::time::sleep(Duration::from_millis(2200)).await;

    let second = broker_at(d.path(), None, policy(""), BrokerConfig::default()).await;
    let h = second.approval(&half).await.unwrap();
    assert_eq!(h.status, ApprovalStatus::Approved);
    assert!(h.receipt.is_some(), "recovery recorded the receipt");
    let r = approval_receipt(&second, &half).await;
    assert_eq!(r.approvers, ["alice"]);
    // The session grant the decision implies was made by the repair, and linked.
    let grant = h.grant.clone().expect("session grant");
    assert_eq!(r.grant.as_deref(), Some(grant.as_str()));
    let l = second.approval(&lapsed).await.unwrap();
    assert_eq!(l.status, ApprovalStatus::Expired);
    assert!(l.receipt.is_some());

    let k = second.approval(&kept).await.unwrap();
    assert_eq!(k.status, ApprovalStatus::Pending);
    assert_eq!(
        second
            .pending()
            .await
            .unwrap()
            .iter()
            .map(|a| a.id.as_str())
            .collect::<Vec<_>>(),
        [kept.as_str()]
    );
    let mut ans = approve("alice");
    ans.code = Some(second.deliberate_code(&k.action_sha256));
    second.answer(&kept, ans.clone()).await.unwrap();
    assert!(matches!(
        second.answer(&kept, ans).await,
        Err(ConfirmError::AlreadyDecided { .. })
    ));
    assert_eq!(receipts_for(&second, &format!("approval:{kept}")).await, 1);
    second.clone().shutdown().await;

    // A third start finds nothing to repair and records nothing twice.
    let third = broker_at(d.path(), None, policy(""), BrokerConfig::default()).await;
    let receipts = third.ledger().db().receipts(0, 1000).await.unwrap();
    let approval_receipts = receipts
        .iter()
        .filter(|r| r.body.contains("approval."))
        .count();
    assert_eq!(approval_receipts, 3, "one receipt per decided approval");
    let grants = third
        .book()
        .list(&airlock_grants::ListFilter {
            agent: Some("claude".into()),
            session: Some("s1".into()),
            all: true,
        })
        .await
        .unwrap();
    assert_eq!(grants.len(), 1, "{grants:?}");
    assert_eq!(third.outcome(&kept).await.unwrap().status, Status::Allowed);
}

async fn two_nodes() -> Option<(
    airlock_confirm::Broker,
    airlock_confirm::Broker,
    PgDb,
    tempfile::TempDir,
)> {
    let pg = PgDb::create().await?;
    let d = tempfile::tempdir().unwrap();
    let cfg = |node: &str| BrokerConfig {
        node: node.into(),
        ..BrokerConfig::default()
    };
    let a = broker_at(d.path(), Some(pg.url.clone()), policy(""), cfg("a")).await;
    let b = broker_at(d.path(), Some(pg.url.clone()), policy(""), cfg("b")).await;
    Some((a, b, pg, d))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_answer_on_one_node_releases_the_waiter_on_another() {
    let Some((a, b, _pg, _d)) = two_nodes().await else {
        return;
    };
    let mut events_a = a.subscribe();
    let id = a
        .submit(sub("claude", "s1", "tier4 across nodes"))
        .await
        .unwrap()
        .approval
        .unwrap();
    assert_eq!(
        events_a.recv().await.unwrap(),
        ApprovalEvent::Opened(id.clone())
    );
    // B sees the approval A opened.
    let seen = b.approval(&id).await.unwrap();
    let waiter = {
        let a = a.clone();
        let id = id.clone();
        tokio::spawn(async move { a.wait(&id, Duration::from_secs(5)).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut ans = approve("alice");
    ans.code = Some(b.deliberate_code(&seen.action_sha256));
    let started = std::time::Instant::now();
    b.answer(&id, ans).await.unwrap();
    let out = waiter.await.unwrap().unwrap();
    let took = started.elapsed();
    assert_eq!(out.status, Status::Allowed);
    // Released by the notification, well before the 1 s periodic re-read.
    assert!(took < Duration::from_millis(400), "{took:?}");
    eprintln!("released across nodes in {took:?}");
    // A's subscribers saw B's decision.
    let ev = tokio::time::timeout(Duration::from_secs(2), async {
        loop {
            if let ApprovalEvent::Decided(x) = events_a.recv().await.unwrap() {
                return x;
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(ev, id);
    assert_eq!(receipts_for(&a, &format!("approval:{id}")).await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_answers_on_two_nodes_decide_once() {
    let Some((a, b, _pg, _d)) = two_nodes().await else {
        return;
    };
    let id = a
        .submit(sub("claude", "s1", "tier3 race"))
        .await
        .unwrap()
        .approval
        .unwrap();
    let mut tasks = Vec::new();
    for i in 0..10 {
        let node = if i % 2 == 0 { a.clone() } else { b.clone() };
        let id = id.clone();
        tasks.push(tokio::spawn(async move {
            let ans = if i % 3 == 0 {
                deny(&format!("p{i}"), "no")
            } else {
                approve(&format!("p{i}"))
            };
            node.answer(&id, ans).await
        }));
    }
    let mut ok = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(_) => ok += 1,
            Err(ConfirmError::AlreadyDecided { .. }) => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(ok, 1);
    let final_a = a.wait(&id, Duration::from_secs(2)).await.unwrap();
    let final_b = b.wait(&id, Duration::from_secs(2)).await.unwrap();
    assert_eq!(final_a, final_b);
    assert_eq!(receipts_for(&a, &format!("approval:{id}")).await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn expiry_on_postgres_happens_once() {
    let Some((a, b, _pg, _d)) = two_nodes().await else {
        return;
    };
    let id = a
        .submit(sub("claude", "s1", "tier3 nobody"))
        .await
        .unwrap()
        .approval
        .unwrap();
    // Both nodes wait; both sweep; one expiry, one receipt.
    let (x, y) = tokio::join!(
        a.wait(&id, Duration::from_secs(5)),
        b.wait(&id, Duration::from_secs(5))
    );
    assert_eq!(x.unwrap().status, Status::Denied);
    assert_eq!(y.unwrap().status, Status::Denied);
    assert_eq!(a.metrics().expired + b.metrics().expired, 1);
    assert_eq!(receipts_for(&b, &format!("approval:{id}")).await, 1);
}
