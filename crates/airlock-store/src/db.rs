//! The two backends behind one handle. `Db` holds a SQLite or a PostgreSQL pool; `on_pool!` and
//! `on_tx!` run the same (portable, run-time) query text on whichever it is, so every query is
//! written once. SQLite runs in WAL mode with `synchronous = FULL`: a commit returns after the
//! WAL is fsynced. PostgreSQL commits are durable when they return (its default
//! `synchronous_commit = on`).

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{PgPool, Postgres, Row, Sqlite, SqlitePool, Transaction};

use crate::{StoreError, StoreOptions, keyfile};

/// A pool on one of the two backends.
#[derive(Clone, Debug)]
pub enum Db {
    Sqlite(SqlitePool),
    Pg(PgPool),
}

/// A write transaction holding the ledger lock.
pub(crate) enum Tx {
    Sqlite(Transaction<'static, Sqlite>),
    Pg(Transaction<'static, Postgres>),
}

/// Runs `$body` with `$c` bound to the pool, whichever backend it is.
macro_rules! on_pool {
    ($db:expr, $c:ident => $body:expr) => {
        match $db {
            $crate::db::Db::Sqlite($c) => $body,
            $crate::db::Db::Pg($c) => $body,
        }
    };
}

/// Runs `$body` with `$c` bound to the transaction's connection.
macro_rules! on_tx {
    ($tx:expr, $c:ident => $body:expr) => {
        match $tx {
            $crate::db::Tx::Sqlite(t) => {
                let $c = &mut **t;
                $body
            }
            $crate::db::Tx::Pg(t) => {
                let $c = &mut **t;
                $body
            }
        }
    };
}

#[allow(unused_imports)]
pub(crate) use {on_pool, on_tx};

fn is_postgres(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

impl Db {
    /// Opens (creating if needed) the database the options name and runs the migrations.
    pub async fn open(opts: &StoreOptions) -> Result<Db, StoreError> {
        let db = Self::connect(opts).await?;
        crate::migrate::run(&db).await?;
        Ok(db)
    }

    /// Opens (creating if needed) the database the options name, as it is.
    pub(crate) async fn connect(opts: &StoreOptions) -> Result<Db, StoreError> {
        Ok(match opts.database.as_deref() {
            Some(url) if is_postgres(url) => {
                let o = PgConnectOptions::from_str(url)?;
                Db::Pg(
                    PgPoolOptions::new()
                        .max_connections(4)
                        .acquire_timeout(Duration::from_secs(30))
                        .connect_with(o)
                        .await?,
                )
            }
            Some(url) if url.starts_with("sqlite:") => {
                let path = url
                    .trim_start_matches("sqlite://")
                    .trim_start_matches("sqlite:");
                Self::sqlite(std::path::Path::new(path), false).await?
            }
            Some(other) => {
                return Err(StoreError::Config(format!(
                    "unsupported database URL {other:?}: use postgres://USER@HOST:PORT/DB or sqlite://PATH"
                )));
            }
            None => {
                keyfile::create_private_dir(&opts.data_dir)?;
                Self::sqlite(&opts.sqlite_path(), false).await?
            }
        })
    }

    /// Opens an existing SQLite ledger file read-only (for `airlock ledger verify FILE`).
    pub async fn open_sqlite_readonly(path: &std::path::Path) -> Result<Db, StoreError> {
        if !path.is_file() {
            return Err(StoreError::Config(format!(
                "{} is not a file",
                path.display()
            )));
        }
        Self::sqlite(path, true).await
    }

    async fn sqlite(path: &std::path::Path, read_only: bool) -> Result<Db, StoreError> {
        if !read_only {
            // Commands, sessions and the ledger: the owner's only. SQLite creates the `-wal`
            // and `-shm` files with the database file's mode; ones left by an older airlock
            // are tightened too.
            keyfile::ensure_private_file(path)?;
            for suffix in ["-wal", "-shm", "-journal"] {
                let mut side = path.as_os_str().to_os_string();
                side.push(suffix);
                keyfile::tighten(std::path::Path::new(&side), 0o600)?;
            }
        }
        let o = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(!read_only)
            .read_only(read_only)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            // The receipts' unique index on ids takes random keys, so appends touch pages all
            // over it: a 32 MiB cache per connection keeps them in memory instead of re-reading
            // them, and checkpointing every 4,000 WAL pages rather than 1,000 copies
            // a page that many batches rewrite fewer times. Durability is the same.
            .pragma("cache_size", "-32768")
            .pragma("wal_autocheckpoint", "4000")
            .busy_timeout(Duration::from_secs(30));
        Ok(Db::Sqlite(
            SqlitePoolOptions::new()
                .max_connections(4)
                .acquire_timeout(Duration::from_secs(60))
                .connect_with(o)
                .await?,
        ))
    }

    pub fn backend(&self) -> &'static str {
        match self {
            Db::Sqlite(_) => "sqlite",
            Db::Pg(_) => "postgres",
        }
    }

    /// Begins a write transaction. On SQLite `BEGIN IMMEDIATE` takes the write lock at once (a
    /// deferred transaction that reads first could not wait for it); on PostgreSQL the callers
    /// lock the `ledger_state` row as their first statement.
    pub(crate) async fn begin_write(&self) -> Result<Tx, StoreError> {
        Ok(match self {
            Db::Sqlite(p) => Tx::Sqlite(p.begin_with("BEGIN IMMEDIATE").await?),
            Db::Pg(p) => Tx::Pg(p.begin().await?),
        })
    }

    pub async fn close(&self) {
        on_pool!(self, p => p.close().await)
    }

    /// Every receipt from `from_leaf` on, at most `limit`, in leaf order.
    pub async fn receipts(
        &self,
        from_leaf: u64,
        limit: u64,
    ) -> Result<Vec<StoredReceipt>, StoreError> {
        const Q: &str =
            "SELECT leaf, body, payload FROM receipts WHERE leaf >= $1 ORDER BY leaf LIMIT $2";
        let from = i64::try_from(from_leaf).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        on_pool!(self, p => {
            let rows = sqlx::query(Q).bind(from).bind(limit).fetch_all(p).await?;
            rows.iter().map(|r| Ok(StoredReceipt {
                leaf: r.try_get::<i64, _>(0)? as u64,
                body: r.try_get(1)?,
                payload: r.try_get(2)?,
            })).collect()
        })
    }

    pub async fn receipt_by_id(&self, id: &str) -> Result<Option<StoredReceipt>, StoreError> {
        const Q: &str = "SELECT leaf, body, payload FROM receipts WHERE id = $1";
        on_pool!(self, p => {
            let row = sqlx::query(Q).bind(id).fetch_optional(p).await?;
            row.map(|r| Ok(StoredReceipt {
                leaf: r.try_get::<i64, _>(0)? as u64,
                body: r.try_get(1)?,
                payload: r.try_get(2)?,
            })).transpose()
        })
    }

    pub async fn checkpoints(&self) -> Result<Vec<String>, StoreError> {
        on_pool!(self, p => {
            let rows = sqlx::query("SELECT body FROM checkpoints ORDER BY size").fetch_all(p).await?;
            rows.iter().map(|r| r.try_get(0).map_err(StoreError::from)).collect()
        })
    }

    pub async fn registry_events(&self) -> Result<Vec<String>, StoreError> {
        on_pool!(self, p => {
            let rows = sqlx::query("SELECT body FROM registry_events ORDER BY seq").fetch_all(p).await?;
            rows.iter().map(|r| r.try_get(0).map_err(StoreError::from)).collect()
        })
    }
}

impl Tx {
    pub(crate) async fn commit(self) -> Result<(), StoreError> {
        match self {
            Tx::Sqlite(t) => t.commit().await?,
            Tx::Pg(t) => t.commit().await?,
        }
        Ok(())
    }
}

/// One stored receipt: its leaf, its canonical bytes, and the action payload kept for replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredReceipt {
    pub leaf: u64,
    pub body: String,
    pub payload: Option<String>,
}
