//! The ledger handle: opens the store, makes sure the trust registry knows this node's ledger
//! key, rebuilds the Merkle tree, and runs the writer task. Appends from any number of tasks are
//! queued to the writer, which commits whatever is queued as one batch (group commit) and answers
//! each caller after the commit: an `append` that returned `Ok` is durable.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use airlock_ledger::registry::{KeyChange, Registry, RegistryEvent};
use airlock_ledger::{Checkpoint, KeyRole, LedgerKey, NewReceipt, Receipt, time};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::db::{Db, StoredReceipt, Tx, on_tx};
use crate::writer::{AheadStats, Presealed, Writer, preseal};
use crate::{StoreError, StoreOptions, keyfile};

/// When checkpoints are signed and how large a batch may grow.
#[derive(Debug, Clone)]
pub struct LedgerConfig {
    /// Sign a checkpoint once this many receipts are not covered by one.
    pub checkpoint_every: u64,
    /// … or once the last checkpoint is this old and a receipt is not covered.
    pub checkpoint_interval: Duration,
    /// The most receipts committed in one transaction.
    pub max_batch: usize,
}

impl Default for LedgerConfig {
    fn default() -> Self {
        LedgerConfig {
            checkpoint_every: 1000,
            checkpoint_interval: Duration::from_secs(10),
            max_batch: 1024,
        }
    }
}

/// One receipt to record, with the action payload kept beside it for replay.
#[derive(Debug, Clone)]
pub struct AppendRequest {
    pub receipt: NewReceipt,
    /// The canonical JSON of the action (command or tool call) whose hash the receipt carries.
    pub payload: Option<String>,
}

/// The interface the rest of airlock uses, whichever backend is underneath.
pub trait LedgerStore {
    /// Records one receipt; returns once it is durable. The same request id returns the receipt
    /// already recorded and writes nothing.
    fn append(
        &self,
        req: AppendRequest,
    ) -> impl Future<Output = Result<Receipt, StoreError>> + Send;
    /// Signs a checkpoint covering every receipt so far (if any is uncovered).
    fn checkpoint(&self) -> impl Future<Output = Result<Option<Checkpoint>, StoreError>> + Send;
    fn receipt(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<StoredReceipt>, StoreError>> + Send;
    fn receipts(
        &self,
        from_leaf: u64,
        limit: u64,
    ) -> impl Future<Output = Result<Vec<StoredReceipt>, StoreError>> + Send;
    fn checkpoints(&self) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;
    fn registry_events(&self) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;
}

enum Cmd {
    Append(
        Box<AppendRequest>,
        oneshot::Sender<Result<Receipt, StoreError>>,
    ),
    Checkpoint(oneshot::Sender<Result<Option<Checkpoint>, StoreError>>),
}

pub struct Ledger {
    db: Db,
    tx: mpsc::Sender<Cmd>,
    task: JoinHandle<()>,
    ahead: std::sync::Arc<AheadStats>,
    key_id: String,
    anchor: String,
    data_dir: PathBuf,
    witness_dir: PathBuf,
}

impl Ledger {
    /// Opens the store the options name, creating the data directory, keys and registry the
    /// first time.
    pub async fn open(opts: &StoreOptions, config: LedgerConfig) -> Result<Ledger, StoreError> {
        keyfile::create_private_dir(&opts.data_dir)?;
        let db = Db::open(opts).await?;
        finish_rotation(&db, &opts.data_dir).await?;
        let (key, _) = keyfile::load_or_create(&opts.data_dir, keyfile::LEDGER)?;
        let anchor = ensure_registry(&db, &opts.data_dir, &key).await?;
        let key_id = key.id().to_string();
        let ahead = std::sync::Arc::new(AheadStats::default());
        let writer = Writer {
            db: db.clone(),
            key: std::sync::Arc::new(key),
            log: None,
            config: config.clone(),
            known: Default::default(),
            ahead: ahead.clone(),
            witness: Some(opts.witness()),
            unwitnessed: None,
        };
        let (tx, rx) = mpsc::channel(config.max_batch.max(1) * 4);
        let task = tokio::spawn(run_writer(writer, rx, config));
        Ok(Ledger {
            db,
            tx,
            task,
            ahead,
            key_id,
            anchor,
            data_dir: opts.data_dir.clone(),
            witness_dir: opts.witness(),
        })
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// The first admin key of the registry: the trust anchor.
    pub fn anchor(&self) -> &str {
        &self.anchor
    }

    pub fn data_dir(&self) -> &std::path::Path {
        &self.data_dir
    }

    /// Where this ledger's writer witnesses its tree heads (`witness`).
    pub fn witness_dir(&self) -> &std::path::Path {
        &self.witness_dir
    }

    /// Batches committed with receipts sealed while the batch before them committed, and batches
    /// whose receipts sealed ahead were dropped (sealed again) because the database had moved.
    pub fn sealed_ahead(&self) -> (u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        (
            self.ahead.used.load(Relaxed),
            self.ahead.dropped.load(Relaxed),
        )
    }

    /// Stops the writer after the queued appends and closes the pool.
    pub async fn close(self) {
        drop(self.tx);
        let _ = self.task.await;
        self.db.close().await;
    }
}

impl LedgerStore for Ledger {
    async fn append(&self, req: AppendRequest) -> Result<Receipt, StoreError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Cmd::Append(Box::new(req), reply))
            .await
            .map_err(|_| StoreError::Closed)?;
        rx.await.map_err(|_| StoreError::Closed)?
    }

