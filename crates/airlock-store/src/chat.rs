//! Chat channels' durable state (airlock-chat): each bot's update offset, leases that keep one
//! poller per bot token across nodes, the message sent per (channel, approval, chat) with the
//! nonce its buttons are bound to, and the answers refused before the broker saw them. What a
//! message says and how a platform is spoken to is the chat crate's business.

use sqlx::Row;

use crate::StoreError;
use crate::db::{Db, on_pool};

/// One chat message asking about an approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessageRow {
    pub channel: String,
    pub approval: String,
    pub chat: String,
    /// The platform's message id, once sent.
    pub message: Option<String>,
    pub nonce: String,
    pub ref_code: String,
    /// `sending`, `sent`, `failed` or `closed`.
    pub state: String,
    /// How it ended here: `approved`, `denied`, `timed_out`, `cancelled`, `superseded`,
    /// `undeliverable`, `notice`.
    pub outcome: Option<String>,
    pub created_ms: i64,
    pub closed_ms: Option<i64>,
}

/// An answer refused before the broker saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatRefusal {
    pub channel: String,
    pub user_id: String,
    pub chat: String,
    pub approval: Option<String>,
    pub what: String,
    pub at_ms: i64,
}

const MESSAGE_COLUMNS: &str =
    "channel, approval, chat, message, nonce, ref_code, state, created_ms, closed_ms, outcome";

fn message_of<R: Row>(r: &R) -> Result<ChatMessageRow, sqlx::Error>
where
    usize: sqlx::ColumnIndex<R>,
    for<'a> String: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    for<'a> i64: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
{
    Ok(ChatMessageRow {
        channel: r.try_get(0)?,
        approval: r.try_get(1)?,
        chat: r.try_get(2)?,
        message: r.try_get(3)?,
        nonce: r.try_get(4)?,
        ref_code: r.try_get(5)?,
        state: r.try_get(6)?,
        created_ms: r.try_get(7)?,
        closed_ms: r.try_get(8)?,
        outcome: r.try_get(9)?,
    })
}

impl Db {
    /// The next update id bot `bot` asks for, if it ever stored one.
    pub async fn chat_offset_get(&self, bot: &str) -> Result<Option<i64>, StoreError> {
        const Q: &str = "SELECT next_update FROM chat_offsets WHERE bot = $1";
        on_pool!(self, p => {
            let r = sqlx::query(Q).bind(bot).fetch_optional(p).await?;
            Ok(r.map(|r| r.try_get::<i64, _>(0)).transpose()?)
        })
    }

    /// Stores the next update id of `bot`; it never moves backwards.
    pub async fn chat_offset_set(&self, bot: &str, next: i64, now: i64) -> Result<(), StoreError> {
        const Q: &str = "INSERT INTO chat_offsets (bot, next_update, updated_ms) VALUES ($1, $2, $3) \
             ON CONFLICT (bot) DO UPDATE SET next_update = excluded.next_update, \
             updated_ms = excluded.updated_ms WHERE chat_offsets.next_update < excluded.next_update";
        on_pool!(self, p => {
            sqlx::query(Q).bind(bot).bind(next).bind(now).execute(p).await?;
        });
        Ok(())
    }

    /// Takes or renews lease `name` for `holder` until `now + ttl_ms`: `true` when `holder`
    /// holds it now (it was free, expired, or already its own).
    pub async fn chat_lease_take(
        &self,
        name: &str,
        holder: &str,
        now: i64,
        ttl_ms: i64,
    ) -> Result<bool, StoreError> {
        const Q: &str = "INSERT INTO chat_leases (name, holder, expires_ms) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, \
             expires_ms = excluded.expires_ms \
             WHERE chat_leases.holder = excluded.holder OR chat_leases.expires_ms <= $4";
        let n = on_pool!(self, p => {
            sqlx::query(Q)
                .bind(name)
                .bind(holder)
                .bind(now.saturating_add(ttl_ms))
                .bind(now)
                .execute(p)
                .await?
                .rows_affected()
        });
        Ok(n == 1)
    }

    /// Gives lease `name` up if `holder` has it.
    pub async fn chat_lease_release(&self, name: &str, holder: &str) -> Result<(), StoreError> {
        const Q: &str = "DELETE FROM chat_leases WHERE name = $1 AND holder = $2";
        on_pool!(self, p => {
            sqlx::query(Q).bind(name).bind(holder).execute(p).await?;
        });
        Ok(())
    }

    /// Claims the message for (channel, approval, chat) before it is sent; `false` when it was
    /// claimed before (by this node or another), so it is sent once.
    pub async fn chat_message_claim(&self, m: &ChatMessageRow) -> Result<bool, StoreError> {
        const Q: &str = "INSERT INTO chat_messages (channel, approval, chat, message, nonce, \
             ref_code, state, created_ms, closed_ms, outcome) VALUES ($1, $2, $3, $4, $5, $6, $7, \
             $8, $9, $10) \
             ON CONFLICT (channel, approval, chat) DO NOTHING";
        let n = on_pool!(self, p => {
            sqlx::query(Q)
                .bind(m.channel.as_str())
                .bind(m.approval.as_str())
                .bind(m.chat.as_str())
                .bind(m.message.as_deref())
                .bind(m.nonce.as_str())
                .bind(m.ref_code.as_str())
                .bind(m.state.as_str())
                .bind(m.created_ms)
                .bind(m.closed_ms)
                .bind(m.outcome.as_deref())
                .execute(p)
                .await?
                .rows_affected()
        });
        Ok(n == 1)
    }

