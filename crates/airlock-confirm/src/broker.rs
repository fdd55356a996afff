//! The [`Broker`] handle: start-up (recovery, the deadline sweeper, the PostgreSQL listener),
//! read access to approvals and outcomes, events, metrics and shutdown. Deciding lives in
//! `submit.rs`, the LLM factor in `route.rs`, answers in `answer.rs`, transitions and receipts in
//! `settle.rs`, long-polling in `wait.rs`.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use airlock_core::{Decision, Finding, ReasonCode, Severity, Tier};
use airlock_grants::GrantBook;
use airlock_ledger::receipt::receipt_id;
use airlock_ledger::{Receipt, canonical};
use airlock_store::{Db, Ledger, LedgerStore};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use crate::config::{BrokerConfig, PolicyProvider};
use crate::llm::Reviewer;
use crate::metrics::{Counters, Metrics};
use crate::model::{Approval, ApprovalEvent, Outcome};
use crate::notify::Hub;
use crate::view::{approval_of, immediate, outcome_of};
use crate::webhook::Webhook;
use crate::{ConfirmError, receipt};

/// The most LLM reviews in flight per broker; more wait their turn.
const MAX_REVIEWS: usize = 16;

/// The approval broker. Cheap to clone; every clone is the same broker.
#[derive(Clone)]
pub struct Broker {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) ledger: Ledger,
    pub(crate) book: GrantBook,
    pub(crate) policy: PolicyProvider,
    pub(crate) config: BrokerConfig,
    pub(crate) hub: Hub,
    pub(crate) counters: Counters,
    pub(crate) llm: Option<Reviewer>,
    pub(crate) webhook: Option<Webhook>,
    /// Bounds the LLM reviews in flight (a flood of asks must not open unbounded requests).
    pub(crate) reviews: tokio::sync::Semaphore,
    /// The store's secret that keys tier-4 codes (`code`).
    pub(crate) code_key: Vec<u8>,
    tasks: Tasks,
}

impl std::fmt::Debug for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Broker")
            .field("node", &self.inner.config.node)
            .field("backend", &self.db().backend())
            .finish()
    }
}

impl Broker {
    /// Runs recovery (final approvals without a receipt get it; pending approvals past their
    /// deadline expire, which denies), starts the deadline sweeper and, on PostgreSQL, the
    /// LISTEN task that wakes this node's waiters for other nodes' decisions.
    pub async fn start(
        ledger: Ledger,
        book: GrantBook,
        policy: PolicyProvider,
        config: BrokerConfig,
    ) -> Result<Broker, ConfirmError> {
        let llm = match &config.llm {
            Some(c) => Some(Reviewer::new(c.clone()).map_err(ConfirmError::Internal)?),
            None => None,
        };
        let webhook = match &config.webhook {
            Some(c) => Some(Webhook::new(c.clone())?),
            None => None,
        };
        let pg = match ledger.db() {
            Db::Pg(p) => Some(p.clone()),
            Db::Sqlite(_) => None,
        };
        let code_key = ledger
            .db()
            .secret_get_or_insert(crate::code::SECRET_NAME, &receipt::random_hex(32)?)
            .await?;
        let code_key = hex::decode(code_key.trim()).map_err(|e| {
            ConfirmError::Internal(format!("the stored deliberate-code secret is not hex: {e}"))
        })?;
        let instance = format!("{}-{}", config.node, receipt::random_hex(6)?);
        let hub = Hub::new(instance, pg.clone());
        let broker = Broker {
            inner: Arc::new(Inner {
                ledger,
                book,
                policy,
                config,
                hub: hub.clone(),
                counters: Counters::default(),
                llm,
                webhook,
                reviews: tokio::sync::Semaphore::new(MAX_REVIEWS),
                code_key,
                tasks: Tasks::default(),
            }),
        };
        let mut tasks = Vec::new();
        if let Some(pool) = pg {
            let (ready, is_ready) = tokio::sync::oneshot::channel();
            tasks.push(tokio::spawn(hub.listen(pool, ready)));
            // Listen before anything can be decided, so no decision of another node is missed.
            let _ = tokio::time::timeout(Duration::from_secs(10), is_ready).await;
        }
        broker.recover().await?;
        tasks.push(tokio::spawn(sweeper(
            Arc::downgrade(&broker.inner),
            broker.inner.config.sweep_every,
        )));
        if let Ok(mut t) = broker.inner.tasks.0.lock() {
            t.extend(tasks);
        }
        Ok(broker)
    }

    /// The code a person types to approve the tier-4 action whose hash is `action_sha256`
    /// (shown to approvers only; the agent cannot compute it).
    pub fn deliberate_code(&self, action_sha256: &str) -> String {
        crate::code::deliberate_code(&self.inner.code_key, action_sha256)
    }

    pub fn ledger(&self) -> &Ledger {
        &self.inner.ledger
    }

    pub fn book(&self) -> &GrantBook {
        &self.inner.book
    }

    pub fn config(&self) -> &BrokerConfig {
        &self.inner.config
    }