    async fn checkpoint(&self) -> Result<Option<Checkpoint>, StoreError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Cmd::Checkpoint(reply))
            .await
            .map_err(|_| StoreError::Closed)?;
        rx.await.map_err(|_| StoreError::Closed)?
    }

    async fn receipt(&self, id: &str) -> Result<Option<StoredReceipt>, StoreError> {
        self.db.receipt_by_id(id).await
    }

    async fn receipts(&self, from_leaf: u64, limit: u64) -> Result<Vec<StoredReceipt>, StoreError> {
        self.db.receipts(from_leaf, limit).await
    }

    async fn checkpoints(&self) -> Result<Vec<String>, StoreError> {
        self.db.checkpoints().await
    }

    async fn registry_events(&self) -> Result<Vec<String>, StoreError> {
        self.db.registry_events().await
    }
}

/// Requests taken off the queue together.
#[derive(Default)]
struct Batch {
    appends: Vec<AppendRequest>,
    replies: Vec<oneshot::Sender<Result<Receipt, StoreError>>>,
    checkpoints: Vec<oneshot::Sender<Result<Option<Checkpoint>, StoreError>>>,
}

impl Batch {
    fn add(&mut self, c: Cmd) {
        match c {
            Cmd::Append(r, reply) => {
                self.appends.push(*r);
                self.replies.push(reply);
            }
            Cmd::Checkpoint(reply) => self.checkpoints.push(reply),
        }
    }