    /// Moves a message from state `from` to `to`, recording its platform id and how it ended
    /// when given (and the time, for `closed` and `failed`); `true` when this call changed it.
    pub async fn chat_message_move(
        &self,
        nonce: &str,
        from: &str,
        to: &str,
        message: Option<&str>,
        outcome: Option<&str>,
        now: i64,
    ) -> Result<bool, StoreError> {
        const Q: &str = "UPDATE chat_messages SET state = $1, message = COALESCE($2, message), \
             closed_ms = CASE WHEN $1 IN ('closed', 'failed') THEN $3 ELSE closed_ms END, \
             outcome = COALESCE($6, outcome) \
             WHERE nonce = $4 AND state = $5";
        let n = on_pool!(self, p => {
            sqlx::query(Q)
                .bind(to)
                .bind(message)
                .bind(now)
                .bind(nonce)
                .bind(from)
                .bind(outcome)
                .execute(p)
                .await?
                .rows_affected()
        });
        Ok(n == 1)
    }

    pub async fn chat_message_by_nonce(
        &self,
        nonce: &str,
    ) -> Result<Option<ChatMessageRow>, StoreError> {
        let q = format!("SELECT {MESSAGE_COLUMNS} FROM chat_messages WHERE nonce = $1");
        on_pool!(self, p => {
            let r = sqlx::query(sqlx::AssertSqlSafe(q)).bind(nonce).fetch_optional(p).await?;
            Ok(r.map(|r| message_of(&r)).transpose()?)
        })
    }

    /// The messages of `channel` in `chat` showing code `ref_code`, newest first.
    pub async fn chat_message_by_ref(
        &self,
        channel: &str,
        chat: &str,
        ref_code: &str,
    ) -> Result<Vec<ChatMessageRow>, StoreError> {
        let q = format!(
            "SELECT {MESSAGE_COLUMNS} FROM chat_messages WHERE channel = $1 AND chat = $2 \
             AND ref_code = $3 ORDER BY created_ms DESC, nonce"
        );
        on_pool!(self, p => {
            let rows = sqlx::query(sqlx::AssertSqlSafe(q))
                .bind(channel)
                .bind(chat)
                .bind(ref_code)
                .fetch_all(p)
                .await?;
            rows.iter().map(|r| message_of(r).map_err(StoreError::from)).collect()
        })
    }

    /// Every message about `approval`, on any channel.
    pub async fn chat_messages_of(
        &self,
        approval: &str,
    ) -> Result<Vec<ChatMessageRow>, StoreError> {
        let q = format!(
            "SELECT {MESSAGE_COLUMNS} FROM chat_messages WHERE approval = $1 \
             ORDER BY created_ms, channel, chat"
        );
        on_pool!(self, p => {
            let rows = sqlx::query(sqlx::AssertSqlSafe(q)).bind(approval).fetch_all(p).await?;
            rows.iter().map(|r| message_of(r).map_err(StoreError::from)).collect()
        })
    }

    /// Messages of `channel` sent and not yet closed (closed once their approval is final).
    pub async fn chat_messages_open(
        &self,
        channel: &str,
    ) -> Result<Vec<ChatMessageRow>, StoreError> {
        let q = format!(
            "SELECT {MESSAGE_COLUMNS} FROM chat_messages WHERE channel = $1 AND state = 'sent' \
             ORDER BY created_ms, nonce"
        );
        on_pool!(self, p => {
            let rows = sqlx::query(sqlx::AssertSqlSafe(q)).bind(channel).fetch_all(p).await?;
            rows.iter().map(|r| message_of(r).map_err(StoreError::from)).collect()
        })
    }

    pub async fn chat_refusal_insert(&self, r: &ChatRefusal) -> Result<(), StoreError> {
        const Q: &str = "INSERT INTO chat_refusals (channel, user_id, chat, approval, what, at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6)";
        on_pool!(self, p => {
            sqlx::query(Q)
                .bind(r.channel.as_str())
                .bind(r.user_id.as_str())
                .bind(r.chat.as_str())
                .bind(r.approval.as_deref())
                .bind(r.what.as_str())
                .bind(r.at_ms)
                .execute(p)
                .await?;
        });
        Ok(())
    }

    /// The refusals of `channel`, oldest first.
    pub async fn chat_refusals(&self, channel: &str) -> Result<Vec<ChatRefusal>, StoreError> {
        const Q: &str = "SELECT channel, user_id, chat, approval, what, at_ms FROM chat_refusals \
             WHERE channel = $1 ORDER BY at_ms";
        on_pool!(self, p => {
            let rows = sqlx::query(Q).bind(channel).fetch_all(p).await?;
            rows.iter()
                .map(|r| {
                    Ok(ChatRefusal {
                        channel: r.try_get(0)?,
                        user_id: r.try_get(1)?,
                        chat: r.try_get(2)?,
                        approval: r.try_get(3)?,
                        what: r.try_get(4)?,
                        at_ms: r.try_get(5)?,
                    })
                })
                .collect::<Result<_, sqlx::Error>>()
                .map_err(StoreError::from)
        })
    }
}
