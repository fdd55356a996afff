//! Rows of the daemon's auth tables: bearer tokens (kept only as the SHA-256 of the secret) and
//! the web inbox's login sessions. The store neither makes secrets nor hashes them; the gateway
//! does, and compares in constant time. What must hold under concurrency holds here: a token is
//! revoked once (one conditional UPDATE), and a session is usable only while its token is
//! unrevoked and the session unexpired, checked in the same query that reads it.

use sqlx::Row;

use crate::StoreError;
use crate::db::{Db, on_pool};

/// One bearer token, without its secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    pub id: String,
    pub name: String,
    /// `agent`, `approver` or `admin` (a CHECK constraint refuses anything else).
    pub role: String,
    /// Lowercase hex SHA-256 of the secret.
    pub sha256: String,
    pub created_ms: i64,
    pub revoked_ms: Option<i64>,
}

/// One web login session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSessionRow {
    /// Lowercase hex SHA-256 of the session id held in the browser's cookie.
    pub sha256: String,
    /// The id of the token that logged in.
    pub token: String,
    pub csrf: String,
    pub created_ms: i64,
    pub expires_ms: i64,
}

const TOKEN_COLUMNS: &str = "id, name, role, sha256, created_ms, revoked_ms";

fn token_of<R: Row>(r: &R, base: usize) -> Result<TokenRow, sqlx::Error>
where
    usize: sqlx::ColumnIndex<R>,
    for<'a> String: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    for<'a> i64: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
{
    Ok(TokenRow {
        id: r.try_get(base)?,
        name: r.try_get(base + 1)?,
        role: r.try_get(base + 2)?,
        sha256: r.try_get(base + 3)?,
        created_ms: r.try_get(base + 4)?,
        revoked_ms: r.try_get(base + 5)?,
    })
}

impl Db {
    pub async fn token_insert(&self, t: &TokenRow) -> Result<(), StoreError> {
        const Q: &str = "INSERT INTO tokens (id, name, role, sha256, created_ms, revoked_ms) \
                         VALUES ($1, $2, $3, $4, $5, $6)";
        on_pool!(self, p => {
            sqlx::query(Q)
                .bind(t.id.as_str())
                .bind(t.name.as_str())
                .bind(t.role.as_str())
                .bind(t.sha256.as_str())
                .bind(t.created_ms)
                .bind(t.revoked_ms)
                .execute(p)
                .await?;
        });
        Ok(())
    }

    /// Every token, revoked ones included, oldest first.
    pub async fn token_list(&self) -> Result<Vec<TokenRow>, StoreError> {
        let q = format!("SELECT {TOKEN_COLUMNS} FROM tokens ORDER BY created_ms, id");
        on_pool!(self, p => {
            let rows = sqlx::query(sqlx::AssertSqlSafe(q)).fetch_all(p).await?;
            Ok(rows.iter().map(|r| token_of(r, 0)).collect::<Result<_, _>>()?)
        })
    }

    pub async fn token_get(&self, id: &str) -> Result<Option<TokenRow>, StoreError> {
        let q = format!("SELECT {TOKEN_COLUMNS} FROM tokens WHERE id = $1");
        on_pool!(self, p => {
            let r = sqlx::query(sqlx::AssertSqlSafe(q)).bind(id).fetch_optional(p).await?;
            Ok(r.map(|r| token_of(&r, 0)).transpose()?)
        })
    }

    /// The unrevoked token whose secret hashes to `sha256`, if any.
    pub async fn token_by_hash(&self, sha256: &str) -> Result<Option<TokenRow>, StoreError> {
        let q =
            format!("SELECT {TOKEN_COLUMNS} FROM tokens WHERE sha256 = $1 AND revoked_ms IS NULL");
        on_pool!(self, p => {
            let r = sqlx::query(sqlx::AssertSqlSafe(q)).bind(sha256).fetch_optional(p).await?;
            Ok(r.map(|r| token_of(&r, 0)).transpose()?)
        })
    }

