//! Approval rows (airlock-confirm's durable state): insert (idempotent by request id), read,
//! list, and the conditional transitions that make each decision happen once across any number
//! of tasks and nodes: every change is one `UPDATE … WHERE id = $ AND status = $`, and the caller
//! acts only when it changed a row. Also the webhook's one-time links and the per-session denial
//! streak. The store keeps actions, reasons and reviews as JSON text; reading them is the
//! broker's job.

use sqlx::Row;

use crate::StoreError;
use crate::db::{Db, on_pool};

/// One stored approval, as raw columns. Times are unix milliseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRow {
    pub id: String,
    pub request_id: String,
    pub agent: String,
    pub session: String,
    /// The canonical JSON of the action.
    pub action: String,
    pub action_sha256: String,
    pub tier: i64,
    /// JSON list of findings.
    pub reasons: String,
    pub policy_sha256: String,
    pub confirm: String,
    pub deliberate: bool,
    pub time_lock_ms: i64,
    pub status: String,
    /// JSON of the LLM review.
    pub llm: Option<String>,
    pub decided_by: Option<String>,
    pub by_person: bool,
    /// JSON list of approvers.
    pub approvers: Option<String>,
    pub scope: Option<String>,
    pub reason: Option<String>,
    pub grant_id: Option<String>,
    pub suggestion: Option<String>,
    pub created_ms: i64,
    pub deadline_ms: i64,
    pub decided_ms: Option<i64>,
    pub effective_ms: Option<i64>,
    pub receipt: Option<String>,
    /// Where a person answered from (a chat channel and message), when not the inbox or API.
    pub answered_via: Option<String>,
}

impl ApprovalRow {
    /// Whether no further transition can happen.
    pub fn is_final(&self) -> bool {
        matches!(
            self.status.as_str(),
            "approved" | "denied" | "expired" | "cancelled"
        )
    }
}

/// One state change: from one status to another, with what the decision carries. `None` fields
/// keep their stored value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transition {
    pub to: String,
    pub decided_by: Option<String>,
    /// Marks the decision as a person's (never cleared once set).
    pub by_person: bool,
    pub approvers: Option<String>,
    pub scope: Option<String>,
    pub reason: Option<String>,
    pub grant_id: Option<String>,
    pub suggestion: Option<String>,
    pub decided_ms: Option<i64>,
    pub effective_ms: Option<i64>,
    /// Where the answer came from (a chat channel and message).
    pub via: Option<String>,
}

/// A one-time link that was spent: which approval it answers and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpentLink {
    pub approval: String,
    pub decision: String,
}

/// A stored one-time link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkRow {
    pub nonce: String,
    pub approval: String,
    pub decision: String,
    pub expires_ms: i64,
    pub used_ms: Option<i64>,
}

const COLUMNS: &str = "id, request_id, agent, session, action, action_sha256, tier, reasons, \
     policy_sha256, confirm, deliberate, time_lock_ms, status, llm, decided_by, by_person, \
     approvers, scope, reason, grant_id, suggestion, created_ms, deadline_ms, decided_ms, \
     effective_ms, receipt, answered_via";

const FINAL: &str = "('approved', 'denied', 'expired', 'cancelled')";

fn row_of<R: Row>(r: &R) -> Result<ApprovalRow, sqlx::Error>
where
    usize: sqlx::ColumnIndex<R>,
    for<'a> String: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    for<'a> i64: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
{
    Ok(ApprovalRow {
        id: r.try_get(0)?,
        request_id: r.try_get(1)?,
        agent: r.try_get(2)?,
        session: r.try_get(3)?,
        action: r.try_get(4)?,
        action_sha256: r.try_get(5)?,
        tier: r.try_get(6)?,
        reasons: r.try_get(7)?,
        policy_sha256: r.try_get(8)?,
        confirm: r.try_get(9)?,
        deliberate: r.try_get::<i64, _>(10)? != 0,
        time_lock_ms: r.try_get(11)?,
        status: r.try_get(12)?,
        llm: r.try_get(13)?,
        decided_by: r.try_get(14)?,
        by_person: r.try_get::<i64, _>(15)? != 0,
        approvers: r.try_get(16)?,
        scope: r.try_get(17)?,
        reason: r.try_get(18)?,
        grant_id: r.try_get(19)?,
        suggestion: r.try_get(20)?,
        created_ms: r.try_get(21)?,
        deadline_ms: r.try_get(22)?,
        decided_ms: r.try_get(23)?,
        effective_ms: r.try_get(24)?,
        receipt: r.try_get(25)?,
        answered_via: r.try_get(26)?,
    })
}

