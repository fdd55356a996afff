//! The append transaction. Every batch runs in one write transaction whose first statement
//! updates the single `ledger_state` row: that serialises writers across processes and nodes
//! (a row lock on PostgreSQL, the database write lock on SQLite). Inside it the writer catches
//! its in-memory Merkle tree up with leaves other writers added, reads each session's chain head,
//! seals receipts in order, writes them with the new heads, and signs a checkpoint when one is
//! due. Unique keys on `(session, lamport)`, `request_id` and `leaf` back the lock up: a writer
//! that somehow raced would fail its commit rather than fork a chain.
//!
//! Sealing ahead: while a batch commits (mostly waiting on the disk), the next batch can be
//! sealed with the leaf and chain heads this writer expects to find. Inside its transaction the
//! expectation is compared with what the database says; on any difference (another process
//! wrote, a request id was already recorded, a session's head moved) the presealed receipts
//! are dropped and the batch is sealed again as usual, so sealing ahead changes when the work
//! is done, never what is written.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use airlock_ledger::canonical::parse_hash;
use airlock_ledger::{Checkpoint, LedgerKey, MerkleLog, Receipt, time};
use sqlx::Row;

use crate::StoreError;
use crate::db::{Db, Tx, on_tx};
use crate::ledger::{AppendRequest, LedgerConfig};

pub(crate) struct Writer {
    pub db: Db,
    pub key: Arc<LedgerKey>,
    /// The Merkle tree, loaded the first time a checkpoint is due (so a one-shot recorder such
    /// as `airlock check --record` does not read every leaf), then kept up to date.
    pub log: Option<MerkleLog>,
    pub config: LedgerConfig,
    /// The chain heads of sessions as this writer last committed or read them, and the next
    /// leaf after its last commit: what sealing ahead assumes. Cleared whenever the database
    /// turns out to have moved without this writer.
    pub known: Known,
    pub ahead: Arc<AheadStats>,
    /// Where committed checkpoints are witnessed (`witness`); `None` witnesses nothing.
    pub witness: Option<std::path::PathBuf>,
    /// A checkpoint signed in the transaction under way, witnessed once it commits.
    pub unwitnessed: Option<Checkpoint>,
}

/// How sealing ahead went: batches that committed receipts sealed ahead, and batches whose
/// receipts sealed ahead were dropped because the database was not as they assumed.
#[derive(Debug, Default)]
pub struct AheadStats {
    pub used: std::sync::atomic::AtomicU64,
    pub dropped: std::sync::atomic::AtomicU64,
}

/// Chain heads: session → (Lamport value, hash of the head receipt; `None` before the first).
type Heads = HashMap<String, (u64, Option<String>)>;

#[derive(Default)]
pub(crate) struct Known {
    next_leaf: Option<u64>,
    heads: Heads,
}

/// At most this many sessions' heads are remembered for sealing ahead (then forgotten at once).
const KNOWN_SESSIONS: usize = 65_536;

impl Known {
    fn forget(&mut self) {
        self.next_leaf = None;
        self.heads.clear();
    }
}

/// Receipts sealed before their transaction, with what the sealing assumed.
pub(crate) struct Presealed {
    first_leaf: u64,
    assumed: Heads,
    fresh: Vec<Fresh>,
}

/// A batch written inside its transaction, not yet committed.
pub(crate) struct Staged {
    tx: Tx,
    out: Vec<Result<Receipt, StoreError>>,
    /// Leaves before the batch (to forget the batch's leaves if the commit fails).
    before: u64,
    /// The log and the heads of the batch's sessions as they will be once it commits.
    next_leaf: u64,
    heads: Heads,
}

