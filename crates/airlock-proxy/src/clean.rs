//! Clean inbound verdicts, recorded together. A clean verdict changes nothing in a request, so
//! it never waits for the disk: the request goes on and its verdicts are appended in the
//! background. Under load one signed receipt per request is most of the proxy's own work, so
//! the clean verdicts of one agent and session that arrive within a short window
//! (`[proxy.scan] clean_window`, default 20 ms) share a receipt: its `scanned` list holds each
//! text's role and hash, in arrival order. A window of zero gives each request its own receipt.
//! What a crash loses is what was not yet appended, as before, now at most one window more.
//! `flush` appends what is waiting (a stopping daemon calls it after its last request).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use airlock_confirm::Broker;
use tokio::sync::{mpsc, oneshot};

use super::record;

/// A window closes early once this many texts wait (receipts stay small).
const MAX_TEXTS: usize = 128;
/// Queued requests beyond this are recorded one by one, as with no window.
const QUEUE: usize = 4096;

/// The clean texts of one request: role and SHA-256 of each.
pub(crate) struct Clean {
    pub agent: String,
    pub session: String,
    pub texts: Vec<(&'static str, String)>,
}

enum Msg {
    Note(Clean),
    Flush(oneshot::Sender<()>),
}

/// The background recorder of clean verdicts; started on first use (inside the runtime).
pub(crate) struct CleanLog {
    broker: Broker,
    window: Duration,
    failed: Arc<AtomicU64>,
    tx: OnceLock<mpsc::Sender<Msg>>,
}

impl CleanLog {
    pub(crate) fn new(broker: Broker, window: Duration, failed: Arc<AtomicU64>) -> CleanLog {
        CleanLog {
            broker,
            window,
            failed,
            tx: OnceLock::new(),
        }
    }

    /// Records `c` in the background.
    pub(crate) fn note(&self, c: Clean) {
        if self.window.is_zero() {
            self.append_now(vec![c]);
            return;
        }
        let tx = self.tx.get_or_init(|| {
            let (tx, rx) = mpsc::channel(QUEUE);
            tokio::spawn(gather(
                rx,
                self.broker.clone(),
                self.window,
                self.failed.clone(),
            ));
            tx
        });
        match tx.try_send(Msg::Note(c)) {
            Ok(()) => {}
            Err(
                mpsc::error::TrySendError::Full(Msg::Note(c))
                | mpsc::error::TrySendError::Closed(Msg::Note(c)),
            ) => self.append_now(vec![c]),
            // Only notes are sent without waiting.
            Err(_) => {}
        }
    }

    fn append_now(&self, group: Vec<Clean>) {
        tokio::spawn(append(self.broker.clone(), group, self.failed.clone()));
    }

    /// Appends every clean verdict noted so far and waits until they are recorded (or failed).
    pub(crate) async fn flush(&self) {
        let Some(tx) = self.tx.get() else {
            return;
        };
        let (done, wait) = oneshot::channel();
        if tx.send(Msg::Flush(done)).await.is_ok() {
            let _ = wait.await;
        }
    }
}

/// Collects notes for one window from the first, then appends one receipt per agent and
/// session (all at once, so the ledger seals them in the same batch).
async fn gather(
    mut rx: mpsc::Receiver<Msg>,
    broker: Broker,
    window: Duration,
    failed: Arc<AtomicU64>,
) {
    let mut open = true;
    while open {
        let first = match rx.recv().await {
            Some(Msg::Note(c)) => c,
            Some(Msg::Flush(done)) => {
                let _ = done.send(());
                continue;
            }
            None => return,
        };
        let mut groups = Groups::default();
        groups.add(first);
        let mut flushed = Vec::new();
        let deadline = tokio::time::sleep(window);
        tokio::pin!(deadline);
        while groups.texts < MAX_TEXTS && flushed.is_empty() {
            tokio::select! {
                m = rx.recv() => match m {
                    Some(Msg::Note(c)) => groups.add(c),
                    Some(Msg::Flush(done)) => flushed.push(done),
                    None => {
                        open = false;
                        break;
                    }
                },
                () = &mut deadline => break,
            }
        }
        let appends: Vec<_> = groups
            .list
            .into_iter()
            .map(|g| tokio::spawn(append(broker.clone(), g, failed.clone())))
            .collect();
        if !flushed.is_empty() || !open {
            for a in appends {
                let _ = a.await;
            }
        }
        for done in flushed {
            let _ = done.send(());
        }
    }
}

/// Notes grouped by agent and session, in order of first arrival.
#[derive(Default)]
struct Groups {
    list: Vec<Vec<Clean>>,
    index: HashMap<(String, String), usize>,
    texts: usize,
}

impl Groups {
    fn add(&mut self, c: Clean) {
        self.texts += c.texts.len();
        let key = (c.agent.clone(), c.session.clone());
        match self.index.get(&key) {
            Some(&i) => self.list[i].push(c),
            None => {
                self.index.insert(key, self.list.len());
                self.list.push(vec![c]);
            }
        }
    }
}

/// Appends one receipt for notes of the same agent and session.
async fn append(broker: Broker, group: Vec<Clean>, failed: Arc<AtomicU64>) {
    let Some(first) = group.first() else {
        return;
    };
    let (agent, session) = (first.agent.clone(), first.session.clone());
    let texts: Vec<(&str, String)> = group.into_iter().flat_map(|c| c.texts).collect();
    if let Err(e) = record::clean(&broker, &agent, &session, &texts).await {
        failed.fetch_add(1, Ordering::Relaxed);
        tracing::error!(error = %e, agent, "recording clean inbound verdicts");
    }
}