impl Db {
    /// Inserts a pending approval unless one with the same request id exists; returns the
    /// stored row (the new one, or the earlier one for a repeated request) and whether it was
    /// inserted now.
    pub async fn approval_insert(
        &self,
        a: &ApprovalRow,
    ) -> Result<(ApprovalRow, bool), StoreError> {
        const Q: &str = "INSERT INTO approvals (id, request_id, agent, session, action, \
             action_sha256, tier, reasons, policy_sha256, confirm, deliberate, time_lock_ms, \
             status, llm, decided_by, by_person, approvers, scope, reason, grant_id, suggestion, \
             created_ms, deadline_ms, decided_ms, effective_ms, receipt, answered_via) VALUES ($1, \
             $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, \
             $20, $21, $22, $23, $24, $25, $26, $27) ON CONFLICT (request_id) DO NOTHING";
        let n = on_pool!(self, p => {
            sqlx::query(Q)
                .bind(a.id.as_str())
                .bind(a.request_id.as_str())
                .bind(a.agent.as_str())
                .bind(a.session.as_str())
                .bind(a.action.as_str())
                .bind(a.action_sha256.as_str())
                .bind(a.tier)
                .bind(a.reasons.as_str())
                .bind(a.policy_sha256.as_str())
                .bind(a.confirm.as_str())
                .bind(i64::from(a.deliberate))
                .bind(a.time_lock_ms)
                .bind(a.status.as_str())
                .bind(a.llm.as_deref())
                .bind(a.decided_by.as_deref())
                .bind(i64::from(a.by_person))
                .bind(a.approvers.as_deref())
                .bind(a.scope.as_deref())
                .bind(a.reason.as_deref())
                .bind(a.grant_id.as_deref())
                .bind(a.suggestion.as_deref())
                .bind(a.created_ms)
                .bind(a.deadline_ms)
                .bind(a.decided_ms)
                .bind(a.effective_ms)
                .bind(a.receipt.as_deref())
                .bind(a.answered_via.as_deref())
                .execute(p)
                .await?
                .rows_affected()
        });
        let stored = self
            .approval_by_request(&a.request_id)
            .await?
            .ok_or_else(|| StoreError::Config(format!("approval {} vanished", a.id)))?;
        Ok((stored, n == 1))
    }

    pub async fn approval_get(&self, id: &str) -> Result<Option<ApprovalRow>, StoreError> {
        self.approval_one("id", id).await
    }

    pub async fn approval_by_request(
        &self,
        request_id: &str,
    ) -> Result<Option<ApprovalRow>, StoreError> {
        self.approval_one("request_id", request_id).await
    }

    async fn approval_one(
        &self,
        column: &'static str,
        value: &str,
    ) -> Result<Option<ApprovalRow>, StoreError> {
        let q = format!("SELECT {COLUMNS} FROM approvals WHERE {column} = $1");
        on_pool!(self, p => {
            let r = sqlx::query(sqlx::AssertSqlSafe(q)).bind(value).fetch_optional(p).await?;
            Ok(r.map(|r| row_of(&r)).transpose()?)
        })
    }

    /// Approvals still open (pending, or approved with a time lock running), oldest first.
    pub async fn approval_list_open(&self, limit: i64) -> Result<Vec<ApprovalRow>, StoreError> {
        let q = format!(
            "SELECT {COLUMNS} FROM approvals WHERE status IN ('pending', 'locked') \
             ORDER BY created_ms, id LIMIT $1"
        );
        self.approval_many(q, &[limit]).await
    }

    /// Decided approvals, the most recently decided first.
    pub async fn approval_history(&self, limit: i64) -> Result<Vec<ApprovalRow>, StoreError> {
        let q = format!(
            "SELECT {COLUMNS} FROM approvals WHERE status IN {FINAL} \
             ORDER BY decided_ms DESC, id LIMIT $1"
        );
        self.approval_many(q, &[limit]).await
    }

    /// Pending approvals whose deadline has passed, and locked ones whose time lock is over,
    /// at `now`.
    pub async fn approval_due(&self, now: i64) -> Result<Vec<ApprovalRow>, StoreError> {
        let q = format!(
            "SELECT {COLUMNS} FROM approvals WHERE (status = 'pending' AND deadline_ms <= $1) \
             OR (status = 'locked' AND effective_ms <= $2) ORDER BY deadline_ms, id"
        );
        self.approval_many(q, &[now, now]).await
    }

