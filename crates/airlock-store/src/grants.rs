//! Grant rows: insert, read, list, confirm, the atomic check-and-consume over a grant and all its
//! ancestors, and revocation cascading to every descendant. The store does not read scopes (that
//! is airlock-grants' job); it keeps them as JSON text and enforces what must hold under
//! concurrency: a use is counted only while every grant of the chain is active, unrevoked,
//! unexpired and below its maximum, all in one write transaction, so concurrent consumers on any
//! number of connections or nodes never exceed a maximum.

use sqlx::Row;

use crate::StoreError;
use crate::db::{Db, Tx, on_pool, on_tx};

/// One stored grant, as raw columns. Times are unix milliseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantRow {
    pub id: String,
    pub agent: String,
    pub session: Option<String>,
    pub kind: String,
    /// The scope as JSON text.
    pub scope: String,
    pub max_uses: i64,
    pub uses: i64,
    pub expires_ms: i64,
    pub parent: Option<String>,
    /// The creator as JSON text.
    pub creator: String,
    pub status: String,
    pub confirmed_by: Option<String>,
    pub confirmed_ms: Option<i64>,
    pub created_ms: i64,
    pub revoked_ms: Option<i64>,
    pub revoke_reason: Option<String>,
    pub reason: String,
}

/// Which grants [`Db::grant_list`] returns.
#[derive(Debug, Clone, Default)]
pub struct GrantFilter {
    pub agent: Option<String>,
    /// Grants of this session and the agent's session-less grants.
    pub session: Option<String>,
    /// Only grants usable at this time by their own row (active, unrevoked, unexpired, uses
    /// left); ancestors are checked when a use is consumed.
    pub usable_at: Option<i64>,
    pub limit: Option<i64>,
}

const COLUMNS: &str = "id, agent, session, kind, scope, max_uses, uses, expires_ms, parent, creator, status, confirmed_by, confirmed_ms, created_ms, revoked_ms, revoke_reason, reason";

fn row_of<R: Row>(r: &R) -> Result<GrantRow, sqlx::Error>
where
    usize: sqlx::ColumnIndex<R>,
    for<'a> String: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    for<'a> i64: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
{
    Ok(GrantRow {
        id: r.try_get(0)?,
        agent: r.try_get(1)?,
        session: r.try_get(2)?,
        kind: r.try_get(3)?,
        scope: r.try_get(4)?,
        max_uses: r.try_get(5)?,
        uses: r.try_get(6)?,
        expires_ms: r.try_get(7)?,
        parent: r.try_get(8)?,
        creator: r.try_get(9)?,
        status: r.try_get(10)?,
        confirmed_by: r.try_get(11)?,
        confirmed_ms: r.try_get(12)?,
        created_ms: r.try_get(13)?,
        revoked_ms: r.try_get(14)?,
        revoke_reason: r.try_get(15)?,
        reason: r.try_get(16)?,
    })
}

/// Why a child grant could not be inserted under its parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildRefused {
    /// No such parent.
    MissingParent,
    /// The parent is proposed, revoked or expired at insertion time.
    ParentNotUsable,
}

impl Db {
    /// Inserts a grant without a parent (or whose parent the caller has already checked).
    pub async fn grant_insert(&self, g: &GrantRow) -> Result<(), StoreError> {
        on_pool!(self, p => { insert_query(g).execute(p).await?; });
        Ok(())
    }

    /// Inserts `g` under its parent in one write transaction that first locks the parent row
    /// and checks it is still active, unrevoked and unexpired at `now`: a revocation of the
    /// parent either happens before (the child is refused) or after (it cascades to the child).
    pub async fn grant_insert_child(
        &self,
        g: &GrantRow,
        now: i64,
    ) -> Result<Result<(), ChildRefused>, StoreError> {
        let Some(parent) = g.parent.as_deref() else {
            return Err(StoreError::Config("a child grant needs a parent".into()));
        };
        let mut tx = self.begin_write().await?;
        let lock = match &tx {
            // SQLite: BEGIN IMMEDIATE already holds the database write lock.
            Tx::Sqlite(_) => "SELECT status, revoked_ms, expires_ms FROM grants WHERE id = $1",
            Tx::Pg(_) => {
                "SELECT status, revoked_ms, expires_ms FROM grants WHERE id = $1 FOR UPDATE"
            }
        };
        let state: Option<(String, Option<i64>, i64)> = on_tx!(&mut tx, c => {
            match sqlx::query(lock).bind(parent).fetch_optional(&mut *c).await? {
                Some(r) => Some((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)),
                None => None,
            }
        });
        let verdict = match state {
            None => Err(ChildRefused::MissingParent),
            Some((status, revoked, expires))
                if status != "active" || revoked.is_some() || expires <= now =>
            {
                Err(ChildRefused::ParentNotUsable)
            }
            Some(_) => Ok(()),
        };
        if verdict.is_ok() {
            on_tx!(&mut tx, c => { insert_query(g).execute(&mut *c).await?; });
            tx.commit().await?;
        }
        Ok(verdict)
    }