/// What sealing the next batch ahead needs: the leaf it will start at and the head of each of
/// its sessions, as they will be once the staged batch commits.
pub(crate) struct Basis {
    pub key: Arc<LedgerKey>,
    first_leaf: u64,
    assumed: Heads,
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
    /// Writes a batch inside a new transaction without committing it, using `pre` when the
    /// database is exactly as its sealing assumed. One result per request, in order; an error
    /// for the whole batch (the database failed) leaves nothing committed.
    pub async fn stage(
        &mut self,
        reqs: &[AppendRequest],
        pre: Option<Presealed>,
    ) -> Result<Staged, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let state = lock(&mut tx).await?;
        if self.known.next_leaf != Some(state.next_leaf) {
            // Another writer appended since this one last did: what it knew is stale.
            self.known.forget();
        }
        self.catch_up(&mut tx, state.next_leaf).await?;
        let before = state.next_leaf;
        match self.fill(&mut tx, reqs, state, pre).await {
            Ok((out, next_leaf, heads)) => Ok(Staged {
                tx,
                out,
                before,
                next_leaf,
                heads,
            }),
            Err(e) => {
                // Nothing will be committed: forget the leaves this batch added.
                self.log = self.log.take().map(|l| l.prefix(before));
                self.known.forget();
                self.unwitnessed = None;
                Err(e)
            }
        }
    }

    /// Commits a staged batch; its results once durable.
    pub async fn commit(
        &mut self,
        staged: Staged,
    ) -> Result<Vec<Result<Receipt, StoreError>>, StoreError> {
        match staged.tx.commit().await {
            Ok(()) => {
                if self.known.heads.len() + staged.heads.len() > KNOWN_SESSIONS {
                    self.known.heads.clear();
                }
                self.known.heads.extend(staged.heads);
                self.known.next_leaf = Some(staged.next_leaf);
                self.witness_committed();
                Ok(staged.out)
            }
            Err(e) => {
                self.log = self.log.take().map(|l| l.prefix(staged.before));
                self.known.forget();
                self.unwitnessed = None;
                Err(e)
            }
        }
    }

    /// What sealing `reqs` ahead would assume once `staged` commits, if it can be sealed ahead
    /// at all: every request valid and distinct, and every session's head known.
    pub fn basis(&self, staged: &Staged, reqs: &[AppendRequest]) -> Option<Basis> {
        let mut ids = HashSet::new();
        let mut assumed = Heads::new();
        for r in reqs {
            let n = &r.receipt;
            if n.validate().is_err() || !ids.insert(n.request_id.as_str()) {
                return None;
            }
            if !assumed.contains_key(&n.session) {
                let head = staged
                    .heads
                    .get(&n.session)
                    .or_else(|| self.known.heads.get(&n.session))?;
                assumed.insert(n.session.clone(), head.clone());
            }
        }
        Some(Basis {
            key: self.key.clone(),
            first_leaf: staged.next_leaf,
            assumed,
        })
    }

    /// Signs a checkpoint now if any receipt is not yet covered (or, without `force`, if one is
    /// due by count or age).
    pub async fn checkpoint(&mut self, force: bool) -> Result<Option<Checkpoint>, StoreError> {
        let mut tx = self.db.begin_write().await?;
        let mut state = lock(&mut tx).await?;
        self.catch_up(&mut tx, state.next_leaf).await?;
        let cp = self.maybe_checkpoint(&mut tx, &mut state, force).await;
        let cp = match cp {
            Ok(cp) => cp,
            Err(e) => {
                self.unwitnessed = None;
                return Err(e);
            }
        };
        let done = async {
            if cp.is_some() {
                store_state(&mut tx, &state).await?;
            }
            tx.commit().await?;
            Ok::<(), StoreError>(())
        };
        if let Err(e) = done.await {
            self.unwitnessed = None;
            return Err(e);
        }
        self.witness_committed();
        Ok(cp)
    }

    /// Appends the checkpoint just committed to the witness. A witness that cannot be written
    /// is logged, not fatal: the receipts are durable, and the witness only lags (verification
    /// then checks against the older heads it holds).
    fn witness_committed(&mut self) {
        let (Some(cp), Some(dir)) = (self.unwitnessed.take(), self.witness.as_ref()) else {
            return;
        };
        if let Err(e) = crate::witness::record(dir, &cp) {
            tracing::warn!(error = %e, size = cp.size, "tree head not witnessed");
        }
    }

    /// Brings a loaded tree to `next_leaf` leaves from the database (through the transaction,
    /// so leaves it wrote itself are seen too).
    async fn catch_up(&mut self, tx: &mut Tx, next_leaf: u64) -> Result<(), StoreError> {
        let Some(log) = self.log.as_mut() else {
            return Ok(());
        };
        if log.len() > next_leaf {
            *log = log.prefix(next_leaf);
        }
        if log.len() == next_leaf {
            return Ok(());
        }
        let from = to_i64(log.len());
        let rows: Vec<(i64, String)> = on_tx!(tx, c => {
            sqlx::query("SELECT leaf, hash FROM receipts WHERE leaf >= $1 AND leaf < $2 ORDER BY leaf")
                .bind(from)
                .bind(to_i64(next_leaf))
                .fetch_all(&mut *c)
                .await?
                .iter()
                .map(|r| Ok::<_, sqlx::Error>((r.try_get::<i64, _>(0)?, r.try_get::<String, _>(1)?)))
                .collect::<Result<_, _>>()?
        });
        for (leaf, hash) in rows {
            if leaf as u64 != log.len() {
                return Err(StoreError::Config(format!(
                    "receipt leaf {} is missing from the database",
                    log.len()
                )));
            }
            log.push(parse_hash("stored receipt hash", &hash)?);
        }
        if log.len() != next_leaf {
            return Err(StoreError::Config(format!(
                "the database says {next_leaf} receipts but holds {}",
                log.len()
            )));
        }
        Ok(())
    }

    #[allow(clippy::type_complexity)]
    async fn fill(
        &mut self,
        tx: &mut Tx,
        reqs: &[AppendRequest],
        mut state: State,
        pre: Option<Presealed>,
    ) -> Result<(Vec<Result<Receipt, StoreError>>, u64, Heads), StoreError> {
        // Phase 1 (database): idempotency, validation, chain heads; leaves and Lamport values
        // are assigned in request order. Lookups go in a few multi-row statements, because a
        // statement round trip costs more than the row.
        let valid: Vec<&str> = {
            let mut seen = std::collections::HashSet::new();
            reqs.iter()
                .map(|r| &r.receipt)
                .filter(|n| n.validate().is_ok() && seen.insert(n.request_id.as_str()))
                .map(|n| n.request_id.as_str())
                .collect()
        };
        let existing = existing_receipts(tx, &valid).await?;
        let sessions: Vec<&str> = {
            let mut seen = std::collections::HashSet::new();
            reqs.iter()
                .map(|r| &r.receipt)
                .filter(|n| {
                    !existing.contains_key(&n.request_id) && seen.insert(n.session.as_str())
                })
                .map(|n| n.session.as_str())
                .collect()
        };
        let mut heads = session_heads(tx, &sessions).await?;
        let no_head = (0, None);
        // Receipts sealed ahead stand only if the database is exactly as they assumed: no
        // request already recorded, all valid and distinct, the same next leaf, and the same
        // head for every session (a session without one included).
        let offered = pre.is_some();
        let pre = pre.filter(|p| {
            existing.is_empty()
                && valid.len() == reqs.len()
                && p.fresh.len() == reqs.len()
                && p.fresh.iter().enumerate().all(|(i, f)| f.req == i)
                && p.first_leaf == state.next_leaf
                && p.assumed.len() == sessions.len()
                && sessions
                    .iter()
                    .all(|s| p.assumed.get(*s) == Some(heads.get(*s).unwrap_or(&no_head)))
        });
        let presealed = pre.is_some();
        if offered {
            let counter = if presealed {
                &self.ahead.used
            } else {
                // What this writer knew was wrong somewhere: learn it again from the database.
                self.known.forget();
                &self.ahead.dropped
            };
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let mut first_of: HashMap<&str, usize> = HashMap::new();
        let mut slots: Vec<Slot> = Vec::with_capacity(reqs.len());
        let mut fresh: Vec<Fresh> = Vec::new();
        if let Some(p) = pre {
            fresh = p.fresh;
            slots = (0..fresh.len()).map(Slot::Fresh).collect();
            state.next_leaf += fresh.len() as u64;
            heads = p.assumed;
        }
        for (i, req) in reqs.iter().enumerate().filter(|_| !presealed) {
            let n = &req.receipt;
            if let Some(&first) = first_of.get(n.request_id.as_str()) {
                slots.push(Slot::SameAs(first));
                continue;
            }
            first_of.insert(&n.request_id, i);
            if let Err(e) = n.validate() {
                slots.push(Slot::Done(Box::new(Err(e.into()))));
                continue;
            }
            // Idempotency: a request id already recorded yields the recorded receipt.
            if let Some(body) = existing.get(&n.request_id) {
                slots.push(Slot::Done(Box::new(Ok(Receipt::parse(body.as_bytes())?))));
                continue;
            }
            let head = heads.entry(n.session.clone()).or_insert((0, None));
            head.0 += 1;
            slots.push(Slot::Fresh(fresh.len()));
            fresh.push(Fresh {
                req: i,
                leaf: state.next_leaf,
                lamport: head.0,
                sealed: None,
            });
            state.next_leaf += 1;
        }

        // Phase 2 (CPU): sign, one thread per group of sessions; within a session in order,
        // each receipt carrying the hash of the one before.
        if !presealed {
            seal_all(&self.key, reqs, &mut fresh, &heads, &time::now())?;
        }

        // Phase 3 (database): write the receipts in leaf order and the new chain heads.
        let created = now_ms();
        let mut rows = Vec::with_capacity(fresh.len());
        for f in &fresh {
            let Some((r, bytes, hash)) = &f.sealed else {
                return Err(StoreError::Config("a receipt was not sealed".into()));
            };
            let body = std::str::from_utf8(bytes).map_err(|e| StoreError::Config(e.to_string()))?;
            rows.push((f, r, body, hex::encode(hash)));
            if let Some(log) = self.log.as_mut() {
                log.push(*hash);
            }
        }
        let sqlite = tx.is_sqlite();
        for chunk in pieces(&rows) {
            let sql = format!(
                "INSERT INTO receipts (leaf, id, request_id, session, lamport, hash, body, payload, created_ms) VALUES {}",
                placeholders(sqlite, chunk.len(), 9)
            );
            on_tx!(tx, c => {
                let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
                for (f, r, body, hash_hex) in chunk {
                    q = q
                        .bind(to_i64(f.leaf))
                        .bind(r.id.as_str())
                        .bind(r.request_id.as_str())
                        .bind(r.session.as_str())
                        .bind(to_i64(r.lamport))
                        .bind(hash_hex.as_str())
                        .bind(*body)
                        .bind(reqs[f.req].payload.as_deref())
                        .bind(created);
                }
                q.execute(&mut *c).await?;
            });
        }
        for (_, r, _, hash_hex) in &rows {
            heads.insert(r.session.clone(), (r.lamport, Some(hash_hex.clone())));
        }
        let mut out: Vec<Result<Receipt, StoreError>> = Vec::with_capacity(slots.len());
        for slot in slots {
            let r = match slot {
                Slot::Done(r) => *r,
                Slot::Fresh(k) => fresh[k]
                    .sealed
                    .as_ref()
                    .map(|s| s.0.clone())
                    .ok_or_else(|| StoreError::Config("a receipt was not sealed".into())),
                Slot::SameAs(first) => match &out[first] {
                    Ok(r) => Ok(r.clone()),
                    Err(e) => Err(StoreError::Config(e.to_string())),
                },
            };
            out.push(r);
        }
        let changed: Vec<(&String, i64, &String)> = heads
            .iter()
            .filter_map(|(s, (l, h))| h.as_ref().map(|h| (s, to_i64(*l), h)))
            .collect();
        for chunk in pieces(&changed) {
            let sql = format!(
                "INSERT INTO ledger_heads (session, lamport, head) VALUES {} \
                 ON CONFLICT (session) DO UPDATE SET lamport = excluded.lamport, head = excluded.head",
                placeholders(sqlite, chunk.len(), 3)
            );
            on_tx!(tx, c => {
                let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
                for (s, l, h) in chunk {
                    q = q.bind(s.as_str()).bind(*l).bind(h.as_str());
                }
                q.execute(&mut *c).await?;
            });
        }
        self.maybe_checkpoint(tx, &mut state, false).await?;
        store_state(tx, &state).await?;
        Ok((out, state.next_leaf, heads))
    }

    async fn maybe_checkpoint(
        &mut self,
        tx: &mut Tx,
        state: &mut State,
        force: bool,
    ) -> Result<Option<Checkpoint>, StoreError> {
        let size = state.next_leaf;
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
        if self.log.is_none() {
            self.log = Some(MerkleLog::new());
            self.catch_up(tx, size).await?;
        }
        let Some(log) = self.log.as_ref() else {
            return Ok(None);
        };
        let cp = log.checkpoint(&self.key, time::now())?;
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
        self.unwitnessed = Some(cp.clone());
        Ok(Some(cp))
    }
}