    /// Final approvals whose receipt has not been recorded yet (a crash between the decision
    /// and the append): recovery records them.
    pub async fn approval_without_receipt(&self) -> Result<Vec<ApprovalRow>, StoreError> {
        let q = format!(
            "SELECT {COLUMNS} FROM approvals WHERE status IN {FINAL} AND receipt IS NULL \
             ORDER BY decided_ms, id"
        );
        self.approval_many(q, &[]).await
    }

    async fn approval_many(
        &self,
        q: String,
        binds: &[i64],
    ) -> Result<Vec<ApprovalRow>, StoreError> {
        on_pool!(self, p => {
            let mut query = sqlx::query(sqlx::AssertSqlSafe(q));
            for b in binds {
                query = query.bind(*b);
            }
            let rows = query.fetch_all(p).await?;
            rows.iter().map(|r| row_of(r).map_err(StoreError::from)).collect()
        })
    }

    /// Moves approval `id` from status `from` to `t.to` with the decision's fields; `true` when
    /// this call made the change (so exactly one caller acts on it).
    pub async fn approval_transition(
        &self,
        id: &str,
        from: &str,
        t: &Transition,
    ) -> Result<bool, StoreError> {
        const Q: &str = "UPDATE approvals SET status = $1, \
             decided_by = COALESCE($2, decided_by), \
             by_person = CASE WHEN $3 = 1 THEN 1 ELSE by_person END, \
             approvers = COALESCE($4, approvers), scope = COALESCE($5, scope), \
             reason = COALESCE($6, reason), grant_id = COALESCE($7, grant_id), \
             suggestion = COALESCE($8, suggestion), decided_ms = COALESCE($9, decided_ms), \
             effective_ms = COALESCE($10, effective_ms), \
             answered_via = COALESCE($11, answered_via) \
             WHERE id = $12 AND status = $13";
        let n = on_pool!(self, p => {
            sqlx::query(Q)
                .bind(t.to.as_str())
                .bind(t.decided_by.as_deref())
                .bind(i64::from(t.by_person))
                .bind(t.approvers.as_deref())
                .bind(t.scope.as_deref())
                .bind(t.reason.as_deref())
                .bind(t.grant_id.as_deref())
                .bind(t.suggestion.as_deref())
                .bind(t.decided_ms)
                .bind(t.effective_ms)
                .bind(t.via.as_deref())
                .bind(id)
                .bind(from)
                .execute(p)
                .await?
                .rows_affected()
        });
        Ok(n == 1)
    }

    /// Records the LLM review once, while the approval is still open; `true` when written now.
    pub async fn approval_set_llm(&self, id: &str, review: &str) -> Result<bool, StoreError> {
        const Q: &str = "UPDATE approvals SET llm = $1 WHERE id = $2 AND llm IS NULL \
             AND status IN ('pending', 'locked')";
        let n = on_pool!(self, p => sqlx::query(Q).bind(review).bind(id).execute(p).await?.rows_affected());
        Ok(n == 1)
    }

    /// Counts one wrong deliberate code typed for a pending approval; returns how many wrong
    /// codes it has had, or `None` when it is no longer pending.
    pub async fn approval_code_failed(&self, id: &str) -> Result<Option<i64>, StoreError> {
        const Q: &str = "UPDATE approvals SET code_failures = code_failures + 1 \
             WHERE id = $1 AND status = 'pending' RETURNING code_failures";
        Ok(on_pool!(self, p => {
            match sqlx::query(Q).bind(id).fetch_optional(p).await? {
                Some(r) => Some(r.try_get::<i64, _>(0)?),
                None => None,
            }
        }))
    }

    /// Records the grant a decision created (made after the decision won its transition).
    pub async fn approval_set_grant(&self, id: &str, grant: &str) -> Result<bool, StoreError> {
        const Q: &str = "UPDATE approvals SET grant_id = $1 WHERE id = $2 AND grant_id IS NULL \
             AND receipt IS NULL";
        let n = on_pool!(self, p => sqlx::query(Q).bind(grant).bind(id).execute(p).await?.rows_affected());
        Ok(n == 1)
    }

