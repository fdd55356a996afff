//! Embedded migrations, applied in order at open inside one write transaction (PostgreSQL also
//! takes an advisory lock, so two nodes starting together apply each migration once). Each
//! applied version is recorded in `airlock_migrations`.

use sqlx::Row;

use crate::StoreError;
use crate::db::{Db, Tx, on_tx};

/// One schema version: its SQL, portable unless `pg` gives PostgreSQL its own text (a table
/// rebuild that is cheap in SQLite is an `ALTER TABLE` there).
struct Migration {
    version: i64,
    name: &'static str,
    sql: &'static str,
    pg: Option<&'static str>,
}

const fn portable(version: i64, name: &'static str, sql: &'static str) -> Migration {
    Migration {
        version,
        name,
        sql,
        pg: None,
    }
}

/// Append only; never edit an applied migration.
const MIGRATIONS: &[Migration] = &[
    portable(1, "ledger", include_str!("../migrations/0001_ledger.sql")),
    portable(2, "grants", include_str!("../migrations/0002_grants.sql")),
    portable(
        3,
        "approvals",
        include_str!("../migrations/0003_approvals.sql"),
    ),
    portable(4, "auth", include_str!("../migrations/0004_auth.sql")),
    portable(5, "budgets", include_str!("../migrations/0005_budgets.sql")),
    portable(
        6,
        "mcp_pins",
        include_str!("../migrations/0006_mcp_pins.sql"),
    ),
    portable(
        7,
        "mcp_pin_definitions",
        include_str!("../migrations/0007_mcp_pin_definitions.sql"),
    ),
    Migration {
        version: 8,
        name: "receipt_keys",
        sql: include_str!("../migrations/0008_receipt_keys.sql"),
        pg: Some(include_str!("../migrations/0008_receipt_keys.pg.sql")),
    },
    portable(
        9,
        "deliberate_codes",
        include_str!("../migrations/0009_deliberate_codes.sql"),
    ),
    portable(
        10,
        "token_roots",
        include_str!("../migrations/0010_token_roots.sql"),
    ),
    portable(11, "chat", include_str!("../migrations/0011_chat.sql")),
    portable(
        12,
        "session_crisis",
        include_str!("../migrations/0012_session_crisis.sql"),
    ),
];

/// An arbitrary constant naming airlock's migration lock.
const PG_LOCK: i64 = 0x0061_6972_6c6f_636b;

pub(crate) async fn run(db: &Db) -> Result<(), StoreError> {
    run_until(db, i64::MAX).await
}

