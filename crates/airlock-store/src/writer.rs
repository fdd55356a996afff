//! The append transaction. Every batch runs in one write transaction whose first statement
//! updates the single `ledger_state` row: that serialises writers across processes and nodes
//! (a row lock on PostgreSQL, the database write lock on SQLite). Inside it the writer catches
//! its in-memory Merkle tree up with leaves other writers added, reads each session's chain head,
//! seals receipts in order, writes them with the new heads, and signs a checkpoint when one is
//! due. Unique keys on `(session, lamport)`, `request_id` and `leaf` back the lock up: a writer
//! that somehow raced would fail its commit rather than fork a chain.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use airlock_ledger::canonical::{parse_hash, sha256};
use airlock_ledger::{Checkpoint, LedgerKey, MerkleLog, Receipt, time};
use sqlx::Row;

use crate::StoreError;
use crate::db::{Db, Tx, on_tx};
use crate::ledger::{AppendRequest, LedgerConfig};

pub(crate) struct Writer {
    pub db: Db,
    pub key: LedgerKey,
    pub log: MerkleLog,
    pub config: LedgerConfig,
}

struct State {
    next_leaf: u64,
    checkpoint_size: u64,
    checkpoint_at_ms: i64,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl Writer {
    /// Appends a batch; one result per request, in order. An error for the whole batch (the
    /// database failed) leaves nothing committed.
    pub async fn append_batch(
        &mut self,
        reqs: &[AppendRequest],
    ) -> Result<Vec<Result<Receipt, StoreError>>, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let state = lock(&mut tx).await?;
        self.catch_up(state.next_leaf).await?;
        let before = self.log.len();
        match self.fill(&mut tx, reqs, state).await {
            Ok(out) => match tx.commit().await {
                Ok(()) => Ok(out),
                Err(e) => {
                    self.log = self.log.prefix(before);
                    Err(e)
                }
            },
            Err(e) => {
                self.log = self.log.prefix(before);
                Err(e)
            }
        }
    }