    /// Records the receipt of a final decision, only if none is recorded yet.
    pub async fn approval_set_receipt(&self, id: &str, receipt: &str) -> Result<bool, StoreError> {
        let q = format!(
            "UPDATE approvals SET receipt = $1 WHERE id = $2 AND receipt IS NULL \
             AND status IN {FINAL}"
        );
        let n = on_pool!(self, p => {
            sqlx::query(sqlx::AssertSqlSafe(q)).bind(receipt).bind(id).execute(p).await?.rows_affected()
        });
        Ok(n == 1)
    }

    /// How many times a person approved this exact action of this agent.
    pub async fn approval_count_person_approved(
        &self,
        agent: &str,
        action_sha256: &str,
    ) -> Result<u64, StoreError> {
        const Q: &str = "SELECT COUNT(*) FROM approvals WHERE agent = $1 AND action_sha256 = $2 \
             AND status IN ('approved', 'locked') AND by_person = 1";
        let n: i64 = on_pool!(self, p => {
            sqlx::query(Q).bind(agent).bind(action_sha256).fetch_one(p).await?.try_get(0)?
        });
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// The session's current run of consecutive denials.
    pub async fn denial_streak(&self, session: &str) -> Result<u32, StoreError> {
        const Q: &str = "SELECT denials FROM approval_streaks WHERE session = $1";
        let n: Option<i64> = on_pool!(self, p => {
            match sqlx::query(Q).bind(session).fetch_optional(p).await? {
                Some(r) => Some(r.try_get(0)?),
                None => None,
            }
        });
        Ok(n.map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX)))
    }

    /// Counts one decision into the session's streak: a denial extends it, an allow ends it.
    /// Returns the streak after this decision.
    pub async fn denial_streak_record(
        &self,
        session: &str,
        denied: bool,
        now: i64,
    ) -> Result<u32, StoreError> {
        const Q: &str = "INSERT INTO approval_streaks (session, denials, updated_ms) \
             VALUES ($1, $2, $3) ON CONFLICT (session) DO UPDATE SET \
             denials = CASE WHEN $2 = 0 THEN 0 ELSE approval_streaks.denials + 1 END, \
             updated_ms = $3 RETURNING denials";
        let n: i64 = on_pool!(self, p => {
            sqlx::query(Q).bind(session).bind(i64::from(denied)).bind(now).fetch_one(p).await?.try_get(0)?
        });
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// Stores a one-time link for approval `approval` (decision `approve` or `deny`).
    pub async fn approval_link_insert(
        &self,
        nonce: &str,
        approval: &str,
        decision: &str,
        expires_ms: i64,
    ) -> Result<(), StoreError> {
        const Q: &str = "INSERT INTO approval_links (nonce, approval, decision, expires_ms) \
             VALUES ($1, $2, $3, $4)";
        on_pool!(self, p => {
            sqlx::query(Q).bind(nonce).bind(approval).bind(decision).bind(expires_ms).execute(p).await?;
        });
        Ok(())
    }

    /// Reads a link without spending it (for a confirmation page).
    pub async fn approval_link_get(&self, nonce: &str) -> Result<Option<LinkRow>, StoreError> {
        const Q: &str = "SELECT nonce, approval, decision, expires_ms, used_ms FROM approval_links \
             WHERE nonce = $1";
        on_pool!(self, p => {
            match sqlx::query(Q).bind(nonce).fetch_optional(p).await? {
                Some(r) => Ok(Some(LinkRow {
                    nonce: r.try_get(0)?,
                    approval: r.try_get(1)?,
                    decision: r.try_get(2)?,
                    expires_ms: r.try_get(3)?,
                    used_ms: r.try_get(4)?,
                })),
                None => Ok(None),
            }
        })
    }

    /// Spends a link: `Some` only for the first use before its expiry.
    pub async fn approval_link_spend(
        &self,
        nonce: &str,
        now: i64,
    ) -> Result<Option<SpentLink>, StoreError> {
        const Q: &str = "UPDATE approval_links SET used_ms = $1 WHERE nonce = $2 \
             AND used_ms IS NULL AND expires_ms > $1 RETURNING approval, decision";
        on_pool!(self, p => {
            match sqlx::query(Q).bind(now).bind(nonce).fetch_optional(p).await? {
                Some(r) => Ok(Some(SpentLink { approval: r.try_get(0)?, decision: r.try_get(1)? })),
                None => Ok(None),
            }
        })
    }
}
