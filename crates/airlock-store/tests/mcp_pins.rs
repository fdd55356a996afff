//! The MCP gateway's tool pins against real SQLite and PostgreSQL databases: first sight pins,
//! a different hash quarantines (and going back does not lift it), one approval moves the pin
//! to the presented hash, and concurrent first sights pin once.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
mod common;

use airlock_store::{Db, PinCheck, StoreOptions};

use crate::common::PgSchema;

async fn pins(opts: StoreOptions) {
    let db = Db::open(&opts).await.unwrap();
    assert_eq!(
        db.mcp_pin_check("s", "t", "aa", "{}", 1).await.unwrap(),
        PinCheck::Pinned
    );
    assert_eq!(
        db.mcp_pin_check("s", "t", "aa", "{}", 2).await.unwrap(),
        PinCheck::Approved
    );
    let q = db.mcp_pin_check("s", "t", "bb", "{}", 3).await.unwrap();
    assert_eq!(
        q,
        PinCheck::Quarantined {
            approved: "aa".into(),
            presented: "bb".into()
        }
    );
    let q = db.mcp_pin_check("s", "t", "aa", "{}", 4).await.unwrap();
    assert!(matches!(q, PinCheck::Quarantined { .. }), "{q:?}");
    assert!(!db.mcp_pin_approve("s", "other", "bb", 5).await.unwrap());
    db.mcp_pin_check("s", "t", "bb", r#"{"description":"new"}"#, 5)
        .await
        .unwrap();
    let row = db.mcp_pin_get("s", "t").await.unwrap().unwrap();
    assert_eq!(
        (
            row.status.as_str(),
            row.pending_sha256.as_deref(),
            row.pending_definition.as_deref()
        ),
        ("quarantined", Some("bb"), Some(r#"{"description":"new"}"#))
    );
    // An approval names the definition the person reviewed: another one is not approved.
    assert!(!db.mcp_pin_approve("s", "t", "aa", 6).await.unwrap());
    assert!(db.mcp_pin_approve("s", "t", "bb", 6).await.unwrap());
    assert!(
        !db.mcp_pin_approve("s", "t", "bb", 7).await.unwrap(),
        "approved once"
    );
    let row = db.mcp_pin_get("s", "t").await.unwrap().unwrap();
    assert_eq!((row.sha256.as_str(), row.pending_definition), ("bb", None));
    assert_eq!(
        db.mcp_pin_check("s", "t", "bb", "{}", 8).await.unwrap(),
        PinCheck::Approved
    );
    // the same tool name on another server is another pin
    assert_eq!(
        db.mcp_pin_check("s2", "t", "cc", "{}", 9).await.unwrap(),
        PinCheck::Pinned
    );

    let checks = (0..8).map(|i| {
        let db = db.clone();
        async move {
            db.mcp_pin_check("race", "t", &format!("h{}", i % 2), "{}", 10)
                .await
                .unwrap()
        }
    });
    let results = futures_join(checks).await;
    let pinned = results.iter().filter(|r| **r == PinCheck::Pinned).count();
    assert_eq!(pinned, 1, "{results:?}");

    let all = db.mcp_pin_list(None).await.unwrap();
    let names: Vec<(&str, &str)> = all
        .iter()
        .map(|p| (p.server.as_str(), p.tool.as_str()))
        .collect();
    assert_eq!(names, [("race", "t"), ("s", "t"), ("s2", "t")]);
    assert_eq!(db.mcp_pin_list(Some("s")).await.unwrap().len(), 1);

    // A tool new after a server's first listing is held, not pinned, until a person approves
    // the definition it presented.
    assert!(db.mcp_pin_server_known("s").await.unwrap());
    assert!(!db.mcp_pin_server_known("nobody").await.unwrap());
    let held = db
        .mcp_pin_hold_new("s", "late", "dd", r#"{"d":1}"#, 20)
        .await
        .unwrap();
    assert_eq!(
        held,
        PinCheck::Quarantined {
            approved: String::new(),
            presented: "dd".into()
        }
    );
    let row = db.mcp_pin_get("s", "late").await.unwrap().unwrap();
    assert_eq!(
        (
            row.status.as_str(),
            row.sha256.as_str(),
            row.pending_sha256.as_deref()
        ),
        ("quarantined", "", Some("dd"))
    );
    assert_eq!(row.pending_definition.as_deref(), Some(r#"{"d":1}"#));
    // seen again: still held
    assert!(matches!(
        db.mcp_pin_hold_new("s", "late", "dd", "{}", 21)
            .await
            .unwrap(),
        PinCheck::Quarantined { .. }
    ));
    assert!(db.mcp_pin_approve("s", "late", "dd", 22).await.unwrap());
    assert_eq!(
        db.mcp_pin_hold_new("s", "late", "dd", "{}", 23)
            .await
            .unwrap(),
        PinCheck::Approved
    );
    let row = db.mcp_pin_get("s", "late").await.unwrap().unwrap();
    assert!(row.approved_by_person());
    let first = db.mcp_pin_get("s2", "t").await.unwrap().unwrap();
    assert!(!first.approved_by_person(), "pinned at first sight");
    // a pinned definition can be sent back to a person
    assert!(
        db.mcp_pin_quarantine("s2", "t", "cc", "{}", 25)
            .await
            .unwrap()
    );
    assert!(
        !db.mcp_pin_quarantine("s2", "none", "cc", "{}", 25)
            .await
            .unwrap()
    );
    assert!(matches!(
        db.mcp_pin_check("s2", "t", "cc", "{}", 26).await.unwrap(),
        PinCheck::Quarantined { .. }
    ));
    assert!(db.mcp_pin_approve("s2", "t", "cc", 27).await.unwrap());
    // an existing pin is checked as before
    assert_eq!(
        db.mcp_pin_hold_new("s2", "t", "cc", "{}", 28)
            .await
            .unwrap(),
        PinCheck::Approved
    );
}

async fn futures_join<F: std::future::Future<Output = PinCheck> + Send + 'static>(
    fs: impl Iterator<Item = F>,
) -> Vec<PinCheck> {
    let handles: Vec<_> = fs.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_pins() {
    let d = tempfile::tempdir().unwrap();
    pins(StoreOptions::new(d.path())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_pins() {
    let Some(pg) = PgSchema::create().await else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    pins(StoreOptions::new(d.path()).with_database(Some(pg.url.clone()))).await;
}
