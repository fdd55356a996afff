//! Approval rows against real databases (SQLite file, fresh PostgreSQL schema): idempotent
//! insert, conditional transitions that only one of many concurrent callers wins (on two pools,
//! as two nodes), the LLM review and the receipt written once, due and receipt-less approvals,
//! the person-approval count, one-time links, and the denial streak.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
mod common;

use std::sync::Arc;

use airlock_store::{ApprovalRow, Db, StoreOptions, Transition};

use crate::common::PgSchema;

const NOW: i64 = 1_800_000_000_000;

fn row(id: &str, request: &str) -> ApprovalRow {
    ApprovalRow {
        id: id.into(),
        request_id: request.into(),
        agent: "claude".into(),
        session: "s1".into(),
        action: r#"{"command":"git push","kind":"shell"}"#.into(),
        action_sha256: "ab".repeat(32),
        tier: 3,
        reasons: "[]".into(),
        policy_sha256: "cd".repeat(32),
        confirm: "llm+human".into(),
        deliberate: false,
        time_lock_ms: 0,
        status: "pending".into(),
        llm: None,
        decided_by: None,
        by_person: false,
        approvers: None,
        scope: None,
        reason: None,
        grant_id: None,
        suggestion: None,
        created_ms: NOW,
        deadline_ms: NOW + 30_000,
        decided_ms: None,
        effective_ms: None,
        receipt: None,
        answered_via: None,
    }
}

fn approve(by: &str) -> Transition {
    Transition {
        to: "approved".into(),
        decided_by: Some(by.into()),
        by_person: true,
        approvers: Some(format!("[\"{by}\"]")),
        scope: Some("once".into()),
        decided_ms: Some(NOW + 1),
        effective_ms: Some(NOW + 1),
        ..Transition::default()
    }
}

