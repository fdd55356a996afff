//! One poller per bot token across the nodes of one store: a lease row (`chat_leases`) taken
//! when free or expired and renewed by its holder every third of its time. A node that dies
//! stops renewing, and another takes over once the lease expires. While a node does not hold
//! the lease it neither polls nor sends, so two nodes never fight over a token (Telegram answers
//! a second `getUpdates` with HTTP 409).

use std::time::Duration;

use airlock_store::Db;
use tokio::sync::watch;

/// Keeps trying to hold lease `name` for `holder`, publishing whether it holds it, until every
/// receiver is gone. Releases it on the way out.
pub(crate) async fn keep(
    db: Db,
    name: String,
    holder: String,
    ttl: Duration,
    now: impl Fn() -> i64 + Send,
    held: watch::Sender<bool>,
) {
    let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
    let every = (ttl / 3).max(Duration::from_millis(20));
    loop {
        let mine = match db.chat_lease_take(&name, &holder, now(), ttl_ms).await {
            Ok(m) => m,
            Err(e) => {
                // Without the store nobody can prove they hold it: stand by.
                tracing::warn!(error = %e, lease = %name, "lease not renewed");
                false
            }
        };
        if *held.borrow() != mine {
            tracing::info!(lease = %name, holder = %holder, mine, "chat poller lease changed");
        }
        held.send_replace(mine);
        if held.is_closed() {
            let _ = db.chat_lease_release(&name, &holder).await;
            return;
        }
        tokio::time::sleep(every).await;
    }
}
