//! Routing per tier: an ordered chain of channels (`telegram:ops`, `telegram:admins`, `inbox`,
//! `emergency:sms`). The first step is asked at once; each next one when the steps before it
//! could not deliver (every message failed) or nobody answered within `after` (a share of the
//! tier's time) per step. The first answer anywhere wins and closes every message. When an
//! approval of the tier times out (denied), `on_timeout` notifies the chain's chats again,
//! escalates to a channel (an admin's), or sends an emergency notice. A tier without a route
//! asks every channel at once, and nothing happens on timeout beyond closing the messages.
//!
//! Each channel has a threshold on the approval's risk (0 to 4: its tier; a decision for a
//! person who may be in crisis counts as 4): a channel whose threshold is above the risk is not
//! asked, and the chain moves on as if it were not in it. A channel's own threshold
//! (`telegram:ops`) wins over its platform's (`telegram`); without either it is 0.

use std::collections::BTreeMap;

use airlock_confirm::{Approval, ApprovalStatus};
use airlock_core::Tier;
use airlock_store::ChatMessageRow;

/// What happens when nobody answered a tier's approval in time (it is denied either way).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnTimeout {
    /// A new message (so phones ring again) in the chats that were asked: it was denied.
    Notify,
    /// The notice goes to this channel (e.g. `telegram:admins`).
    Escalate(String),
    /// The notice goes to this emergency channel (`emergency:sms`).
    Emergency(String),
}

/// One tier's route.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub chain: Vec<String>,
    /// The share of the tier's time each step waits for an answer before the next is asked.
    pub after: f64,
    pub on_timeout: Option<OnTimeout>,
}

/// Every tier's route, and the channels' risk thresholds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Routes {
    tiers: BTreeMap<u8, Route>,
    /// `telegram`, `telegram:ops`, … → the lowest risk the channel is asked at.
    thresholds: BTreeMap<String, f64>,
    /// From this many pending approvals of one session in a chat, a summary message answers
    /// them all with one tap (0: never).
    batch_after: usize,
}

/// The risk of approval `a` on the thresholds' scale (0 to 4): its tier, or 4 for a decision
/// for a person who may be in crisis (asked wherever a person can be asked).
pub fn risk(a: &Approval) -> f64 {
    if airlock_confirm::crisis::decides_for_person(&a.reasons) {
        return 4.0;
    }
    f64::from(a.tier.as_u8())
}

impl Routes {
    pub fn new() -> Routes {
        Routes::default()
    }

    /// Sets the route of `tier`; `after` is clamped to (0, 1].
    pub fn with(mut self, tier: Tier, mut route: Route) -> Routes {
        if !(route.after > 0.0 && route.after <= 1.0) {
            route.after = 1.0;
        }
        self.tiers.insert(tier as u8, route);
        self
    }

    /// Sets the risk threshold of `channel` (`telegram:ops`) or of a platform (`telegram`).
    pub fn with_threshold(mut self, channel: &str, threshold: f64) -> Routes {
        self.thresholds.insert(channel.to_string(), threshold);
        self
    }

    /// From `n` pending approvals of one session in a chat (below tier 4, not a decision for a
    /// person in crisis), a summary message offers to approve or deny them all (0: never).
    pub fn with_batch(mut self, n: usize) -> Routes {
        self.batch_after = n;
        self
    }

    pub fn batch_after(&self) -> usize {
        self.batch_after
    }

    /// The lowest risk `channel` is asked at.
    pub fn threshold(&self, channel: &str) -> f64 {
        let platform = channel.split(':').next().unwrap_or(channel);
        self.thresholds
            .get(channel)
            .or_else(|| self.thresholds.get(platform))
            .copied()
            .unwrap_or(0.0)
    }

    /// Whether `channel` is asked about `a` at all (its risk reaches the channel's threshold).
    pub fn asks(&self, a: &Approval, channel: &str) -> bool {
        risk(a) >= self.threshold(channel)
    }

    pub fn route(&self, tier: Tier) -> Option<&Route> {
        self.tiers.get(&(tier as u8))
    }

    /// Every channel any route names.
    pub fn channels(&self) -> impl Iterator<Item = &str> {
        self.tiers.values().flat_map(|r| {
            r.chain
                .iter()
                .map(String::as_str)
                .chain(match &r.on_timeout {
                    Some(OnTimeout::Escalate(c) | OnTimeout::Emergency(c)) => Some(c.as_str()),
                    _ => None,
                })
        })
    }

    /// Whether `channel` is to be asked about `a` at `now`, given every message about `a` so
    /// far (`messages`, all channels).
    pub fn due(&self, a: &Approval, channel: &str, messages: &[ChatMessageRow], now: i64) -> bool {
        if !self.asks(a, channel) {
            return false;
        }
        let Some(r) = self.route(a.tier) else {
            return true;
        };
        // Steps below their threshold are skipped: the chain moves on without waiting.
        let chain: Vec<&String> = r.chain.iter().filter(|c| self.asks(a, c)).collect();
        let Some(k) = chain.iter().position(|c| *c == channel) else {
            return false;
        };
        let span = (a.deadline_ms - a.created_ms).max(0) as f64;
        // Whole milliseconds are precise enough for a step.
        #[allow(clippy::cast_possible_truncation)]
        let step = (span * r.after) as i64;
        for (i, earlier) in chain.iter().take(k).enumerate() {
            let rows: Vec<&ChatMessageRow> =
                messages.iter().filter(|m| &m.channel == *earlier).collect();
            let undeliverable = !rows.is_empty() && rows.iter().all(|m| m.state == "failed");
            let waited = now >= a.created_ms + step * (i as i64 + 1);
            if !(undeliverable || waited) {
                return false;
            }
        }
        true
    }
}

/// How a message about final approval `a` ended: answered here (`approved`, `denied`), or
/// `timed_out`, `cancelled`, or `superseded` by an answer given elsewhere.
pub fn outcome(a: &Approval, row: &ChatMessageRow) -> &'static str {
    let here = row
        .message
        .as_ref()
        .map(|m| format!("{}/chat={}/message={}/", row.channel, row.chat, m));
    let answered_here = matches!(
        (&a.answered_via, &here),
        (Some(via), Some(h)) if via.starts_with(h.as_str())
    );
    match a.status {
        ApprovalStatus::Expired => "timed_out",
        ApprovalStatus::Cancelled => "cancelled",
        ApprovalStatus::Approved | ApprovalStatus::Locked if answered_here => "approved",
        ApprovalStatus::Denied if answered_here => "denied",
        _ => "superseded",
    }
}
