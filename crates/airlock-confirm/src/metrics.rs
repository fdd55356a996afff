//! Counters for `/metrics`: what was submitted and how it ended, approvals opened, approved and
//! expired, LLM reviews by result, webhook failures, and how often each session asked a person
//! (confirmation fatigue is a security bug, so prompts per session are watched).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

/// The most sessions whose prompt count is kept; beyond it, new sessions count under `other`.
const MAX_SESSIONS: usize = 10_000;

/// A snapshot of the counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Metrics {
    pub node: String,
    pub submitted: u64,
    pub allowed: u64,
    pub denied: u64,
    pub pending_opened: u64,
    pub approved: u64,
    /// Denied by a person or by the LLM reviewer.
    pub approval_denied: u64,
    pub expired: u64,
    pub cancelled: u64,
    /// By result: approve, deny, escalate, timeout, error, unavailable.
    pub llm_reviews: BTreeMap<String, u64>,
    pub webhook_sent: u64,
    pub webhook_failed: u64,
    /// How many times a person was asked, per session.
    pub prompts_per_session: BTreeMap<String, u64>,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub submitted: AtomicU64,
    pub allowed: AtomicU64,
    pub denied: AtomicU64,
    pub pending_opened: AtomicU64,
    pub approved: AtomicU64,
    pub approval_denied: AtomicU64,
    pub expired: AtomicU64,
    pub cancelled: AtomicU64,
    pub webhook_sent: AtomicU64,
    pub webhook_failed: AtomicU64,
    llm: Mutex<BTreeMap<String, u64>>,
    prompts: Mutex<BTreeMap<String, u64>>,
}

pub(crate) fn inc(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

impl Counters {
    pub(crate) fn llm_review(&self, result: &str) {
        if let Ok(mut m) = self.llm.lock() {
            *m.entry(result.to_string()).or_insert(0) += 1;
        }
    }

    pub(crate) fn prompt(&self, session: &str) {
        if let Ok(mut m) = self.prompts.lock() {
            let key = if m.len() >= MAX_SESSIONS && !m.contains_key(session) {
                "other".to_string()
            } else {
                session.to_string()
            };
            *m.entry(key).or_insert(0) += 1;
        }
    }

    pub(crate) fn snapshot(&self, node: &str) -> Metrics {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Metrics {
            node: node.to_string(),
            submitted: get(&self.submitted),
            allowed: get(&self.allowed),
            denied: get(&self.denied),
            pending_opened: get(&self.pending_opened),
            approved: get(&self.approved),
            approval_denied: get(&self.approval_denied),
            expired: get(&self.expired),
            cancelled: get(&self.cancelled),
            llm_reviews: self.llm.lock().map(|m| m.clone()).unwrap_or_default(),
            webhook_sent: get(&self.webhook_sent),
            webhook_failed: get(&self.webhook_failed),
            prompts_per_session: self.prompts.lock().map(|m| m.clone()).unwrap_or_default(),
        }
    }
}

impl Metrics {
    /// The counters in the Prometheus text format (version 0.0.4).
    pub fn to_prometheus(&self) -> String {
        let mut out = String::new();
        let node = escape(&self.node);
        let mut counter = |name: &str, help: &str, v: u64| {
            out.push_str(&format!(
                "# HELP airlock_{name} {help}\n# TYPE airlock_{name} counter\nairlock_{name}{{node=\"{node}\"}} {v}\n"
            ));
        };
        counter(
            "actions_submitted_total",
            "Actions submitted.",
            self.submitted,
        );
        counter(
            "actions_allowed_total",
            "Actions allowed at once.",
            self.allowed,
        );
        counter(
            "actions_denied_total",
            "Actions denied at once.",
            self.denied,
        );
        counter(
            "approvals_opened_total",
            "Approvals opened.",
            self.pending_opened,
        );
        counter(
            "approvals_approved_total",
            "Approvals approved.",
            self.approved,
        );
        counter(
            "approvals_denied_total",
            "Approvals denied by a person or the LLM reviewer.",
            self.approval_denied,
        );
        counter(
            "approvals_expired_total",
            "Approvals nobody answered in time (denied).",
            self.expired,
        );
        counter(
            "approvals_cancelled_total",
            "Approvals cancelled.",
            self.cancelled,
        );
        counter(
            "webhook_sent_total",
            "Webhook deliveries.",
            self.webhook_sent,
        );
        counter(
            "webhook_failed_total",
            "Failed webhook deliveries.",
            self.webhook_failed,
        );
        out.push_str("# HELP airlock_llm_reviews_total LLM reviews by result.\n");
        out.push_str("# TYPE airlock_llm_reviews_total counter\n");
        for (k, v) in &self.llm_reviews {
            out.push_str(&format!(
                "airlock_llm_reviews_total{{node=\"{node}\",result=\"{}\"}} {v}\n",
                escape(k)
            ));
        }
        out.push_str("# HELP airlock_prompts_total Times a person was asked, per session.\n");
        out.push_str("# TYPE airlock_prompts_total counter\n");
        for (k, v) in &self.prompts_per_session {
            out.push_str(&format!(
                "airlock_prompts_total{{node=\"{node}\",session=\"{}\"}} {v}\n",
                escape(k)
            ));
        }
        out
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
