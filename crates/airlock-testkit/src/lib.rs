//! Test support shared by airlock's crates: a fresh PostgreSQL schema or database per test, so
//! tests on one server never see each other's rows, and (feature `gateway`, [`gateway`]) a real
//! REST gateway over a real broker on loopback. Panics are the point here (a test that
//! cannot set up must fail loudly), so this crate allows `unwrap`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[cfg(feature = "gateway")]
pub mod gateway;

/// The test server when `AIRLOCK_TEST_DATABASE_URL` is not set.
pub const DEFAULT_PG: &str = "postgres://postgres@127.0.0.1:5432/test";

/// A fresh schema on the test server, dropped when this guard goes. `url` selects it through
/// `search_path`.
pub struct PgSchema {
    pub url: String,
    base: String,
    name: String,
}

/// A fresh database on the test server, dropped (with its connections) when this guard goes.
/// Needed where nodes notify each other: `LISTEN/NOTIFY` channels are per database.
pub struct PgDb {
    pub url: String,
    admin: String,
    name: String,
}

/// A pool of one connection to the test server; `None` (with a message) when it is unreachable
/// and neither `CI` nor `AIRLOCK_TEST_DATABASE_URL` is set, a panic when it is required.
async fn server() -> Option<(sqlx::PgPool, String)> {
    let explicit = std::env::var("AIRLOCK_TEST_DATABASE_URL").ok();
    let required = explicit.is_some() || std::env::var_os("CI").is_some();
    let base = explicit.unwrap_or_else(|| DEFAULT_PG.to_string());
    match sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(&base)
        .await
    {
        Ok(p) => Some((p, base)),
        Err(e) if !required => {
            eprintln!(
                "skipping PostgreSQL test: {base} unreachable ({e}); set CI or AIRLOCK_TEST_DATABASE_URL to require it"
            );
            None
        }
        Err(e) => {
            panic!("PostgreSQL at {base} is required (CI or AIRLOCK_TEST_DATABASE_URL set): {e}")
        }
    }
}

fn random_name(prefix: &str) -> String {
    let mut rnd = [0u8; 8];
    getrandom::fill(&mut rnd).unwrap();
    format!("{prefix}{}", hex::encode(rnd))
}

/// Runs one statement on `url` from a fresh thread and runtime (a `Drop` may run inside or
/// outside a runtime), ignoring failure: cleanup must never mask the test's own result.
fn run_detached(url: String, sql: String) {
    let _ = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            if let Ok(p) = sqlx::postgres::PgPoolOptions::new()
                .max_connections(1)
                .connect(&url)
                .await
            {
                let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&p).await;
                p.close().await;
            }
        });
    })
    .join();
}

impl PgSchema {
    pub async fn create() -> Option<PgSchema> {
        let (pool, base) = server().await?;
        let name = random_name("t_");
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
        run_detached(
            self.base.clone(),
            format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name),
        );
    }
}

impl PgDb {
    pub async fn create() -> Option<PgDb> {
        let (pool, admin) = server().await?;
        let name = random_name("airlock_t_");
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
        let base = admin.rsplit_once('/').map(|(b, _)| b).unwrap_or(&admin);
        Some(PgDb {
            url: format!("{base}/{name}"),
            admin,
            name,
        })
    }
}

impl Drop for PgDb {
    fn drop(&mut self) {
        run_detached(
            self.admin.clone(),
            format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}
