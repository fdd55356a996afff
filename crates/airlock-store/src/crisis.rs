//! Rows of sessions in crisis mode (`session_crisis`, migration 11): set by a crisis verdict on
//! the person's text from any surface, read by every policy evaluation of the session, cleared
//! only by an approver. The store keeps the state; the mark and its clearing are receipts, which
//! the broker writes. Setting is one `INSERT … ON CONFLICT DO NOTHING`, so two nodes marking the
//! same session at once keep one mark (the first).

use sqlx::Row;

use crate::StoreError;
use crate::db::{Db, on_pool};

/// One session in crisis mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrisisRow {
    pub session: String,
    pub since_ms: i64,
    /// The surface that saw the crisis.
    pub source: String,
    /// The scanner's first crisis rule, or the verdict.
    pub rule: String,
    /// Whose traffic it was.
    pub agent: String,
}

const COLUMNS: &str = "session, since_ms, source, rule, agent";

fn row_of<R: Row>(r: &R) -> Result<CrisisRow, sqlx::Error>
where
    usize: sqlx::ColumnIndex<R>,
    for<'a> String: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    for<'a> i64: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
{
    Ok(CrisisRow {
        session: r.try_get(0)?,
        since_ms: r.try_get(1)?,
        source: r.try_get(2)?,
        rule: r.try_get(3)?,
        agent: r.try_get(4)?,
    })
}

impl Db {
    /// Marks `row.session` in crisis mode; `false` when it already was (the first mark stays).
    pub async fn crisis_set(&self, row: &CrisisRow) -> Result<bool, StoreError> {
        const Q: &str = "INSERT INTO session_crisis (session, since_ms, source, rule, agent) \
                         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (session) DO NOTHING";
        on_pool!(self, p => {
            let n = sqlx::query(Q).bind(&row.session).bind(row.since_ms).bind(&row.source)
                .bind(&row.rule).bind(&row.agent).execute(p).await?.rows_affected();
            Ok(n == 1)
        })
    }

    /// `session`'s mark, if it is in crisis mode.
    pub async fn crisis_get(&self, session: &str) -> Result<Option<CrisisRow>, StoreError> {
        let q = format!("SELECT {COLUMNS} FROM session_crisis WHERE session = $1");
        on_pool!(self, p => {
            let row = sqlx::query(sqlx::AssertSqlSafe(q)).bind(session).fetch_optional(p).await?;
            Ok(row.as_ref().map(row_of).transpose()?)
        })
    }

    /// Every session in crisis mode, oldest mark first.
    pub async fn crisis_list(&self) -> Result<Vec<CrisisRow>, StoreError> {
        let q = format!("SELECT {COLUMNS} FROM session_crisis ORDER BY since_ms, session");
        on_pool!(self, p => {
            let rows = sqlx::query(sqlx::AssertSqlSafe(q)).fetch_all(p).await?;
            Ok(rows.iter().map(row_of).collect::<Result<_, _>>()?)
        })
    }

    /// Ends `session`'s crisis mode; the mark it had, `None` when it was not in it.
    pub async fn crisis_clear(&self, session: &str) -> Result<Option<CrisisRow>, StoreError> {
        let q = format!("DELETE FROM session_crisis WHERE session = $1 RETURNING {COLUMNS}");
        on_pool!(self, p => {
            let row = sqlx::query(sqlx::AssertSqlSafe(q)).bind(session).fetch_optional(p).await?;
            Ok(row.as_ref().map(row_of).transpose()?)
        })
    }
}