/// Row counts of the multi-row statements. A batch is cut greedily into pieces of these sizes, so
/// only a few distinct statement texts exist and sqlx prepares each once per connection (it caches
/// prepared statements by text): preparing a statement of many parameters costs more than running
/// it, as SQLite resolves each `$N` name by a linear search.
const PIECES: [usize; 4] = [128, 32, 8, 1];

/// `rows` cut into pieces whose lengths are in [`PIECES`], in order.
fn pieces<T>(rows: &[T]) -> Vec<&[T]> {
    let mut out = Vec::new();
    let mut rest = rows;
    while !rest.is_empty() {
        let n = PIECES
            .iter()
            .copied()
            .find(|&p| p <= rest.len())
            .unwrap_or(1);
        let (head, tail) = rest.split_at(n);
        out.push(head);
        rest = tail;
    }
    out
}

/// One parameter: `?` on SQLite (bound by position, which sqlx then does without asking SQLite
/// for each parameter's name), `$i` on PostgreSQL.
fn param(s: &mut String, sqlite: bool, i: usize) {
    if sqlite {
        s.push('?');
    } else {
        s.push('$');
        s.push_str(&i.to_string());
    }
}

/// `($1, $2), ($3, $4)` for `rows` rows of `cols` parameters.
fn placeholders(sqlite: bool, rows: usize, cols: usize) -> String {
    let mut s = String::with_capacity(rows * cols * 5);
    for r in 0..rows {
        if r > 0 {
            s.push_str(", ");
        }
        s.push('(');
        for c in 0..cols {
            if c > 0 {
                s.push_str(", ");
            }
            param(&mut s, sqlite, r * cols + c + 1);
        }
        s.push(')');
    }
    s
}

