//! Grant rows against real databases: the atomic check-and-consume under 100 concurrent
//! consumers on two pools (two nodes), over a chain, revocation cascading, end of session,
//! and the CHECK that no statement can count a use past the maximum.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
mod common;

use std::sync::Arc;

use airlock_store::{ChildRefused, Db, GrantFilter, GrantRow, StoreOptions};

use crate::common::PgSchema;

const NOW: i64 = 1_800_000_000_000;

fn row(id: &str, parent: Option<&str>, max_uses: i64) -> GrantRow {
    GrantRow {
        id: id.into(),
        agent: "agent".into(),
        session: Some("s1".into()),
        kind: "session".into(),
        scope: r#"{"type":"command_prefix","argv":["git","push"]}"#.into(),
        max_uses,
        uses: 0,
        expires_ms: NOW + 60_000,
        parent: parent.map(String::from),
        creator: r#"{"person":{"name":"alice"}}"#.into(),
        status: "active".into(),
        confirmed_by: None,
        confirmed_ms: None,
        created_ms: NOW,
        revoked_ms: None,
        revoke_reason: None,
        reason: "test".into(),
    }
}

async fn race(a: &Db, b: &Db, ids: &[&str], n: usize) -> usize {
    let start = Arc::new(tokio::sync::Barrier::new(n));
    let mut tasks = Vec::new();
    for i in 0..n {
        let db = if i % 2 == 0 { a.clone() } else { b.clone() };
        let id = ids[i % ids.len()].to_string();
        let start = start.clone();
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            db.grant_consume(&id, NOW).await.unwrap().is_some()
        }));
    }
    let mut ok = 0;
    for t in tasks {
        ok += usize::from(t.await.unwrap());
    }
    ok
}