    /// Revokes a token and ends its web sessions. `false` when there is no such token or it
    /// was already revoked (only the first revocation changes the row).
    pub async fn token_revoke(&self, id: &str, now: i64) -> Result<bool, StoreError> {
        const Q: &str = "UPDATE tokens SET revoked_ms = $2 WHERE id = $1 AND revoked_ms IS NULL";
        const END: &str = "DELETE FROM web_sessions WHERE token = $1";
        on_pool!(self, p => {
            let changed = sqlx::query(Q).bind(id).bind(now).execute(p).await?.rows_affected();
            // Sessions are also refused by the join in `web_session_get` once the token is
            // revoked; deleting them keeps the table from holding dead rows.
            sqlx::query(END).bind(id).execute(p).await?;
            Ok(changed == 1)
        })
    }

    pub async fn web_session_insert(&self, s: &WebSessionRow) -> Result<(), StoreError> {
        const Q: &str = "INSERT INTO web_sessions (sha256, token, csrf, created_ms, expires_ms) \
                         VALUES ($1, $2, $3, $4, $5)";
        on_pool!(self, p => {
            sqlx::query(Q)
                .bind(s.sha256.as_str())
                .bind(s.token.as_str())
                .bind(s.csrf.as_str())
                .bind(s.created_ms)
                .bind(s.expires_ms)
                .execute(p)
                .await?;
        });
        Ok(())
    }

    /// The session whose id hashes to `sha256` and its token, when the session has not
    /// expired at `now` and its token is not revoked.
    pub async fn web_session_get(
        &self,
        sha256: &str,
        now: i64,
    ) -> Result<Option<(WebSessionRow, TokenRow)>, StoreError> {
        const Q: &str = "SELECT s.sha256, s.token, s.csrf, s.created_ms, s.expires_ms, \
                         t.id, t.name, t.role, t.sha256, t.created_ms, t.revoked_ms \
                         FROM web_sessions s JOIN tokens t ON t.id = s.token \
                         WHERE s.sha256 = $1 AND s.expires_ms > $2 AND t.revoked_ms IS NULL";
        on_pool!(self, p => {
            let r = sqlx::query(Q).bind(sha256).bind(now).fetch_optional(p).await?;
            let Some(r) = r else { return Ok(None) };
            let s = WebSessionRow {
                sha256: r.try_get(0)?,
                token: r.try_get(1)?,
                csrf: r.try_get(2)?,
                created_ms: r.try_get(3)?,
                expires_ms: r.try_get(4)?,
            };
            Ok(Some((s, token_of(&r, 5)?)))
        })
    }

    /// Ends one session (logout). `false` when there was none.
    pub async fn web_session_delete(&self, sha256: &str) -> Result<bool, StoreError> {
        const Q: &str = "DELETE FROM web_sessions WHERE sha256 = $1";
        on_pool!(self, p => {
            Ok(sqlx::query(Q).bind(sha256).execute(p).await?.rows_affected() == 1)
        })
    }

    /// Deletes sessions expired at `now`; returns how many.
    pub async fn web_session_purge(&self, now: i64) -> Result<u64, StoreError> {
        const Q: &str = "DELETE FROM web_sessions WHERE expires_ms <= $1";
        on_pool!(self, p => {
            Ok(sqlx::query(Q).bind(now).execute(p).await?.rows_affected())
        })
    }
}

impl Db {
    /// Registers `roots` (absolute, normalised directories) for the token `token`, adding to
    /// those it has.
    pub async fn token_roots_add(&self, token: &str, roots: &[String]) -> Result<(), StoreError> {
        const Q: &str = "INSERT INTO token_roots (token, root) VALUES ($1, $2) ON CONFLICT (token, root) DO NOTHING";
        for root in roots {
            on_pool!(self, p => {
                sqlx::query(Q).bind(token).bind(root.as_str()).execute(p).await?;
            });
        }
        Ok(())
    }

    /// The workspace roots registered for `token`, sorted (empty: none registered).
    pub async fn token_roots(&self, token: &str) -> Result<Vec<String>, StoreError> {
        const Q: &str = "SELECT root FROM token_roots WHERE token = $1 ORDER BY root";
        on_pool!(self, p => {
            let rows = sqlx::query(Q).bind(token).fetch_all(p).await?;
            Ok(rows.iter().map(|r| r.try_get::<String, _>(0)).collect::<Result<_, _>>()?)
        })
    }
}