    /// Signs a checkpoint now if any receipt is not yet covered (or, without `force`, if one is
    /// due by count or age).
    pub async fn checkpoint(&mut self, force: bool) -> Result<Option<Checkpoint>, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let mut state = lock(&mut tx).await?;
        self.catch_up(state.next_leaf).await?;
        let cp = self.maybe_checkpoint(&mut tx, &mut state, force).await?;
        if cp.is_some() {
            store_state(&mut tx, &state).await?;
        }
        tx.commit().await?;
        Ok(cp)
    }

    /// Brings the in-memory tree to `next_leaf` leaves from the database.
    async fn catch_up(&mut self, next_leaf: u64) -> Result<(), StoreError> {
        if self.log.len() > next_leaf {
            self.log = self.log.prefix(next_leaf);
        }
        if self.log.len() == next_leaf {
            return Ok(());
        }
        for (leaf, hash) in self.db.leaf_hashes(self.log.len()).await? {
            if leaf != self.log.len() {
                return Err(StoreError::Config(format!(
                    "receipt leaf {} is missing from the database",
                    self.log.len()
                )));
            }
            if leaf >= next_leaf {
                break;
            }
            self.log.push(parse_hash("stored receipt hash", &hash)?);
        }
        if self.log.len() != next_leaf {
            return Err(StoreError::Config(format!(
                "the database says {next_leaf} receipts but holds {}",
                self.log.len()
            )));
        }
        Ok(())
    }

    async fn fill(
        &mut self,
        tx: &mut Tx,
        reqs: &[AppendRequest],
        mut state: State,
    ) -> Result<Vec<Result<Receipt, StoreError>>, StoreError> {
        let mut heads: HashMap<String, (u64, Option<String>)> = HashMap::new();
        let mut done: HashMap<String, Receipt> = HashMap::new();
        let mut out = Vec::with_capacity(reqs.len());
        for req in reqs {
            let n = &req.receipt;
            if let Some(r) = done.get(&n.request_id) {
                out.push(Ok(r.clone()));
                continue;
            }
            if let Err(e) = n.validate() {
                out.push(Err(e.into()));
                continue;
            }
            // Idempotency: a request id already recorded yields the recorded receipt.
            let existing: Option<String> = on_tx!(tx, c => {
                sqlx::query("SELECT body FROM receipts WHERE request_id = $1")
                    .bind(&n.request_id)
                    .fetch_optional(&mut *c)
                    .await?
                    .map(|r| r.try_get::<String, _>(0))
                    .transpose()?
            });
            if let Some(body) = existing {
                let r = Receipt::parse(body.as_bytes())?;
                done.insert(n.request_id.clone(), r.clone());
                out.push(Ok(r));
                continue;
            }
            if !heads.contains_key(&n.session) {
                let head: Option<(i64, String)> = on_tx!(tx, c => {
                    sqlx::query("SELECT lamport, head FROM ledger_heads WHERE session = $1")
                        .bind(&n.session)
                        .fetch_optional(&mut *c)
                        .await?
                        .map(|r| Ok::<_, sqlx::Error>((r.try_get::<i64, _>(0)?, r.try_get::<String, _>(1)?)))
                        .transpose()?
                });
                let head = head.map(|(l, h)| (l as u64, Some(h))).unwrap_or((0, None));
                heads.insert(n.session.clone(), head);
            }
            let (lamport, prev) = heads.get(&n.session).cloned().unwrap_or((0, None));
            let leaf = state.next_leaf;
            let r = n.seal(&self.key, lamport + 1, prev, leaf, time::now())?;
            let bytes = r.canonical_bytes()?;
            let hash = sha256(&bytes);
            let hash_hex = hex::encode(hash);
            let body = String::from_utf8(bytes).map_err(|e| StoreError::Config(e.to_string()))?;
            on_tx!(tx, c => {
                sqlx::query(
                    "INSERT INTO receipts (leaf, id, request_id, session, lamport, hash, body, payload, created_ms) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                )
                .bind(to_i64(leaf))
                .bind(&r.id)
                .bind(&r.request_id)
                .bind(&r.session)
                .bind(to_i64(r.lamport))
                .bind(&hash_hex)
                .bind(&body)
                .bind(req.payload.as_deref())
                .bind(now_ms())
                .execute(&mut *c)
                .await?;
            });
            heads.insert(n.session.clone(), (r.lamport, Some(hash_hex)));
            self.log.push(hash);
            state.next_leaf += 1;
            done.insert(n.request_id.clone(), r.clone());
            out.push(Ok(r));
        }
        for (session, (lamport, head)) in &heads {
            let Some(head) = head else { continue };
            on_tx!(tx, c => {
                sqlx::query(
                    "INSERT INTO ledger_heads (session, lamport, head) VALUES ($1, $2, $3) \
                     ON CONFLICT (session) DO UPDATE SET lamport = excluded.lamport, head = excluded.head",
                )
                .bind(session)
                .bind(to_i64(*lamport))
                .bind(head)
                .execute(&mut *c)
                .await?;
            });
        }
        self.maybe_checkpoint(tx, &mut state, false).await?;
        store_state(tx, &state).await?;
        Ok(out)
    }

    async fn maybe_checkpoint(
        &mut self,
        tx: &mut Tx,
        state: &mut State,
        force: bool,
    ) -> Result<Option<Checkpoint>, StoreError> {
        let size = self.log.len();
        if size <= state.checkpoint_size {
            return Ok(None);
        }
        let age =
            Duration::from_millis(now_ms().saturating_sub(state.checkpoint_at_ms).max(0) as u64);
        let due = size - state.checkpoint_size >= self.config.checkpoint_every
            || age >= self.config.checkpoint_interval;
        if !force && !due {
            return Ok(None);
        }
        let cp = self.log.checkpoint(&self.key, time::now())?;
        let body = String::from_utf8(cp.canonical_bytes()?)
            .map_err(|e| StoreError::Config(e.to_string()))?;
        on_tx!(tx, c => {
            sqlx::query("INSERT INTO checkpoints (size, body) VALUES ($1, $2)")
                .bind(to_i64(size))
                .bind(&body)
                .execute(&mut *c)
                .await?;
        });
        state.checkpoint_size = size;
        state.checkpoint_at_ms = now_ms();
        Ok(Some(cp))
    }
}

/// Takes the ledger lock and reads the log's state.
async fn lock(tx: &mut Tx) -> Result<State, StoreError> {
    let row = on_tx!(tx, c => {
        let r = sqlx::query(
            "UPDATE ledger_state SET writes = writes + 1 WHERE id = 1 \
             RETURNING next_leaf, checkpoint_size, checkpoint_at_ms",
        )
        .fetch_one(&mut *c)
        .await?;
        (r.try_get::<i64, _>(0)?, r.try_get::<i64, _>(1)?, r.try_get::<i64, _>(2)?)
    });
    Ok(State {
        next_leaf: row.0 as u64,
        checkpoint_size: row.1 as u64,
        checkpoint_at_ms: row.2,
    })
}

async fn store_state(tx: &mut Tx, s: &State) -> Result<(), StoreError> {
    on_tx!(tx, c => {
        sqlx::query("UPDATE ledger_state SET next_leaf = $1, checkpoint_size = $2, checkpoint_at_ms = $3 WHERE id = 1")
            .bind(to_i64(s.next_leaf))
            .bind(to_i64(s.checkpoint_size))
            .bind(s.checkpoint_at_ms)
            .execute(&mut *c)
            .await?;
    });
    Ok(())
}