    pub(crate) fn db(&self) -> &Db {
        self.inner.ledger.db()
    }

    pub(crate) fn now(&self) -> i64 {
        self.inner.book.now()
    }

    /// Opened and Decided events, local and (PostgreSQL) from other nodes, for SSE.
    pub fn subscribe(&self) -> broadcast::Receiver<ApprovalEvent> {
        self.inner.hub.subscribe()
    }

    pub fn metrics(&self) -> Metrics {
        self.inner.counters.snapshot(&self.inner.config.node)
    }

    /// Open approvals (pending, or approved with a time lock running), oldest first.
    pub async fn pending(&self) -> Result<Vec<Approval>, ConfirmError> {
        let rows = self.db().approval_list_open(1000).await?;
        rows.iter().map(approval_of).collect()
    }

    /// Decided approvals, the most recent first.
    pub async fn history(&self, limit: u32) -> Result<Vec<Approval>, ConfirmError> {
        let rows = self.db().approval_history(i64::from(limit)).await?;
        rows.iter().map(approval_of).collect()
    }

    pub async fn approval(&self, id: &str) -> Result<Approval, ConfirmError> {
        match self.db().approval_get(id).await? {
            Some(r) => approval_of(&r),
            None => Err(ConfirmError::NotFound(id.to_string())),
        }
    }

    /// Where an action stands: an approval's outcome by its id, or an action decided at once
    /// by its request id (read back from its receipt, which records no tier: reported as 0).
    pub async fn outcome(&self, id: &str) -> Result<Outcome, ConfirmError> {
        if let Some(r) = self.db().approval_get(id).await? {
            return self.outcome_of_approval(&approval_of(&r)?).await;
        }
        let Some(stored) = self.inner.ledger.receipt(&receipt_id(id)).await? else {
            return Err(ConfirmError::NotFound(id.to_string()));
        };
        let r: Receipt = serde_json::from_str(&stored.body)
            .map_err(|e| ConfirmError::Internal(format!("receipt of {id} does not read: {e}")))?;
        let reasons = r
            .reasons
            .iter()
            .map(|rr| {
                let code = ReasonCode::parse(&rr.code).unwrap_or(ReasonCode::PolicyRule);
                Finding::new(
                    rr.rule.clone(),
                    code,
                    r.decision,
                    Tier::Safe,
                    Severity::Info,
                    code.summary(),
                )
            })
            .collect();
        let streak = match r.decision {
            Decision::Deny => self.db().denial_streak(&r.session).await?,
            _ => 0,
        };
        Ok(immediate(
            id.to_string(),
            r.decision,
            Tier::Safe,
            reasons,
            Some(r.id),
            streak,
            self.inner.config.denial_streak,
        ))
    }

    pub(crate) async fn outcome_of_approval(&self, a: &Approval) -> Result<Outcome, ConfirmError> {
        let streak = if a.status.is_final() {
            self.db().denial_streak(&a.session).await?
        } else {
            0
        };
        Ok(outcome_of(a, streak, self.inner.config.denial_streak))
    }

    /// Stops the background tasks and, when this is the last handle, closes the ledger after
    /// its queued appends.
    pub async fn shutdown(self) {
        self.inner.tasks.abort();
        let mut inner = self.inner;
        // Reviews in flight hold a handle until they finish (bounded by the LLM timeout).
        for _ in 0..100 {
            match Arc::try_unwrap(inner) {
                Ok(i) => {
                    i.ledger.close().await;
                    return;
                }
                Err(shared) => {
                    inner = shared;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
        tracing::warn!("broker shut down with other handles alive; the ledger stays open");
    }
}

/// The background tasks; aborted when the last broker handle goes.
#[derive(Default)]
struct Tasks(Mutex<Vec<JoinHandle<()>>>);

impl Tasks {
    fn abort(&self) {
        if let Ok(mut t) = self.0.lock() {
            for h in t.drain(..) {
                h.abort();
            }
        }
    }
}

impl Drop for Tasks {
    fn drop(&mut self) {
        self.abort();
    }
}

/// Expires approvals at their deadline and ends time locks, until the broker is gone. Every
/// minute it also records receipts an earlier append failed to record.
async fn sweeper(inner: Weak<Inner>, every: Duration) {
    let every = every.max(Duration::from_millis(10));
    // Receipt repair runs about once a minute.
    let per_minute = u64::try_from(60_000 / every.as_millis().max(1))
        .unwrap_or(1)
        .max(1);
    let mut ticks: u64 = 0;
    loop {
        tokio::time::sleep(every).await;
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let broker = Broker { inner };
        ticks += 1;
        if let Err(e) = broker.sweep(ticks.is_multiple_of(per_minute)).await {
            tracing::warn!(error = %e, "approval sweep failed");
        }
    }
}

/// The hash of an action's canonical form (what answers are bound to).
pub(crate) fn action_sha256(action: &airlock_core::Action) -> Result<String, ConfirmError> {
    Ok(canonical::hash_value(action)?)
}