/// `$1, $2, …, $n`.
fn list(sqlite: bool, n: usize) -> String {
    let mut s = String::with_capacity(n * 5);
    for i in 1..=n {
        if i > 1 {
            s.push_str(", ");
        }
        param(&mut s, sqlite, i);
    }
    s
}

/// The stored bodies of the request ids already recorded. Looked up by receipt id, a hash of
/// the request id, which is the only unique key on a receipt's identity (see migration 8); the
/// stored request id is compared too, so a hash collision could never pass for a repeat.
async fn existing_receipts(
    tx: &mut Tx,
    request_ids: &[&str],
) -> Result<HashMap<String, String>, StoreError> {
    let mut out = HashMap::new();
    let sqlite = tx.is_sqlite();
    let ids: Vec<(String, &str)> = request_ids
        .iter()
        .map(|r| (airlock_ledger::receipt::receipt_id(r), *r))
        .collect();
    for chunk in pieces(&ids) {
        let sql = format!(
            "SELECT id, request_id, body FROM receipts WHERE id IN ({})",
            list(sqlite, chunk.len())
        );
        let rows: Vec<(String, String, String)> = on_tx!(tx, c => {
            let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
            for (id, _) in chunk {
                q = q.bind(id.as_str());
            }
            q.fetch_all(&mut *c)
                .await?
                .iter()
                .map(|r| Ok::<_, sqlx::Error>((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
                .collect::<Result<_, _>>()?
        });
        for (id, request_id, body) in rows {
            if chunk.iter().any(|(i, r)| *i == id && *r == request_id) {
                out.insert(request_id, body);
            } else {
                return Err(StoreError::Config(format!(
                    "receipt {id} is stored for another request id"
                )));
            }
        }
    }
    Ok(out)
}

/// The chain head (Lamport value and hash) of each session that has one.
async fn session_heads(
    tx: &mut Tx,
    sessions: &[&str],
) -> Result<HashMap<String, (u64, Option<String>)>, StoreError> {
    let mut out = HashMap::new();
    let sqlite = tx.is_sqlite();
    for chunk in pieces(sessions) {
        let sql = format!(
            "SELECT session, lamport, head FROM ledger_heads WHERE session IN ({})",
            list(sqlite, chunk.len())
        );
        let rows: Vec<(String, i64, String)> = on_tx!(tx, c => {
            let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
            for s in chunk {
                q = q.bind(*s);
            }
            q.fetch_all(&mut *c)
                .await?
                .iter()
                .map(|r| Ok::<_, sqlx::Error>((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
                .collect::<Result<_, _>>()?
        });
        out.extend(rows.into_iter().map(|(s, l, h)| (s, (l as u64, Some(h)))));
    }
    Ok(out)
}

/// Where the answer for one request of a batch comes from.
enum Slot {
    Done(Box<Result<Receipt, StoreError>>),
    Fresh(usize),
    /// The same request id earlier in the batch.
    SameAs(usize),
}

/// A receipt to write: its request, its place, and once sealed the receipt, bytes and hash.
struct Fresh {
    req: usize,
    leaf: u64,
    lamport: u64,
    sealed: Option<(Receipt, Vec<u8>, [u8; 32])>,
}

/// Seals every fresh receipt. Sessions are split over the available cores; within a session
/// receipts are sealed in Lamport order, each `prev` the hash of the one before (or of the
/// stored head for the first).
fn seal_all(
    key: &LedgerKey,
    reqs: &[AppendRequest],
    fresh: &mut [Fresh],
    heads: &HashMap<String, (u64, Option<String>)>,
    now: &str,
) -> Result<(), StoreError> {
    let mut by_session: HashMap<&str, Vec<&mut Fresh>> = HashMap::new();
    for f in fresh.iter_mut() {
        by_session
            .entry(reqs[f.req].receipt.session.as_str())
            .or_default()
            .push(f);
    }
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4);
    let mut groups: Vec<Vec<Vec<&mut Fresh>>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, (_, list)) in by_session.into_iter().enumerate() {
        groups[i % threads].push(list);
    }
    // A session's receipts chain (each carries the hash of the one before), so a session gives
    // one receipt per round; a round's receipts are independent and are signed together.
    let seal_group = |group: Vec<Vec<&mut Fresh>>| -> Result<(), StoreError> {
        let mut chains: Vec<(Option<String>, std::vec::IntoIter<&mut Fresh>)> = group
            .into_iter()
            .map(|list| {
                let prev = list
                    .first()
                    .and_then(|f| heads.get(&reqs[f.req].receipt.session))
                    .and_then(|h| h.1.clone());
                (prev, list.into_iter())
            })
            .collect();
        loop {
            let mut round = Vec::with_capacity(chains.len());
            for (i, (prev, rest)) in chains.iter_mut().enumerate() {
                if let Some(f) = rest.next() {
                    let n = &reqs[f.req].receipt;
                    let p = n.prepare(key, f.lamport, prev.take(), f.leaf, now.to_string())?;
                    round.push((i, f, p));
                }
            }
            if round.is_empty() {
                return Ok(());
            }
            let sigs = {
                let msgs: Vec<&[u8]> = round.iter().map(|(_, _, p)| p.signing_bytes()).collect();
                key.sign_many(&msgs)
            };
            for ((i, f, p), sig) in round.into_iter().zip(sigs) {
                let s = p.finish(&hex::encode(sig))?;
                chains[i].0 = Some(hex::encode(s.hash));
                f.sealed = Some((s.receipt, s.bytes, s.hash));
            }
        }
    };
    if fresh_len_small(&groups) {
        for g in groups {
            seal_group(g)?;
        }
        return Ok(());
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = groups
            .into_iter()
            .map(|g| s.spawn(|| seal_group(g)))
            .collect();
        for h in handles {
            h.join()
                .map_err(|_| StoreError::Config("a signing thread panicked".into()))??;
        }
        Ok(())
    })
}

/// Seals `reqs` as the basis says the log will be (blocking: run it off the async threads).
/// `None` if sealing failed; the batch is then sealed in its transaction as usual.
pub(crate) fn preseal(basis: Basis, reqs: &[AppendRequest]) -> Option<Presealed> {
    let mut lamports: HashMap<&str, u64> = basis
        .assumed
        .iter()
        .map(|(s, h)| (s.as_str(), h.0))
        .collect();
    let mut fresh = Vec::with_capacity(reqs.len());
    for (i, r) in reqs.iter().enumerate() {
        let l = lamports.get_mut(r.receipt.session.as_str())?;
        *l += 1;
        fresh.push(Fresh {
            req: i,
            leaf: basis.first_leaf + i as u64,
            lamport: *l,
            sealed: None,
        });
    }
    seal_all(&basis.key, reqs, &mut fresh, &basis.assumed, &time::now()).ok()?;
    Some(Presealed {
        first_leaf: basis.first_leaf,
        assumed: basis.assumed,
        fresh,
    })
}

/// Small batches are sealed on the calling thread (spawning costs more than it saves).
fn fresh_len_small(groups: &[Vec<Vec<&mut Fresh>>]) -> bool {
    groups.iter().flatten().map(Vec::len).sum::<usize>() < 16
}

impl Tx {
    fn is_sqlite(&self) -> bool {
        matches!(self, Tx::Sqlite(_))
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

#[cfg(test)]
mod tests {
    use super::*;
    use airlock_core::{ActionKind, Decision};
    use airlock_ledger::{LogVerifier, NewReceipt};

    fn request(request_id: &str, session: &str) -> AppendRequest {
        AppendRequest {
            receipt: NewReceipt {
                request_id: request_id.into(),
                session: session.into(),
                principal: "agent:test".into(),
                action: ActionKind::Shell,
                tool: None,
                args_sha256: airlock_ledger::canonical::sha256_hex(request_id.as_bytes()),
                decision: Decision::Allow,
                reasons: vec![],
                grant: None,
                approvers: vec![],
                policy_sha256: airlock_ledger::canonical::sha256_hex(b"policy"),
                output_sha256: None,
                event: None,
            },
            payload: None,
        }
    }

    /// Two writers on one SQLite file, as two processes would be, sharing the ledger key.
    async fn two_writers(dir: &std::path::Path) -> (crate::Ledger, Writer, Writer) {
        let opts = crate::StoreOptions::new(dir);
        let ledger = crate::Ledger::open(&opts, LedgerConfig::default())
            .await
            .unwrap();
        let writer = || {
            let (key, _) = crate::keyfile::load_or_create(dir, crate::keyfile::LEDGER).unwrap();
            Writer {
                db: ledger.db().clone(),
                key: Arc::new(key),
                log: None,
                config: LedgerConfig::default(),
                known: Known::default(),
                ahead: Arc::new(AheadStats::default()),
                witness: None,
                unwitnessed: None,
            }
        };
        let (a, b) = (writer(), writer());
        (ledger, a, b)
    }

    /// Stages `first`, seals `next` ahead against it, commits `first`, lets `meddle` write
    /// through the other writer, then appends `next` with what was sealed ahead.
    async fn ahead_then(
        a: &mut Writer,
        b: &mut Writer,
        first: &[AppendRequest],
        next: &[AppendRequest],
        meddle: &[AppendRequest],
    ) -> Vec<Receipt> {
        let staged = a.stage(first, None).await.unwrap();
        let basis = a.basis(&staged, next).expect("next can be sealed ahead");
        let pre = preseal(basis, next);
        assert!(pre.is_some());
        a.commit(staged).await.unwrap();
        if !meddle.is_empty() {
            let staged = b.stage(meddle, None).await.unwrap();
            b.commit(staged).await.unwrap();
        }
        let staged = a.stage(next, pre).await.unwrap();
        a.commit(staged)
            .await
            .unwrap()
            .into_iter()
            .map(Result::unwrap)
            .collect()
    }

    async fn verify(ledger: &crate::Ledger) -> u64 {
        let snap = crate::audit::snapshot(ledger.db()).await.unwrap();
        LogVerifier::new(&snap.events)
            .unwrap()
            .verify(&snap.receipts, &snap.checkpoints)
            .unwrap()
            .receipts
    }

    #[tokio::test]
    async fn sealed_ahead_is_used_when_nothing_moved() {
        let d = tempfile::tempdir().unwrap();
        let (ledger, mut a, mut b) = two_writers(d.path()).await;
        let first = [request("a1", "s1"), request("a2", "s2")];
        let next = [
            request("a3", "s1"),
            request("a4", "s2"),
            request("a5", "s1"),
        ];
        let got = ahead_then(&mut a, &mut b, &first, &next, &[]).await;
        assert_eq!(a.ahead.used.load(std::sync::atomic::Ordering::Relaxed), 1);
        assert_eq!(
            a.ahead.dropped.load(std::sync::atomic::Ordering::Relaxed),
            0
        );
        let lamports: Vec<(u64, u64)> = got.iter().map(|r| (r.lamport, r.leaf)).collect();
        assert_eq!(lamports, [(2, 2), (2, 3), (3, 4)]);
        assert_eq!(verify(&ledger).await, 5);
    }

    #[tokio::test]
    async fn sealed_ahead_is_dropped_when_another_writer_moved_a_head() {
        let d = tempfile::tempdir().unwrap();
        let (ledger, mut a, mut b) = two_writers(d.path()).await;
        let first = [request("a1", "s1")];
        let next = [request("a2", "s1")];
        let got = ahead_then(&mut a, &mut b, &first, &next, &[request("b1", "s1")]).await;
        assert_eq!(a.ahead.used.load(std::sync::atomic::Ordering::Relaxed), 0);
        assert_eq!(
            a.ahead.dropped.load(std::sync::atomic::Ordering::Relaxed),
            1
        );
        // Sealed again after the other writer's receipt: it chains to that one.
        assert_eq!((got[0].lamport, got[0].leaf), (3, 2));
        assert_eq!(verify(&ledger).await, 3);
    }

    #[tokio::test]
    async fn sealed_ahead_is_dropped_when_a_request_was_recorded_meanwhile() {
        let d = tempfile::tempdir().unwrap();
        let (ledger, mut a, mut b) = two_writers(d.path()).await;
        let first = [request("a1", "s1"), request("a2", "s2")];
        let next = [request("x", "s2"), request("a3", "s1")];
        // The other writer records request `x` first, in another session.
        let got = ahead_then(&mut a, &mut b, &first, &next, &[request("x", "s9")]).await;
        assert_eq!(
            a.ahead.dropped.load(std::sync::atomic::Ordering::Relaxed),
            1
        );
        // The same request id yields the receipt already recorded, never a second one.
        assert_eq!((got[0].session.as_str(), got[0].leaf), ("s9", 2));
        assert_eq!((got[1].lamport, got[1].leaf), (2, 3));
        assert_eq!(verify(&ledger).await, 4);
    }

    #[tokio::test]
    async fn a_session_never_seen_is_not_sealed_ahead() {
        let d = tempfile::tempdir().unwrap();
        let (_ledger, mut a, _b) = two_writers(d.path()).await;
        let staged = a.stage(&[request("a1", "s1")], None).await.unwrap();
        assert!(a.basis(&staged, &[request("a2", "s1")]).is_some());
        assert!(a.basis(&staged, &[request("a2", "new")]).is_none());
        // Nor a batch with a request id twice, nor an invalid request.
        assert!(
            a.basis(&staged, &[request("a2", "s1"), request("a2", "s1")])
                .is_none()
        );
        assert!(a.basis(&staged, &[request("", "s1")]).is_none());
        a.commit(staged).await.unwrap();
    }

    #[test]
    fn pieces_cover_the_rows_in_order_with_few_sizes() {
        for n in [0usize, 1, 7, 8, 9, 127, 128, 129, 300, 1024] {
            let rows: Vec<usize> = (0..n).collect();
            let ps = pieces(&rows);
            assert_eq!(ps.concat(), rows);
            assert!(ps.iter().all(|p| PIECES.contains(&p.len())), "{n}");
        }
        let lens: Vec<usize> = pieces(&[0u8; 300]).iter().map(|p| p.len()).collect();
        assert_eq!(lens, [128, 128, 32, 8, 1, 1, 1, 1]);
    }

    #[test]
    fn placeholders_per_backend() {
        assert_eq!(placeholders(false, 2, 2), "($1, $2), ($3, $4)");
        assert_eq!(placeholders(true, 2, 2), "(?, ?), (?, ?)");
        assert_eq!(list(false, 3), "$1, $2, $3");
        assert_eq!(list(true, 3), "?, ?, ?");
    }
}
