//! What one `GrantBook::use_for` costs: a store holding 100 grants of one agent (exact, prefix
//! and tool scopes) and one matching prefix grant; N uses in a row, then the percentiles.
//!
//! `cargo run --release -p airlock-grants --example use_cost [-- N [DATABASE_URL]]`; without a
//! URL a SQLite file in a temporary directory. A PostgreSQL URL should name a scratch schema
//! (`…?options=-c%20search_path%3Dscratch`): the example leaves its tables and grants there.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use airlock_core::Action;
use airlock_grants::{
    ArgConstraint, Constraint, GrantBook, GrantConfig, GrantKind, NewGrant, Scope, Subject,
};
use airlock_store::{Db, StoreOptions};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let dir = tempfile::tempdir().unwrap();
    let opts = StoreOptions::new(dir.path()).with_database(args.next());
    let db = Db::open(&opts).await.unwrap();
    let book = GrantBook::new(db.clone(), GrantConfig::default());
    let who = Subject::new("bench-agent", Some("s1".into()));
    for i in 0..100 {
        let scope = match i % 3 {
            0 => Scope::exact(&Action::shell(format!("make target{i}"))).unwrap(),
            1 => Scope::command_prefix(&format!("cargo test -p crate{i}")).unwrap(),
            _ => Scope::Tool {
                tool: format!("tool{i}"),
                constraints: vec![ArgConstraint {
                    pointer: "/path".into(),
                    rule: Constraint::PathGlob(format!("/work/{i}/**")),
                }],
                exact_fields: false,
            },
        };
        book.create(
            NewGrant::new(who.clone(), scope, GrantKind::Session),
            "bench",
        )
        .await
        .unwrap();
    }
    let mut req = NewGrant::new(
        who.clone(),
        Scope::command_prefix("git push").unwrap(),
        GrantKind::Session,
    );
    req.max_uses = Some(u32::try_from(n).unwrap() + 10);
    book.create(req, "bench").await.unwrap();
    let action = Action::shell("git push origin main");
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        assert!(book.use_for(&who, &action).await.unwrap().is_some());
        times.push(t.elapsed().as_micros());
    }
    times.sort_unstable();
    let pct = |p: f64| times[((times.len() as f64 - 1.0) * p) as usize];
    println!(
        "{} use_for on {} with 101 grants: p50 {} us, p90 {} us, p99 {} us",
        n,
        db.backend(),
        pct(0.5),
        pct(0.9),
        pct(0.99)
    );
    db.close().await;
}
