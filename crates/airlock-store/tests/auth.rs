//! Token and web-session rows against real SQLite and PostgreSQL databases: insert, look up by
//! hash, the role CHECK, one revocation only, sessions refused once expired or once their token
//! is revoked, logout and purge.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
mod common;

use airlock_store::{Db, StoreOptions, TokenRow, WebSessionRow};

use crate::common::PgSchema;

const NOW: i64 = 1_800_000_000_000;

fn token(id: &str, role: &str, sha: &str) -> TokenRow {
    TokenRow {
        id: id.into(),
        name: format!("{id}-name"),
        role: role.into(),
        sha256: sha.into(),
        created_ms: NOW,
        revoked_ms: None,
    }
}

fn session(sha: &str, token: &str, expires_ms: i64) -> WebSessionRow {
    WebSessionRow {
        sha256: sha.into(),
        token: token.into(),
        csrf: format!("csrf-{sha}"),
        created_ms: NOW,
        expires_ms,
    }
}

async fn auth(opts: StoreOptions) {
    let db = Db::open(&opts).await.unwrap();
    db.token_insert(&token("t1", "agent", "aa")).await.unwrap();
    db.token_insert(&token("t2", "approver", "bb"))
        .await
        .unwrap();
    // The same hash twice, and a role outside the three, are refused by the schema.
    assert!(db.token_insert(&token("t3", "admin", "aa")).await.is_err());
    assert!(db.token_insert(&token("t4", "root", "cc")).await.is_err());

    let list = db.token_list().await.unwrap();
    assert_eq!(
        list.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["t1", "t2"]
    );
    assert_eq!(
        db.token_by_hash("bb").await.unwrap().unwrap().role,
        "approver"
    );
    assert!(db.token_by_hash("zz").await.unwrap().is_none());

    db.web_session_insert(&session("s1", "t2", NOW + 1000))
        .await
        .unwrap();
    db.web_session_insert(&session("s2", "t2", NOW + 10))
        .await
        .unwrap();
    let (s, t) = db.web_session_get("s1", NOW).await.unwrap().unwrap();
    assert_eq!((s.csrf.as_str(), t.id.as_str()), ("csrf-s1", "t2"));
    // Expired at exactly its expiry time.
    assert!(db.web_session_get("s2", NOW + 10).await.unwrap().is_none());
    assert_eq!(db.web_session_purge(NOW + 10).await.unwrap(), 1);

    // Logout ends one session once.
    db.web_session_insert(&session("s3", "t2", NOW + 1000))
        .await
        .unwrap();
    assert!(db.web_session_delete("s3").await.unwrap());
    assert!(!db.web_session_delete("s3").await.unwrap());
    assert!(db.web_session_get("s3", NOW).await.unwrap().is_none());

    // Revocation happens once, hides the token and ends its sessions.
    assert!(db.token_revoke("t2", NOW + 5).await.unwrap());
    assert!(!db.token_revoke("t2", NOW + 6).await.unwrap());
    assert!(!db.token_revoke("nope", NOW).await.unwrap());
    assert!(db.token_by_hash("bb").await.unwrap().is_none());
    assert!(db.web_session_get("s1", NOW).await.unwrap().is_none());
    assert_eq!(
        db.token_get("t2").await.unwrap().unwrap().revoked_ms,
        Some(NOW + 5)
    );

    // workspace roots of a token: none until registered, kept sorted without repeats, and only
    // for a token that exists
    assert!(db.token_roots("t1").await.unwrap().is_empty());
    db.token_roots_add("t1", &["/work/b".into(), "/work/a".into()])
        .await
        .unwrap();
    db.token_roots_add("t1", &["/work/a".into()]).await.unwrap();
    assert_eq!(db.token_roots("t1").await.unwrap(), ["/work/a", "/work/b"]);
    assert!(db.token_roots("t2").await.unwrap().is_empty());
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_auth() {
    let d = tempfile::tempdir().unwrap();
    auth(StoreOptions::new(d.path())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_auth() {
    let Some(pg) = PgSchema::create().await else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    auth(StoreOptions::new(d.path()).with_database(Some(pg.url.clone()))).await;
}