    pub async fn grant_get(&self, id: &str) -> Result<Option<GrantRow>, StoreError> {
        let q = format!("SELECT {COLUMNS} FROM grants WHERE id = $1");
        on_pool!(self, p => {
            let r = sqlx::query(sqlx::AssertSqlSafe(q)).bind(id).fetch_optional(p).await?;
            Ok(r.map(|r| row_of(&r)).transpose()?)
        })
    }

    /// Grants matching `f`, newest first.
    pub async fn grant_list(&self, f: &GrantFilter) -> Result<Vec<GrantRow>, StoreError> {
        let mut q = format!("SELECT {COLUMNS} FROM grants WHERE 1 = 1");
        let mut n = 0;
        let mut next = || {
            n += 1;
            n
        };
        if f.agent.is_some() {
            q.push_str(&format!(" AND agent = ${}", next()));
        }
        if f.session.is_some() {
            q.push_str(&format!(" AND (session = ${} OR session IS NULL)", next()));
        }
        if f.usable_at.is_some() {
            q.push_str(&format!(
                " AND status = 'active' AND revoked_ms IS NULL AND uses < max_uses AND expires_ms > ${}",
                next()
            ));
        }
        q.push_str(&format!(" ORDER BY created_ms DESC, id LIMIT ${}", next()));
        let limit = f.limit.unwrap_or(i64::MAX);
        on_pool!(self, p => {
            let mut query = sqlx::query(sqlx::AssertSqlSafe(q));
            if let Some(a) = &f.agent {
                query = query.bind(a.clone());
            }
            if let Some(s) = &f.session {
                query = query.bind(s.clone());
            }
            if let Some(t) = f.usable_at {
                query = query.bind(t);
            }
            let rows = query.bind(limit).fetch_all(p).await?;
            rows.iter().map(|r| row_of(r).map_err(StoreError::from)).collect()
        })
    }

    /// Candidates for a use by `agent` in `session` at `now`: grants usable by their own row
    /// that belong to that session, or to no session. (Matching the action is airlock-grants'
    /// job; ancestors are checked by [`Db::grant_consume`].)
    pub async fn grant_find_usable(
        &self,
        agent: &str,
        session: Option<&str>,
        now: i64,
    ) -> Result<Vec<GrantRow>, StoreError> {
        let q = format!(
            "SELECT {COLUMNS} FROM grants WHERE agent = $1 AND (session IS NULL OR session = $2) \
             AND status = 'active' AND revoked_ms IS NULL AND uses < max_uses AND expires_ms > $3"
        );
        on_pool!(self, p => {
            let rows = sqlx::query(sqlx::AssertSqlSafe(q))
                .bind(agent)
                .bind(session)
                .bind(now)
                .fetch_all(p)
                .await?;
            rows.iter().map(|r| row_of(r).map_err(StoreError::from)).collect()
        })
    }

    /// The grant and its ancestors, the grant first.
    pub async fn grant_chain(&self, id: &str) -> Result<Vec<GrantRow>, StoreError> {
        let mut out: Vec<GrantRow> = Vec::new();
        let mut next = Some(id.to_string());
        while let Some(id) = next {
            if out.iter().any(|g| g.id == id) {
                return Err(StoreError::Config(format!(
                    "grant {id} is its own ancestor"
                )));
            }
            let Some(g) = self.grant_get(&id).await? else {
                break;
            };
            next = g.parent.clone();
            out.push(g);
        }
        Ok(out)
    }

    /// Makes a proposed grant active, recording who confirmed it. `false` when the grant is not
    /// proposed (or does not exist), or is revoked or expired.
    pub async fn grant_confirm(&self, id: &str, by: &str, now: i64) -> Result<bool, StoreError> {
        const Q: &str = "UPDATE grants SET status = 'active', confirmed_by = $2, confirmed_ms = $3 \
             WHERE id = $1 AND status = 'proposed' AND revoked_ms IS NULL AND expires_ms > $3";
        let n = on_pool!(self, p => sqlx::query(Q).bind(id).bind(by).bind(now).execute(p).await?.rows_affected());
        Ok(n == 1)
    }

