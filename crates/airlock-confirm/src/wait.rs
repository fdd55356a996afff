//! Long-polling an approval: returns when it is decided (a time-locked approval only once it
//! takes effect) or when the caller's timeout passes (still pending). The waiter re-reads the
//! row after every event for its id and at least once a second, so a missed notification
//! cannot hang it, and expires the approval itself at its deadline (the same conditional
//! UPDATE as the sweeper, so it happens once).

use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio::time::{Instant, sleep_until};

use crate::ConfirmError;
use crate::broker::Broker;
use crate::model::Outcome;
use crate::view::approval_of;

/// The slowest re-read while waiting.
const RECHECK: Duration = Duration::from_secs(1);

impl Broker {
    pub async fn wait(&self, id: &str, timeout: Duration) -> Result<Outcome, ConfirmError> {
        let mut events = self.subscribe();
        if self.db().approval_get(id).await?.is_none() {
            // An action decided at once (or an unknown id): nothing to wait for.
            return self.outcome(id).await;
        }
        let end = Instant::now() + timeout;
        loop {
            let mut row = self.row(id).await?;
            if self.settle_due(&row).await? {
                row = self.row(id).await?;
            }
            if row.is_final() {
                if row.receipt.is_none() {
                    // The decider may still be appending; the same request id is one receipt.
                    self.finish(id).await?;
                    row = self.row(id).await?;
                }
                return self.outcome_of_approval(&approval_of(&row)?).await;
            }
            let now = Instant::now();
            if now >= end {
                return self.outcome_of_approval(&approval_of(&row)?).await;
            }
            let due_ms = match row.status.as_str() {
                "locked" => row.effective_ms.unwrap_or(row.deadline_ms),
                _ => row.deadline_ms,
            };
            let until_due = u64::try_from(due_ms.saturating_sub(self.now())).unwrap_or(0);
            let next = end
                .min(now + RECHECK)
                .min(now + Duration::from_millis(until_due));
            loop {
                tokio::select! {
                    ev = events.recv() => match ev {
                        Ok(e) if e.id() == id => break,
                        Ok(_) => continue,
                        Err(RecvError::Lagged(_)) => break,
                        Err(RecvError::Closed) => {
                            sleep_until(next).await;
                            break;
                        }
                    },
                    _ = sleep_until(next) => break,
                }
            }
        }
    }
}