/// Applies the migrations up to and including version `last` (below `i64::MAX` only in tests,
/// which build an older schema to upgrade).
async fn run_until(db: &Db, last: i64) -> Result<(), StoreError> {
    let mut tx = db.begin_write().await?;
    let pg = matches!(tx, Tx::Pg(_));
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
        for m in MIGRATIONS {
            if applied.contains(&m.version) || m.version > last {
                continue;
            }
            let sql = match m.pg {
                Some(pg_sql) if pg => pg_sql,
                _ => m.sql,
            };
            sqlx::raw_sql(sql).execute(&mut *c).await?;
            sqlx::query("INSERT INTO airlock_migrations (version, name) VALUES ($1, $2)")
                .bind(m.version)
                .bind(m.name)
                .execute(&mut *c)
                .await?;
        }
        if let Some(newest) = applied.iter().max() {
            let known = MIGRATIONS.iter().map(|m| m.version).max().unwrap_or(0);
            if *newest > known {
                return Err(StoreError::Config(format!(
                    "the database has schema version {newest}, newer than this airlock knows ({known}): upgrade airlock"
                )));
            }
        }
    });
    tx.commit().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StoreOptions;
    use crate::db::on_pool;

    const COLUMNS: &str = "leaf, id, request_id, session, lamport, hash, body, payload, created_ms";
    type Row8 = (
        i64,
        String,
        String,
        String,
        i64,
        String,
        String,
        Option<String>,
        i64,
    );

    async fn rows(db: &Db) -> Vec<Row8> {
        let q = format!("SELECT {COLUMNS} FROM receipts ORDER BY leaf");
        on_pool!(db, p => sqlx::query_as::<_, Row8>(sqlx::AssertSqlSafe(q)).fetch_all(p).await.unwrap())
    }

    async fn insert(db: &Db, r: &Row8) -> Result<(), sqlx::Error> {
        let q =
            format!("INSERT INTO receipts ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)");
        on_pool!(db, p => {
            sqlx::query(sqlx::AssertSqlSafe(q))
                .bind(r.0).bind(&r.1).bind(&r.2).bind(&r.3).bind(r.4)
                .bind(&r.5).bind(&r.6).bind(&r.7).bind(r.8)
                .execute(p)
                .await
                .map(|_| ())
        })
    }

    fn row(leaf: i64, request: &str, session: &str, lamport: i64) -> Row8 {
        (
            leaf,
            airlock_ledger::receipt::receipt_id(request),
            request.into(),
            session.into(),
            lamport,
            format!("{leaf:064x}"),
            format!("{{\"leaf\":{leaf}}}"),
            (leaf % 2 == 0).then(|| format!("{{\"command\":\"echo {leaf}\"}}")),
            1_700_000_000_000 + leaf,
        )
    }

    /// Migration 8 on a database of schema 7 with receipts in it: every row kept as it was,
    /// the identity still unique (by id, and by session and Lamport value), and request ids no
    /// longer indexed.
    async fn upgrade_keeps_receipts(opts: StoreOptions) {
        let db = Db::connect(&opts).await.unwrap();
        run_until(&db, 7).await.unwrap();
        let before: Vec<Row8> = (0..50)
            .map(|i| row(i, &format!("req-{i}"), &format!("s{}", i % 3), i / 3 + 1))
            .collect();
        for r in &before {
            insert(&db, r).await.unwrap();
        }
        run(&db).await.unwrap();
        assert_eq!(rows(&db).await, before);
        let versions: Vec<i64> = on_pool!(&db, p => sqlx::query_scalar("SELECT version FROM airlock_migrations ORDER BY version").fetch_all(p).await.unwrap());
        let known = MIGRATIONS.iter().map(|m| m.version).max().unwrap_or(0);
        assert_eq!(versions, (1..=known).collect::<Vec<_>>());

        // A second receipt for a recorded request id (same id), a forked chain (same session
        // and Lamport value) and a reused leaf are each refused.
        let mut dup_id = row(50, "req-7", "s9", 1);
        assert!(insert(&db, &dup_id).await.is_err());
        dup_id.1 = airlock_ledger::receipt::receipt_id("fresh");
        dup_id.3 = "s1".into();
        dup_id.4 = 3;
        assert!(insert(&db, &dup_id).await.is_err());
        assert!(insert(&db, &row(49, "other", "s8", 1)).await.is_err());
        insert(&db, &row(50, "fresh", "s9", 1)).await.unwrap();
        assert_eq!(rows(&db).await.len(), 51);

        if let Db::Sqlite(p) = &db {
            let indexed: Vec<String> = sqlx::query_scalar(
                "SELECT ii.name FROM pragma_index_list('receipts') AS il, pragma_index_info(il.name) AS ii",
            )
            .fetch_all(p)
            .await
            .unwrap();
            assert!(indexed.contains(&"id".to_string()), "{indexed:?}");
            assert!(!indexed.contains(&"request_id".to_string()), "{indexed:?}");
            assert!(
                !indexed.contains(&"leaf".to_string()),
                "leaf is the rowid: {indexed:?}"
            );
        }
        db.close().await;
    }

    #[tokio::test]
    async fn sqlite_upgrade_keeps_receipts() {
        let d = tempfile::tempdir().unwrap();
        upgrade_keeps_receipts(StoreOptions::new(d.path())).await;
    }

    #[tokio::test]
    async fn postgres_upgrade_keeps_receipts() {
        let Some(pg) = airlock_testkit::PgSchema::create().await else {
            return;
        };
        let d = tempfile::tempdir().unwrap();
        upgrade_keeps_receipts(StoreOptions::new(d.path()).with_database(Some(pg.url.clone())))
            .await;
    }
}
