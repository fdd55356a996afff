//! Embedded migrations, applied in order at open inside one write transaction (PostgreSQL also
//! takes an advisory lock, so two nodes starting together apply each migration once). Each
//! applied version is recorded in `airlock_migrations`.

use sqlx::Row;

use crate::StoreError;
use crate::db::{Db, Tx, on_tx};

/// (version, name, SQL). Append only; never edit an applied migration.
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "ledger", include_str!("../migrations/0001_ledger.sql")),
    (2, "grants", include_str!("../migrations/0002_grants.sql")),
    (
        3,
        "approvals",
        include_str!("../migrations/0003_approvals.sql"),
    ),
    (4, "auth", include_str!("../migrations/0004_auth.sql")),
    (5, "budgets", include_str!("../migrations/0005_budgets.sql")),
    (
        6,
        "mcp_pins",
        include_str!("../migrations/0006_mcp_pins.sql"),
    ),
    (
        7,
        "mcp_pin_definitions",
        include_str!("../migrations/0007_mcp_pin_definitions.sql"),
    ),
];

/// An arbitrary constant naming airlock's migration lock.
const PG_LOCK: i64 = 0x0061_6972_6c6f_636b;

pub(crate) async fn run(db: &Db) -> Result<(), StoreError> {
    let mut tx = db.begin_write().await?;
    if let Tx::Pg(t) = &mut tx {
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(PG_LOCK)
            .execute(&mut **t)
            .await?;
    }
    on_tx!(&mut tx, c => {
        sqlx::raw_sql(
            "CREATE TABLE IF NOT EXISTS airlock_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL)",
        )
        .execute(&mut *c)
        .await?;
        let applied: Vec<i64> = sqlx::query("SELECT version FROM airlock_migrations")
            .fetch_all(&mut *c)
            .await?
            .iter()
            .map(|r| r.try_get::<i64, _>(0))
            .collect::<Result<_, _>>()?;
        for (version, name, sql) in MIGRATIONS {
            if applied.contains(version) {
                continue;
            }
            sqlx::raw_sql(*sql).execute(&mut *c).await?;
            sqlx::query("INSERT INTO airlock_migrations (version, name) VALUES ($1, $2)")
                .bind(*version)
                .bind(*name)
                .execute(&mut *c)
                .await?;
        }
        if let Some(newest) = applied.iter().max() {
            let known = MIGRATIONS.iter().map(|m| m.0).max().unwrap_or(0);
            if *newest > known {
                return Err(StoreError::Config(format!(
                    "the database has schema version {newest}, newer than this airlock knows ({known}): upgrade airlock"
                )));
            }
        }
    });
    tx.commit().await
}
