//! Waking waiters: every transition is broadcast in-process, and on PostgreSQL also sent with
//! `NOTIFY airlock_approvals, '<opened|decided>:<id>:<instance>'` after it committed; a listener
//! task re-broadcasts the events of other broker instances (other nodes). Events are hints:
//! waiters re-read the row after each, and periodically, so a missed one cannot hang them.

use std::time::Duration;

use sqlx::PgPool;
use sqlx::postgres::PgListener;
use tokio::sync::broadcast;

use crate::model::ApprovalEvent;

/// The PostgreSQL channel approvals events travel on.
pub const CHANNEL: &str = "airlock_approvals";

/// Publishes events locally and, on PostgreSQL, to the other nodes.
#[derive(Debug, Clone)]
pub(crate) struct Hub {
    tx: broadcast::Sender<ApprovalEvent>,
    /// This broker instance, so its own notifications coming back are not broadcast twice.
    instance: String,
    pg: Option<PgPool>,
}

impl Hub {
    pub(crate) fn new(instance: String, pg: Option<PgPool>) -> Hub {
        let (tx, _) = broadcast::channel(1024);
        Hub { tx, instance, pg }
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<ApprovalEvent> {
        self.tx.subscribe()
    }

    /// Broadcasts `e` here and notifies the other nodes. A failed NOTIFY is logged: the other
    /// nodes' waiters still see the change on their next periodic re-read.
    pub(crate) async fn publish(&self, e: ApprovalEvent) {
        let _ = self.tx.send(e.clone());
        if let Some(pool) = &self.pg {
            let payload = encode(&e, &self.instance);
            if let Err(err) = sqlx::query("SELECT pg_notify($1, $2)")
                .bind(CHANNEL)
                .bind(payload)
                .execute(pool)
                .await
            {
                tracing::warn!(error = %err, "NOTIFY {CHANNEL} failed");
            }
        }
    }

    /// Listens for other nodes' events until the task is aborted; reconnects after errors.
    pub(crate) async fn listen(self, pool: PgPool, ready: tokio::sync::oneshot::Sender<()>) {
        let mut ready = Some(ready);
        loop {
            match PgListener::connect_with(&pool).await {
                Ok(mut l) => {
                    if let Err(err) = l.listen(CHANNEL).await {
                        tracing::warn!(error = %err, "LISTEN {CHANNEL} failed");
                    } else {
                        if let Some(r) = ready.take() {
                            let _ = r.send(());
                        }
                        loop {
                            match l.recv().await {
                                Ok(n) => {
                                    if let Some((e, from)) = decode(n.payload())
                                        && from != self.instance
                                    {
                                        let _ = self.tx.send(e);
                                    }
                                }
                                Err(err) => {
                                    tracing::warn!(error = %err, "LISTEN {CHANNEL} lost");
                                    break;
                                }
                            }
                        }
                    }
                }
                Err(err) => tracing::warn!(error = %err, "cannot connect to LISTEN {CHANNEL}"),
            }
            if let Some(r) = ready.take() {
                // Start-up must not hang on a listener that cannot connect.
                let _ = r.send(());
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

fn encode(e: &ApprovalEvent, instance: &str) -> String {
    match e {
        ApprovalEvent::Opened(id) => format!("opened:{id}:{instance}"),
        ApprovalEvent::Decided(id) => format!("decided:{id}:{instance}"),
    }
}

fn decode(payload: &str) -> Option<(ApprovalEvent, &str)> {
    let (kind, rest) = payload.split_once(':')?;
    let (id, instance) = rest.rsplit_once(':')?;
    let e = match kind {
        "opened" => ApprovalEvent::Opened(id.to_string()),
        "decided" => ApprovalEvent::Decided(id.to_string()),
        _ => return None,
    };
    Some((e, instance))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_round_trip() {
        let e = ApprovalEvent::Decided("apr-1".into());
        let p = encode(&e, "n1-ab");
        assert_eq!(p, "decided:apr-1:n1-ab");
        assert_eq!(decode(&p), Some((e, "n1-ab")));
        assert_eq!(decode("bogus"), None);
        assert_eq!(decode("closed:x:y"), None);
    }
}