    /// Counts one use of grant `id` and of every ancestor, atomically: either every grant of the
    /// chain is active, unrevoked, unexpired at `now` and below its maximum, and each gains one
    /// use, or nothing changes and the answer is `None`. Returns the grant's row after the use.
    pub async fn grant_consume(&self, id: &str, now: i64) -> Result<Option<GrantRow>, StoreError> {
        const STEP: &str = "UPDATE grants SET uses = uses + 1 \
             WHERE id = $1 AND status = 'active' AND revoked_ms IS NULL AND expires_ms > $2 \
             AND uses < max_uses RETURNING parent";
        let mut tx = self.begin_write().await?;
        // Rows are locked from the grant towards the root, so two consumers of different
        // descendants of one grant lock in the same order (no deadlock on PostgreSQL).
        let mut next = Some(id.to_string());
        let mut depth = 0usize;
        while let Some(cur) = next {
            depth += 1;
            if depth > 64 {
                return Ok(None);
            }
            let step: Option<Option<String>> = on_tx!(&mut tx, c => {
                match sqlx::query(STEP).bind(&cur).bind(now).fetch_optional(&mut *c).await? {
                    Some(r) => Some(r.try_get::<Option<String>, _>(0)?),
                    None => None,
                }
            });
            match step {
                // Dropping the transaction rolls back the uses counted so far.
                None => return Ok(None),
                Some(parent) => next = parent,
            }
        }
        let q = format!("SELECT {COLUMNS} FROM grants WHERE id = $1");
        let row = on_tx!(&mut tx, c => {
            let r = sqlx::query(sqlx::AssertSqlSafe(q)).bind(id).fetch_one(&mut *c).await?;
            row_of(&r)?
        });
        tx.commit().await?;
        Ok(Some(row))
    }

    /// Revokes grant `id` and every grant derived from it (those already revoked keep their
    /// first revocation). Returns how many rows were revoked now.
    pub async fn grant_revoke(&self, id: &str, now: i64, reason: &str) -> Result<u64, StoreError> {
        const Q: &str = "WITH RECURSIVE tree (id) AS ( \
                 SELECT id FROM grants WHERE id = $1 \
                 UNION SELECT g.id FROM grants g JOIN tree t ON g.parent = t.id) \
             UPDATE grants SET revoked_ms = $2, revoke_reason = $3 \
             WHERE id IN (SELECT id FROM tree) AND revoked_ms IS NULL";
        let mut tx = self.begin_write().await?;
        let mut total = 0;
        // On PostgreSQL each statement sees the rows committed before it started: a child
        // inserted while this statement waited for its parent's row lock is only seen by the
        // next statement, so repeat until nothing is left to revoke. (A child inserted after its
        // parent is revoked is refused by `grant_insert_child`.) On SQLite the first pass
        // already sees everything.
        loop {
            let n = on_tx!(&mut tx, c => {
                sqlx::query(Q).bind(id).bind(now).bind(reason).execute(&mut *c).await?.rows_affected()
            });
            total += n;
            if n == 0 || matches!(tx, Tx::Sqlite(_)) {
                break;
            }
        }
        tx.commit().await?;
        Ok(total)
    }

    /// Ends a session: revokes its session-kind grants and everything derived from them.
    pub async fn grant_end_session(&self, session: &str, now: i64) -> Result<u64, StoreError> {
        const Q: &str = "WITH RECURSIVE tree (id) AS ( \
                 SELECT id FROM grants WHERE session = $1 AND kind = 'session' \
                 UNION SELECT g.id FROM grants g JOIN tree t ON g.parent = t.id) \
             UPDATE grants SET revoked_ms = $2, revoke_reason = $3 \
             WHERE id IN (SELECT id FROM tree) AND revoked_ms IS NULL";
        let reason = format!("session {session} ended");
        let mut tx = self.begin_write().await?;
        let mut total = 0;
        // Repeated on PostgreSQL for the reason given in `grant_revoke`.
        loop {
            let n = on_tx!(&mut tx, c => {
                sqlx::query(Q).bind(session).bind(now).bind(&reason).execute(&mut *c).await?.rows_affected()
            });
            total += n;
            if n == 0 || matches!(tx, Tx::Sqlite(_)) {
                break;
            }
        }
        tx.commit().await?;
        Ok(total)
    }
}

fn insert_query<DB: sqlx::Database>(g: &GrantRow) -> sqlx::query::Query<'_, DB, DB::Arguments>
where
    for<'a> String: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
    for<'a> &'a str: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
    for<'a> Option<&'a str>: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
    for<'a> i64: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
    for<'a> Option<i64>: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
{
    sqlx::query(
        "INSERT INTO grants (id, agent, session, kind, scope, max_uses, uses, expires_ms, parent, \
         creator, status, confirmed_by, confirmed_ms, created_ms, revoked_ms, revoke_reason, reason) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
    )
    .bind(g.id.as_str())
    .bind(g.agent.as_str())
    .bind(g.session.as_deref())
    .bind(g.kind.as_str())
    .bind(g.scope.as_str())
    .bind(g.max_uses)
    .bind(g.uses)
    .bind(g.expires_ms)
    .bind(g.parent.as_deref())
    .bind(g.creator.as_str())
    .bind(g.status.as_str())
    .bind(g.confirmed_by.as_deref())
    .bind(g.confirmed_ms)
    .bind(g.created_ms)
    .bind(g.revoked_ms)
    .bind(g.revoke_reason.as_deref())
    .bind(g.reason.as_str())
}
