//! `Auth` over real SQLite and PostgreSQL databases: a token's secret is returned once and
//! stored only hashed; checking refuses tampered, foreign, over-long and revoked tokens; only
//! approvers and admins get web sessions; logout and revocation end sessions; a node that
//! remembers live tokens forgets them on its own revocations and within its TTL on others'.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_testkit::gateway as common;

use airlock_gateway::{Auth, Role};
use airlock_store::{Db, StoreOptions};

async fn auth_on(db: Db) {
    let auth = Auth::new(db.clone());
    let agent = auth.create("agent-1", Role::Agent).await.unwrap();
    let alice = auth.create("alice", Role::Approver).await.unwrap();
    assert!(agent.secret.starts_with("alk_") && agent.secret.len() == 4 + 43);
    assert!(agent.id.starts_with("tok_"));
    assert_ne!(agent.secret, alice.secret);

    // Stored only as a hash.
    for row in db.token_list().await.unwrap() {
        assert!(!row.sha256.contains(&agent.secret) && !row.sha256.contains(&alice.secret));
        assert_eq!(row.sha256.len(), 64);
    }
    let me = auth.check(&agent.secret).await.unwrap().unwrap();
    assert_eq!((me.name.as_str(), me.role), ("agent-1", Role::Agent));

    // One changed character, a missing prefix, junk and an over-long token are all unknown.
    let mut tampered = agent.secret.clone().into_bytes();
    let last = tampered.len() - 1;
    tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let long = format!("alk_{}", "a".repeat(500));
    for bad in [
        tampered.as_str(),
        &agent.secret[4..],
        "",
        "alk_",
        long.as_str(),
    ] {
        assert!(auth.check(bad).await.unwrap().is_none(), "{bad}");
    }

    // Web sessions: approvers yes, agents no.
    assert!(auth.login(&agent.secret).await.unwrap().is_none());
    let l = auth.login(&alice.secret).await.unwrap().unwrap();
    assert_ne!(l.session_id, l.csrf);
    let sess = auth.session(&l.session_id).await.unwrap().unwrap();
    assert_eq!(
        (sess.caller.name.as_str(), sess.csrf.as_str()),
        ("alice", l.csrf.as_str())
    );
    assert!(auth.session("forged").await.unwrap().is_none());
    assert!(auth.logout(&l.session_id).await.unwrap());
    assert!(auth.session(&l.session_id).await.unwrap().is_none());

    // Revoking the token ends its other sessions and its bearer use.
    let l2 = auth.login(&alice.secret).await.unwrap().unwrap();
    assert!(auth.revoke(&alice.id).await.unwrap());
    assert!(!auth.revoke(&alice.id).await.unwrap());
    assert!(auth.session(&l2.session_id).await.unwrap().is_none());
    assert!(auth.check(&alice.secret).await.unwrap().is_none());
    let listed = auth.list().await.unwrap();
    assert_eq!(listed.len(), 2);
    assert!(
        listed
            .iter()
            .any(|t| t.id == alice.id && t.revoked_ms.is_some())
    );

    // Names: what shows up in receipts, so no spaces, markup or control characters.
    for bad in ["", "has space", "<b>", "a\nb", &"x".repeat(65)] {
        assert!(auth.create(bad, Role::Agent).await.is_err(), "{bad:?}");
    }
    assert!("root".parse::<Role>().is_err());
    // The binary's helpers work on the same tables.
    let t = airlock_gateway::token_create(&db, "ci", Role::Admin)
        .await
        .unwrap();
    assert!(
        airlock_gateway::token_list(&db)
            .await
            .unwrap()
            .iter()
            .any(|x| x.id == t.id)
    );
    assert!(airlock_gateway::token_revoke(&db, &t.id).await.unwrap());
}

/// A node that remembers live tokens: its own revocations apply at once; one made by another
/// node (or the CLI) on the same store applies once the time-to-live has passed; what the store
/// refuses is never remembered.
async fn cache_on(db: Db) {
    let ttl = std::time::Duration::from_millis(400);
    let node = Auth::new(db.clone()).with_token_cache(ttl);
    let elsewhere = Auth::new(db.clone());
    assert_eq!(node.token_cache_ttl(), ttl);
    let a = node.create("agent-a", Role::Agent).await.unwrap();
    let b = node.create("agent-b", Role::Agent).await.unwrap();
    assert!(node.check(&a.secret).await.unwrap().is_some());
    assert!(node.check(&b.secret).await.unwrap().is_some());

    // Revoked on this node: refused at once, and on the next checks too.
    assert!(node.revoke(&b.id).await.unwrap());
    for _ in 0..3 {
        assert!(node.check(&b.secret).await.unwrap().is_none());
    }

    // Revoked elsewhere: this node still knows `a` as live, but not longer than the TTL.
    let started = std::time::Instant::now();
    assert!(node.check(&a.secret).await.unwrap().is_some());
    assert!(elsewhere.revoke(&a.id).await.unwrap());
    assert!(elsewhere.check(&a.secret).await.unwrap().is_none());
    loop {
        let seen = node.check(&a.secret).await.unwrap();
        if seen.is_none() {
            break;
        }
        assert!(
            started.elapsed() < ttl + std::time::Duration::from_millis(200),
            "a revoked token was still accepted after {:?}",
            started.elapsed()
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(node.check(&a.secret).await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_auth() {
    let d = tempfile::tempdir().unwrap();
    let db = Db::open(&StoreOptions::new(d.path())).await.unwrap();
    auth_on(db.clone()).await;
    cache_on(db.clone()).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_auth() {
    let Some(pg) = common::PgSchema::create().await else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let opts = StoreOptions::new(d.path()).with_database(Some(pg.url.clone()));
    let db = Db::open(&opts).await.unwrap();
    auth_on(db.clone()).await;
    cache_on(db.clone()).await;
    db.close().await;
}