async fn approvals(a: Db, b: Db) {
    // Idempotent by request id: the second insert returns the first row.
    let (r1, new1) = a.approval_insert(&row("apr-1", "req-1")).await.unwrap();
    assert!(new1);
    assert_eq!(r1, row("apr-1", "req-1"));
    let (again, new2) = b.approval_insert(&row("apr-other", "req-1")).await.unwrap();
    assert!(!new2);
    assert_eq!(again.id, "apr-1");
    assert!(a.approval_get("apr-other").await.unwrap().is_none());
    assert_eq!(
        a.approval_by_request("req-1").await.unwrap().unwrap().id,
        "apr-1"
    );

    // The LLM review is written once, only while open.
    assert!(
        a.approval_set_llm("apr-1", r#"{"result":"approve"}"#)
            .await
            .unwrap()
    );
    assert!(
        !b.approval_set_llm("apr-1", r#"{"result":"deny"}"#)
            .await
            .unwrap()
    );

    // 20 concurrent approvers on two pools: exactly one transition wins.
    let start = Arc::new(tokio::sync::Barrier::new(20));
    let mut tasks = Vec::new();
    for i in 0..20 {
        let db = if i % 2 == 0 { a.clone() } else { b.clone() };
        let start = start.clone();
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            let t = if i % 3 == 0 {
                Transition {
                    to: "denied".into(),
                    decided_by: Some(format!("p{i}")),
                    by_person: true,
                    decided_ms: Some(NOW + 1),
                    ..Transition::default()
                }
            } else {
                approve(&format!("p{i}"))
            };
            db.approval_transition("apr-1", "pending", &t)
                .await
                .unwrap()
        }));
    }
    let mut won = 0;
    for t in tasks {
        won += usize::from(t.await.unwrap());
    }
    assert_eq!(won, 1);
    let decided = a.approval_get("apr-1").await.unwrap().unwrap();
    assert!(decided.is_final());
    assert_eq!(
        decided.llm.as_deref(),
        Some(r#"{"result":"approve"}"#),
        "the review stays"
    );
    assert!(!a.approval_set_llm("apr-1", "{}").await.unwrap());

    // A final approval without a receipt is found for recovery; the receipt is written once.
    let missing = a.approval_without_receipt().await.unwrap();
    assert_eq!(
        missing.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        ["apr-1"]
    );
    assert!(a.approval_set_receipt("apr-1", "r-1").await.unwrap());
    assert!(!b.approval_set_receipt("apr-1", "r-2").await.unwrap());
    assert_eq!(
        a.approval_get("apr-1")
            .await
            .unwrap()
            .unwrap()
            .receipt
            .as_deref(),
        Some("r-1")
    );
    assert!(a.approval_without_receipt().await.unwrap().is_empty());
    // No receipt for an open approval.
    a.approval_insert(&row("apr-2", "req-2")).await.unwrap();
    assert!(!a.approval_set_receipt("apr-2", "r-x").await.unwrap());

    // Due: pending past the deadline; locked past the time lock.
    assert!(a.approval_due(NOW + 29_999).await.unwrap().is_empty());
    let due: Vec<String> = a
        .approval_due(NOW + 30_000)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(due, ["apr-2"]);
    let mut locked = row("apr-3", "req-3");
    locked.time_lock_ms = 5_000;
    locked.deadline_ms = NOW + 100_000;
    a.approval_insert(&locked).await.unwrap();
    let mut lock = approve("alice");
    lock.to = "locked".into();
    lock.effective_ms = Some(NOW + 5_000);
    assert!(
        a.approval_transition("apr-3", "pending", &lock)
            .await
            .unwrap()
    );
    // Locked is open, not final: listed as pending, no receipt yet.
    let open: Vec<String> = a
        .approval_list_open(10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(open, ["apr-2", "apr-3"]);
    assert!(
        a.approval_due(NOW + 4_999)
            .await
            .unwrap()
            .iter()
            .all(|r| r.id != "apr-3")
    );
    assert!(
        a.approval_due(NOW + 5_000)
            .await
            .unwrap()
            .iter()
            .any(|r| r.id == "apr-3")
    );
    // locked -> approved keeps who decided (a None field keeps the stored value).
    let effective = Transition {
        to: "approved".into(),
        ..Transition::default()
    };
    assert!(
        a.approval_transition("apr-3", "locked", &effective)
            .await
            .unwrap()
    );
    assert!(
        !b.approval_transition("apr-3", "locked", &effective)
            .await
            .unwrap()
    );
    let r3 = a.approval_get("apr-3").await.unwrap().unwrap();
    assert_eq!(r3.decided_by.as_deref(), Some("alice"));
    assert!(r3.by_person);
    assert_eq!(r3.effective_ms, Some(NOW + 5_000));

    // Expiry happens once.
    let expire = Transition {
        to: "expired".into(),
        decided_by: Some("timeout".into()),
        decided_ms: Some(NOW + 30_000),
        ..Transition::default()
    };
    assert!(
        a.approval_transition("apr-2", "pending", &expire)
            .await
            .unwrap()
    );
    assert!(
        !b.approval_transition("apr-2", "pending", &expire)
            .await
            .unwrap()
    );

    // History: decided ones, most recent first.
    let hist: Vec<String> = a
        .approval_history(10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(hist.len(), 3);
    assert_eq!(hist[0], "apr-2");

    // Person approvals of the same action by the same agent (apr-3 by alice, and apr-1 if a
    // person approved it rather than denied it).
    let first = a.approval_get("apr-1").await.unwrap().unwrap();
    let want = 1 + u64::from(first.status == "approved");
    assert_eq!(
        a.approval_count_person_approved("claude", &"ab".repeat(32))
            .await
            .unwrap(),
        want
    );
    assert_eq!(
        a.approval_count_person_approved("other", &"ab".repeat(32))
            .await
            .unwrap(),
        0
    );

    // The grant of a decision is linked once, before the receipt.
    assert!(a.approval_set_grant("apr-3", "g-1").await.unwrap());
    assert!(!a.approval_set_grant("apr-3", "g-2").await.unwrap());

    // One-time links: spent once, not after expiry, not unknown.
    a.approval_link_insert("n1", "apr-3", "approve", NOW + 1000)
        .await
        .unwrap();
    a.approval_link_insert("n2", "apr-3", "deny", NOW + 1000)
        .await
        .unwrap();
    let info = a.approval_link_get("n1").await.unwrap().unwrap();
    assert_eq!((info.approval.as_str(), info.used_ms), ("apr-3", None));
    let spent = a.approval_link_spend("n1", NOW).await.unwrap().unwrap();
    assert_eq!(
        (spent.approval.as_str(), spent.decision.as_str()),
        ("apr-3", "approve")
    );
    assert!(b.approval_link_spend("n1", NOW).await.unwrap().is_none());
    assert!(
        a.approval_link_spend("n2", NOW + 1000)
            .await
            .unwrap()
            .is_none()
    );
    assert!(a.approval_link_spend("nope", NOW).await.unwrap().is_none());
    assert_eq!(
        a.approval_link_get("n1").await.unwrap().unwrap().used_ms,
        Some(NOW)
    );

    // Denial streak: denials extend it, an allow ends it; sessions are separate.
    assert_eq!(a.denial_streak("s1").await.unwrap(), 0);
    for n in 1..=3 {
        assert_eq!(a.denial_streak_record("s1", true, NOW).await.unwrap(), n);
    }
    assert_eq!(b.denial_streak("s1").await.unwrap(), 3);
    assert_eq!(a.denial_streak("s2").await.unwrap(), 0);
    assert_eq!(b.denial_streak_record("s1", false, NOW).await.unwrap(), 0);
    assert_eq!(a.denial_streak_record("s1", true, NOW).await.unwrap(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_approvals() {
    let d = tempfile::tempdir().unwrap();
    let opts = StoreOptions::new(d.path());
    let a = Db::open(&opts).await.unwrap();
    let b = Db::open(&opts).await.unwrap();
    approvals(a, b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_approvals() {
    let Some(pg) = PgSchema::create().await else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let opts = StoreOptions::new(d.path()).with_database(Some(pg.url.clone()));
    let a = Db::open(&opts).await.unwrap();
    let b = Db::open(&opts).await.unwrap();
    approvals(a.clone(), b.clone()).await;
    a.close().await;
    b.close().await;
}