    /// Adds whatever is queued now, up to the batch limit.
    fn drain(&mut self, rx: &mut mpsc::Receiver<Cmd>, max: usize) {
        while self.appends.len() < max {
            match rx.try_recv() {
                Ok(c) => self.add(c),
                Err(_) => break,
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.appends.is_empty() && self.checkpoints.is_empty()
    }
}

async fn run_writer(mut w: Writer, mut rx: mpsc::Receiver<Cmd>, config: LedgerConfig) {
    let mut tick =
        tokio::time::interval(config.checkpoint_interval.max(Duration::from_millis(100)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let max = config.max_batch.max(1);
    // The batch that was queued while the previous one committed, and its receipts if they
    // could be sealed in the meantime.
    let mut carried: Option<(Batch, Option<Presealed>)> = None;
    loop {
        let (batch, pre) = match carried.take() {
            Some(c) => c,
            None => {
                let first = tokio::select! {
                    c = rx.recv() => match c { Some(c) => c, None => break },
                    _ = tick.tick() => {
                        // A periodic checkpoint; a failure here is retried at the next tick
                        // and surfaces to the next append.
                        let _ = w.checkpoint(false).await;
                        continue;
                    }
                };
                let mut b = Batch::default();
                b.add(first);
                b.drain(&mut rx, max);
                (b, None)
            }
        };
        let Batch {
            appends,
            replies,
            checkpoints,
        } = batch;
        if !appends.is_empty() {
            match w.stage(&appends, pre).await {
                Ok(staged) => {
                    // Seal what queued up meanwhile while this batch waits for the disk.
                    let mut next = Batch::default();
                    next.drain(&mut rx, max);
                    let ahead = w.basis(&staged, &next.appends).map(|basis| {
                        let reqs = std::sync::Arc::new(std::mem::take(&mut next.appends));
                        let shared = reqs.clone();
                        let task =
                            tokio::task::spawn_blocking(move || preseal(basis, shared.as_slice()));
                        (reqs, task)
                    });
                    let committed = w.commit(staged).await;
                    answer(replies, committed);
                    let mut sealed = None;
                    if let Some((reqs, task)) = ahead {
                        // A sealing task that failed only loses its work: the requests are
                        // sealed again in their transaction. Its reference to them is gone once
                        // it has ended, so this takes them back without a copy.
                        sealed = task.await.ok().flatten();
                        next.appends = std::sync::Arc::unwrap_or_clone(reqs);
                    }
                    if !next.is_empty() {
                        carried = Some((next, sealed));
                    }
                }
                Err(e) => answer(replies, Err(e)),
            }
        }
        for reply in checkpoints {
            let _ = reply.send(w.checkpoint(true).await);
        }
    }
}

/// Answers each caller of a batch: its own result, or the batch's error.
fn answer(
    replies: Vec<oneshot::Sender<Result<Receipt, StoreError>>>,
    results: Result<Vec<Result<Receipt, StoreError>>, StoreError>,
) {
    match results {
        Ok(results) => {
            for (reply, r) in replies.into_iter().zip(results) {
                let _ = reply.send(r);
            }
        }
        Err(e) => {
            let msg = e.to_string();
            for reply in replies {
                let _ = reply.send(Err(StoreError::Config(format!("append failed: {msg}"))));
            }
        }
    }
}

/// A rotation commits its registry event before it swaps `ledger.key.new` in; a process that
/// died between the two leaves the staged key behind. If the registry knows the staged key,
/// finish the swap; otherwise the rotation never committed and the staged key is dropped.
async fn finish_rotation(db: &Db, data_dir: &std::path::Path) -> Result<(), StoreError> {
    let staged_name = format!("{}.new", keyfile::LEDGER);
    let Some(staged) = keyfile::load(data_dir, &staged_name)? else {
        return Ok(());
    };
    let dir = keyfile::keys_dir(data_dir);
    let known = db
        .registry_events()
        .await?
        .iter()
        .filter_map(|e| RegistryEvent::parse(e.as_bytes()).ok())
        .any(|e| matches!(&e.change, KeyChange::Rotated { new_key_id, .. } if new_key_id == staged.id()));
    if known {
        std::fs::rename(dir.join(&staged_name), dir.join(keyfile::LEDGER))
            .map_err(|e| StoreError::io(&dir, e))?;
    } else {
        std::fs::remove_file(dir.join(&staged_name)).map_err(|e| StoreError::io(&dir, e))?;
    }
    Ok(())
}

/// Makes sure the registry exists and holds this node's ledger key, in force now. The first
/// open writes the genesis (a new admin key adding itself) and adds the ledger key.
async fn ensure_registry(
    db: &Db,
    data_dir: &std::path::Path,
    key: &LedgerKey,
) -> Result<String, StoreError> {
    let mut tx = db.begin_write().await?;
    // Take the ledger lock so two nodes opening together do not both write a genesis.
    on_tx!(&mut tx, c => {
        sqlx::query("UPDATE ledger_state SET writes = writes + 1 WHERE id = 1").execute(&mut *c).await?;
    });
    let events = db.registry_events().await?;
    let mut parsed = Vec::with_capacity(events.len());
    for e in &events {
        parsed.push(RegistryEvent::parse(e.as_bytes())?);
    }
    let mut reg = Registry::replay(parsed)?;
    let now = time::now();
    let mut new_events = Vec::new();
    if reg.is_empty() {
        let (admin, _) = keyfile::load_or_create(data_dir, keyfile::ADMIN)?;
        let (r, genesis) = Registry::genesis(&admin, now.clone())?;
        reg = r;
        new_events.push(genesis);
        new_events.push(reg.add_key(key, KeyRole::Ledger, &admin, now.clone())?);
    } else if reg.key(key.id()).is_none() {
        let admin = keyfile::load(data_dir, keyfile::ADMIN)?.ok_or_else(|| {
            StoreError::Config(format!(
                "this node's ledger key {} is not in the trust registry and {} holds no admin key to add it: \
                 copy the admin key there, or start from the data directory that created the ledger",
                key.id(),
                keyfile::keys_dir(data_dir).display()
            ))
        })?;
        new_events.push(reg.add_key(key, KeyRole::Ledger, &admin, now.clone())?);
    }
    reg.key_valid_at(key.id(), KeyRole::Ledger, &now)
        .map_err(|d| {
            StoreError::Config(format!(
                "the ledger key cannot sign: {d}; rotate it with the admin key"
            ))
        })?;
    insert_events(&mut tx, &new_events).await?;
    tx.commit().await?;
    Ok(reg.anchor().unwrap_or_default().to_string())
}

async fn insert_events(tx: &mut Tx, events: &[RegistryEvent]) -> Result<(), StoreError> {
    for e in events {
        let body = String::from_utf8(e.canonical_bytes()?)
            .map_err(|x| StoreError::Config(x.to_string()))?;
        on_tx!(tx, c => {
            sqlx::query("INSERT INTO registry_events (seq, body) VALUES ($1, $2)")
                .bind(i64::try_from(e.seq).unwrap_or(i64::MAX))
                .bind(body)
                .execute(&mut *c)
                .await?;
        });
    }
    Ok(())
}

/// Rotates this data directory's ledger key: a new key replaces the old one in the registry
/// (signed by the old key) and in `keys/ledger.key`. The ledger must not be open elsewhere.
pub async fn rotate_ledger_key(opts: &StoreOptions) -> Result<RegistryEvent, StoreError> {
    let db = Db::open(opts).await?;
    let old = keyfile::load(&opts.data_dir, keyfile::LEDGER)?
        .ok_or_else(|| StoreError::Config("no ledger key to rotate".into()))?;
    let new = LedgerKey::generate()?;
    let mut tx = db.begin_write().await?;
    on_tx!(&mut tx, c => {
        sqlx::query("UPDATE ledger_state SET writes = writes + 1 WHERE id = 1").execute(&mut *c).await?;
    });
    let mut parsed = Vec::new();
    for e in db.registry_events().await? {
        parsed.push(RegistryEvent::parse(e.as_bytes())?);
    }
    let mut reg = Registry::replay(parsed)?;
    let ev = reg.append(
        KeyChange::Rotated {
            key_id: old.id().into(),
            new_key_id: new.id().into(),
            new_public_key: new.public_hex(),
        },
        &old,
        time::now(),
    )?;
    insert_events(&mut tx, std::slice::from_ref(&ev)).await?;
    // Write the new key beside the old one before committing, then swap it in.
    let dir = keyfile::keys_dir(&opts.data_dir);
    let staged = format!("{}.new", keyfile::LEDGER);
    let _ = std::fs::remove_file(dir.join(&staged));
    keyfile::save(&opts.data_dir, &staged, &new)?;
    tx.commit().await?;
    std::fs::rename(dir.join(&staged), dir.join(keyfile::LEDGER))
        .map_err(|e| StoreError::io(&dir, e))?;
    db.close().await;
    Ok(ev)
}
