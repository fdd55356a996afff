//! A throw-away PostgreSQL schema and SQLite directory, and a book over each.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use airlock_grants::{GrantBook, GrantConfig};
use airlock_store::{Db, StoreOptions};
pub use airlock_testkit::PgSchema;

/// A settable clock starting at a fixed time.
#[derive(Clone)]
pub struct TestClock(pub Arc<AtomicI64>);

impl TestClock {
    pub fn new() -> Self {
        TestClock(Arc::new(AtomicI64::new(1_800_000_000_000)))
    }
    pub fn now(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
    pub fn book(&self, db: Db) -> GrantBook {
        let c = self.0.clone();
        GrantBook::new(db, GrantConfig::default())
            .with_clock(Arc::new(move || c.load(Ordering::SeqCst)))
    }
}

/// Where a test's database lives; keeps the temporary directory or schema alive.
pub enum Backend {
    Sqlite(tempfile::TempDir),
    Pg(PgSchema, tempfile::TempDir),
}

impl Backend {
    pub async fn sqlite() -> Backend {
        Backend::Sqlite(tempfile::tempdir().unwrap())
    }

    pub async fn pg() -> Option<Backend> {
        let s = PgSchema::create().await?;
        Some(Backend::Pg(s, tempfile::tempdir().unwrap()))
    }

    pub fn options(&self) -> StoreOptions {
        match self {
            Backend::Sqlite(d) => StoreOptions::new(d.path()),
            Backend::Pg(s, d) => StoreOptions::new(d.path()).with_database(Some(s.url.clone())),
        }
    }

    /// A new pool on this database (a second pool mimics a second airlock node).
    pub async fn open(&self) -> Db {
        Db::open(&self.options()).await.unwrap()
    }
}
