//! A throw-away PostgreSQL schema and SQLite directory, and a book over each.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use airlock_grants::{GrantBook, GrantConfig};
use airlock_store::{Db, StoreOptions};

pub const DEFAULT_PG: &str = "postgres://postgres@127.0.0.1:5432/test";

/// A fresh schema on the test server, dropped when this guard goes.
pub struct PgSchema {
    pub url: String,
    base: String,
    name: String,
}

impl PgSchema {
    /// `None` when PostgreSQL is unreachable and neither `CI` nor `AIRLOCK_TEST_DATABASE_URL`
    /// is set; a panic when it is required but unreachable.
    pub async fn create() -> Option<PgSchema> {
        let explicit = std::env::var("AIRLOCK_TEST_DATABASE_URL").ok();
        let required = explicit.is_some() || std::env::var_os("CI").is_some();
        let base = explicit.unwrap_or_else(|| DEFAULT_PG.to_string());
        let pool = match sqlx::postgres::PgPoolOptions::new()
            .max_connections(1)
            .connect(&base)
            .await
        {
            Ok(p) => p,
            Err(e) if !required => {
                eprintln!("skipping PostgreSQL test: {base} unreachable ({e})");
                return None;
            }
            Err(e) => panic!("PostgreSQL at {base} is required: {e}"),
        };
        let name = format!("g_{}", &airlock_grants::new_id().unwrap()[3..19]);
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {name}")))
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
        let sep = if base.contains('?') { '&' } else { '?' };
        let url = format!("{base}{sep}options=-c%20search_path%3D{name}");
        Some(PgSchema { url, base, name })
    }
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        let base = self.base.clone();
        let name = self.name.clone();
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                if let Ok(p) = sqlx::postgres::PgPoolOptions::new()
                    .max_connections(1)
                    .connect(&base)
                    .await
                {
                    let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                        "DROP SCHEMA IF EXISTS {name} CASCADE"
                    )))
                    .execute(&p)
                    .await;
                    p.close().await;
                }
            });
        })
        .join();
    }
}

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