async fn grants(opts: StoreOptions) {
    let a = Db::open(&opts).await.unwrap();
    let b = Db::open(&opts).await.unwrap();

    // 100 consumers of a 3-use grant on two pools: exactly 3 uses.
    a.grant_insert(&row("g1", None, 3)).await.unwrap();
    assert_eq!(race(&a, &b, &["g1"], 100).await, 3);
    assert_eq!(a.grant_get("g1").await.unwrap().unwrap().uses, 3);

    // A chain parent(3) -> child(3): consumers of both ends together, at most 3 in all.
    a.grant_insert(&row("p", None, 3)).await.unwrap();
    assert_eq!(
        a.grant_insert_child(&row("c", Some("p"), 3), NOW)
            .await
            .unwrap(),
        Ok(())
    );
    assert_eq!(race(&a, &b, &["p", "c"], 100).await, 3);
    assert_eq!(a.grant_get("p").await.unwrap().unwrap().uses, 3);
    // A failed use of the child counted nothing anywhere.
    let c = a.grant_get("c").await.unwrap().unwrap();
    assert!(c.uses <= 3);

    // Expired, proposed: never consumed.
    let mut old = row("old", None, 5);
    old.expires_ms = NOW;
    a.grant_insert(&old).await.unwrap();
    assert!(a.grant_consume("old", NOW).await.unwrap().is_none());
    let mut prop = row("prop", None, 5);
    prop.status = "proposed".into();
    a.grant_insert(&prop).await.unwrap();
    assert!(a.grant_consume("prop", NOW).await.unwrap().is_none());
    assert!(a.grant_confirm("prop", "bob", NOW).await.unwrap());
    assert!(!a.grant_confirm("prop", "bob", NOW).await.unwrap());
    assert!(a.grant_consume("prop", NOW).await.unwrap().is_some());

    // Revocation cascades; a revoked ancestor stops its descendants; no child under it after.
    a.grant_insert(&row("r", None, 10)).await.unwrap();
    a.grant_insert_child(&row("r1", Some("r"), 5), NOW)
        .await
        .unwrap()
        .unwrap();
    a.grant_insert_child(&row("r2", Some("r1"), 5), NOW)
        .await
        .unwrap()
        .unwrap();
    assert!(a.grant_consume("r2", NOW).await.unwrap().is_some());
    assert_eq!(a.grant_get("r").await.unwrap().unwrap().uses, 1);
    assert_eq!(a.grant_revoke("r1", NOW, "stop").await.unwrap(), 2);
    assert!(a.grant_consume("r2", NOW).await.unwrap().is_none());
    assert!(a.grant_consume("r", NOW).await.unwrap().is_some());
    assert_eq!(
        a.grant_insert_child(&row("r3", Some("r1"), 1), NOW)
            .await
            .unwrap(),
        Err(ChildRefused::ParentNotUsable)
    );
    assert_eq!(
        a.grant_insert_child(&row("r4", Some("nope"), 1), NOW)
            .await
            .unwrap(),
        Err(ChildRefused::MissingParent)
    );
    let chain = a.grant_chain("r2").await.unwrap();
    assert_eq!(
        chain.iter().map(|g| g.id.as_str()).collect::<Vec<_>>(),
        ["r2", "r1", "r"]
    );

    // End of session: session-kind grants of that session and their descendants.
    let mut e = row("e", None, 5);
    e.session = Some("s9".into());
    a.grant_insert(&e).await.unwrap();
    let mut perm = row("perm", None, 5);
    perm.session = Some("s9".into());
    perm.kind = "permanent".into();
    a.grant_insert(&perm).await.unwrap();
    let mut ec = row("ec", Some("e"), 1);
    ec.session = Some("other".into());
    a.grant_insert_child(&ec, NOW).await.unwrap().unwrap();
    assert_eq!(a.grant_end_session("s9", NOW).await.unwrap(), 2);
    assert!(
        a.grant_get("ec")
            .await
            .unwrap()
            .unwrap()
            .revoked_ms
            .is_some()
    );
    assert!(
        a.grant_get("perm")
            .await
            .unwrap()
            .unwrap()
            .revoked_ms
            .is_none()
    );

    // Candidates: the session's grants and session-less ones; a NULL session matches only
    // session-less grants.
    let mut anyses = row("anyses", None, 5);
    anyses.session = None;
    anyses.kind = "permanent".into();
    a.grant_insert(&anyses).await.unwrap();
    let ids = |v: Vec<GrantRow>| v.into_iter().map(|g| g.id).collect::<Vec<_>>();
    let s9 = ids(a.grant_find_usable("agent", Some("s9"), NOW).await.unwrap());
    assert!(s9.contains(&"perm".to_string()) && s9.contains(&"anyses".to_string()));
    assert!(!s9.contains(&"e".to_string()) && !s9.contains(&"prop".to_string()));
    let none = ids(a.grant_find_usable("agent", None, NOW).await.unwrap());
    assert_eq!(none, ["anyses"]);
    assert!(
        a.grant_find_usable("other", Some("s9"), NOW)
            .await
            .unwrap()
            .is_empty()
    );

    // Listing filters.
    let usable = a
        .grant_list(&GrantFilter {
            agent: Some("agent".into()),
            session: Some("s9".into()),
            usable_at: Some(NOW),
            limit: None,
        })
        .await
        .unwrap();
    assert!(usable.iter().any(|g| g.id == "perm"));
    assert!(
        !usable
            .iter()
            .any(|g| g.id == "e" || g.id == "g1" || g.id == "old")
    );

    // Children inserted while the parent is being revoked: each is either refused or revoked
    // with it, never left usable under a revoked parent.
    a.grant_insert(&row("race", None, 100)).await.unwrap();
    let start = Arc::new(tokio::sync::Barrier::new(41));
    let mut tasks = Vec::new();
    for i in 0..40 {
        let db = if i % 2 == 0 { a.clone() } else { b.clone() };
        let start = start.clone();
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            let parent = if i < 20 {
                "race".to_string()
            } else {
                format!("race-{}", i - 20)
            };
            // Children of "race" and grandchildren under them (which may not exist yet).
            let _ = db
                .grant_insert_child(&row(&format!("race-{i}"), Some(&parent), 1), NOW)
                .await;
        }));
    }
    {
        let db = b.clone();
        let start = start.clone();
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            db.grant_revoke("race", NOW, "race").await.unwrap();
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    for i in 0..40 {
        if let Some(g) = a.grant_get(&format!("race-{i}")).await.unwrap() {
            assert!(g.revoked_ms.is_some(), "race-{i} escaped the revocation");
        }
    }

    // The table itself refuses a use past the maximum.
    let over = match &a {
        Db::Sqlite(p) => sqlx::query("UPDATE grants SET uses = 4 WHERE id = 'g1'")
            .execute(p)
            .await
            .is_err(),
        Db::Pg(p) => sqlx::query("UPDATE grants SET uses = 4 WHERE id = 'g1'")
            .execute(p)
            .await
            .is_err(),
    };
    assert!(over);
    a.close().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_grants() {
    let d = tempfile::tempdir().unwrap();
    grants(StoreOptions::new(d.path())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_grants() {
    let Some(pg) = PgSchema::create().await else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    grants(StoreOptions::new(d.path()).with_database(Some(pg.url.clone()))).await;
}
