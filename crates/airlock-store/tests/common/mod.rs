//! Helpers: sample requests and a throw-away PostgreSQL schema.

use airlock_core::{ActionKind, Decision};
use airlock_ledger::canonical::{hash_value, sha256_hex};
use airlock_ledger::{NewReceipt, ReasonRef};
use airlock_store::AppendRequest;

pub fn request(request_id: &str, session: &str) -> AppendRequest {
    let payload = serde_json::json!({"kind": "shell", "command": format!("echo {request_id}")});
    AppendRequest {
        receipt: NewReceipt {
            request_id: request_id.into(),
            session: session.into(),
            principal: "agent:test".into(),
            action: ActionKind::Shell,
            tool: None,
            args_sha256: hash_value(&payload).unwrap(),
            decision: Decision::Allow,
            reasons: vec![ReasonRef {
                rule: "readonly".into(),
                code: "READ_ONLY".into(),
            }],
            grant: None,
            approvers: vec![],
            policy_sha256: sha256_hex(b"test policy"),
            output_sha256: None,
        },
        payload: Some(serde_json::to_string(&payload).unwrap()),
    }
}

pub const DEFAULT_PG: &str = "postgres://postgres@127.0.0.1:5432/test";

/// A fresh schema on the test server, dropped when this guard goes.
pub struct PgSchema {
    pub url: String,
    base: String,
    name: String,
}

impl PgSchema {
    /// `None` (with a message) when PostgreSQL is unreachable and neither `CI` nor
    /// `AIRLOCK_TEST_DATABASE_URL` is set; a panic when it is required but unreachable.
    pub async fn create() -> Option<PgSchema> {
        let explicit = std::env::var("AIRLOCK_TEST_DATABASE_URL").ok();
        let required = explicit.is_some() || std::env::var_os("CI").is_some();
        let base = explicit.unwrap_or_else(|| DEFAULT_PG.to_string());
        let conn = sqlx::postgres::PgPoolOptions::new()
            .max_connections(1)
            .connect(&base)
            .await;
        let pool = match conn {
            Ok(p) => p,
            Err(e) if !required => {
                eprintln!(
                    "skipping PostgreSQL test: {base} unreachable ({e}); set CI or AIRLOCK_TEST_DATABASE_URL to require it"
                );
                return None;
            }
            Err(e) => panic!(
                "PostgreSQL at {base} is required (CI or AIRLOCK_TEST_DATABASE_URL set): {e}"
            ),
        };
        let mut rnd = [0u8; 8];
        getrandom_fill(&mut rnd);
        let name = format!("t_{}", hex::encode(rnd));
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

fn getrandom_fill(buf: &mut [u8]) {
    // The ledger's key generator already draws from the OS; reuse it for a random name.
    let k = airlock_ledger::LedgerKey::generate().unwrap();
    let s = k.secret_bytes();
    buf.copy_from_slice(&s[..buf.len()]);
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
