//! The last resort: a notice to phones through an SMS gateway's REST API, as a step of a chain
//! ("nobody answered in chat: look at the inbox") or as a tier's timeout action ("denied:
//! nobody answered"). One JSON POST per recipient, `{"from", "to", "text"}` with a bearer key,
//! the shape most SMS gateways accept (or a small relay in front of one). Each notice is
//! claimed in the store first, so it is sent once however many nodes run.

use std::sync::Arc;
use std::time::Duration;

use airlock_confirm::{Approval, ApprovalEvent, ApprovalStatus, Broker};
use serde_json::json;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use crate::ChatError;
use crate::desk::Desk;
use crate::route::{OnTimeout, Routes};

/// One SMS gateway.
#[derive(Clone)]
pub struct EmergencyConfig {
    /// `emergency:<name>` in routes.
    pub name: String,
    pub url: String,
    /// Sent as `Authorization: Bearer …` when set.
    pub api_key: Option<String>,
    pub from: String,
    pub to: Vec<String>,
    /// Where people answer (the inbox URL), named in the notice.
    pub inbox_url: Option<String>,
    pub every: Duration,
}

impl std::fmt::Debug for EmergencyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmergencyConfig")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("to", &self.to)
            .finish()
    }
}

impl EmergencyConfig {
    pub fn channel(&self) -> String {
        format!("emergency:{}", self.name)
    }
}

/// A running emergency channel.
pub struct Emergency {
    task: JoinHandle<()>,
}

impl Drop for Emergency {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct Runner {
    desk: Desk,
    cfg: EmergencyConfig,
    routes: Routes,
    client: reqwest::Client,
}

impl Emergency {
    pub async fn start(
        broker: Broker,
        cfg: EmergencyConfig,
        routes: Routes,
    ) -> Result<Emergency, ChatError> {
        if cfg.to.is_empty() {
            return Err(ChatError::Config(format!(
                "emergency channel {}: no recipients",
                cfg.name
            )));
        }
        let desk = Desk::new(broker.clone(), cfg.channel(), Default::default()).await?;
        let r = Arc::new(Runner {
            desk,
            client: crate::http::client(Duration::from_secs(10))?,
            cfg,
            routes,
        });
        let events = broker.subscribe();
        Ok(Emergency {
            task: tokio::spawn(r.run(events)),
        })
    }
}

impl Runner {
    async fn run(self: Arc<Self>, mut events: broadcast::Receiver<ApprovalEvent>) {
        loop {
            self.pass().await;
            tokio::select! {
                e = events.recv() => if let Err(broadcast::error::RecvError::Closed) = e { return },
                () = tokio::time::sleep(self.cfg.every) => {}
            }
        }
    }

    /// Sends the chain steps that are due and the timeout notices not sent yet.
    async fn pass(&self) {
        let channel = self.desk.channel.clone();
        let now = self.desk.now();
        if let Ok(pending) = self.desk.broker.pending().await {
            for a in pending.iter().filter(|a| a.asks_person()) {
                let Ok(msgs) = self.desk.broker.ledger().db().chat_messages_of(&a.id).await else {
                    continue;
                };
                if self.routes.route(a.tier).is_some() && self.routes.due(a, &channel, &msgs, now) {
                    self.notify(
                        a,
                        "step",
                        &crate::text::waiting(a, now, self.cfg.inbox_url.as_deref()),
                    )
                    .await;
                }
            }
        }
        if let Ok(recent) = self.desk.broker.history(50).await {
            for a in recent.iter().filter(|a| expired_recently(a, now)) {
                if self
                    .routes
                    .route(a.tier)
                    .and_then(|r| r.on_timeout.as_ref())
                    == Some(&OnTimeout::Emergency(channel.clone()))
                {
                    self.notify(a, "timeout", &crate::text::timed_out(a)).await;
                }
            }
        }
    }

    async fn notify(&self, a: &Approval, kind: &str, text: &str) {
        for to in &self.cfg.to {
            let row = match self.desk.claim_notice(a, kind, to).await {
                Ok(Some(r)) => r,
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!(error = %e, "emergency notice not claimed");
                    continue;
                }
            };
            let result = self.send(to, text).await;
            self.desk.sent(&row, result.map(|()| None)).await;
        }
    }

    async fn send(&self, to: &str, text: &str) -> Result<(), ChatError> {
        let mut req = self.client.post(&self.cfg.url).json(&json!({
            "from": self.cfg.from,
            "to": to,
            "text": text,
        }));
        if let Some(k) = &self.cfg.api_key {
            req = req.bearer_auth(k);
        }
        let resp = req.send().await.map_err(|e| ChatError::Transport {
            platform: "SMS gateway",
            detail: e.to_string(),
        })?;
        if resp.status().is_success() {
            Ok(())
        } else {
            Err(ChatError::Platform {
                platform: "SMS gateway",
                method: "POST".into(),
                status: resp.status().as_u16(),
                description: String::new(),
                retry_after: None,
            })
        }
    }
}

/// Expired within the last ten minutes (older ones are history, not news).
pub(crate) fn expired_recently(a: &Approval, now: i64) -> bool {
    a.status == ApprovalStatus::Expired && a.decided_ms.is_some_and(|d| now - d < 600_000)
}
