//! The Telegram runner: the lease task, the poller (updates → answers) and the courier
//! (approvals → messages, decisions → edited messages). Both stand by while another node holds
//! the bot's lease.

use std::sync::Arc;
use std::time::Duration;

use airlock_confirm::Broker;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::TelegramConfig;
use super::api::{Api, Update};
use crate::ChatError;
use crate::courier::Courier;
use crate::desk::{Desk, Reply};
use crate::route::Routes;

/// A running Telegram channel; its tasks stop when it is stopped or dropped.
pub struct Telegram {
    tasks: Vec<JoinHandle<()>>,
    held: watch::Receiver<bool>,
}

impl Drop for Telegram {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

struct Runner {
    desk: Desk,
    api: Api,
    cfg: TelegramConfig,
    courier: Arc<Courier<Api>>,
}

impl Telegram {
    /// Starts the channel for `broker`, asking people as `routes` say for each tier.
    pub async fn start(
        broker: Broker,
        cfg: TelegramConfig,
        routes: Routes,
    ) -> Result<Telegram, ChatError> {
        if cfg.chats.is_empty() {
            return Err(ChatError::Config(format!(
                "telegram channel {}: no chats to post requests to",
                cfg.name
            )));
        }
        if cfg.approvers.is_empty() {
            return Err(ChatError::Config(format!(
                "telegram channel {}: no approvers, so nobody could answer",
                cfg.name
            )));
        }
        let api = Api::new(&cfg.base_url, &cfg.token, cfg.poll_timeout)?;
        let desk = Desk::new(broker.clone(), cfg.channel(), cfg.approvers.clone()).await?;
        let holder = format!("{}-{}", broker.config().node, crate::desk::random_hex(6)?);
        let (tx, held) = watch::channel(false);
        let book = broker.book().clone();
        let lease = tokio::spawn(crate::lease::keep(
            broker.ledger().db().clone(),
            cfg.bot_key(),
            holder,
            cfg.lease_ttl,
            move || book.now(),
            tx,
        ));
        let courier = Arc::new(Courier {
            desk: desk.clone(),
            post: api.clone(),
            chats: cfg.chats.clone(),
            routes,
            every: cfg.catch_up_every,
            cmd: "/",
            max_text: 4096,
        });
        let r = Arc::new(Runner {
            desk,
            api,
            cfg,
            courier: courier.clone(),
        });
        // Subscribe before the first catch-up, so nothing opened in between is missed.
        let events = broker.subscribe();
        let poller = tokio::spawn(r.clone().poll(held.clone()));
        let courier = tokio::spawn(courier.run(held.clone(), events));
        Ok(Telegram {
            tasks: vec![lease, poller, courier],
            held,
        })
    }

    /// Whether this node holds the bot (polls and sends) now.
    pub fn is_polling(&self) -> bool {
        *self.held.borrow()
    }

    /// Stops polling and sending; the lease expires for another node to take.
    pub fn stop(self) {}
}

/// Waits until this node holds the lease.
async fn until_held(held: &mut watch::Receiver<bool>) -> bool {
    held.wait_for(|h| *h).await.is_ok()
}

impl Runner {
    fn db(&self) -> &airlock_store::Db {
        self.desk.broker.ledger().db()
    }

    async fn poll(self: Arc<Self>, mut held: watch::Receiver<bool>) {
        let bot = self.cfg.bot_key();
        let mut backoff = Duration::from_millis(200);
        loop {
            if !until_held(&mut held).await {
                return;
            }
            let offset = match self.db().chat_offset_get(&bot).await {
                Ok(o) => o,
                Err(e) => {
                    tracing::warn!(error = %e, "telegram offset not read");
                    tokio::time::sleep(backoff).await;
                    continue;
                }
            };
            match self.api.get_updates(offset, self.cfg.poll_timeout).await {
                Ok(updates) => {
                    backoff = Duration::from_millis(200);
                    let mut next = offset;
                    for u in updates {
                        // Taps of a lease we lost are another node's to handle now.
                        self.update(&u).await;
                        next = Some(next.unwrap_or(0).max(u.update_id + 1));
                        if let Some(n) = next
                            && let Err(e) =
                                self.db().chat_offset_set(&bot, n, self.desk.now()).await
                        {
                            tracing::warn!(error = %e, "telegram offset not stored");
                        }
                    }
                }
                Err(e) => {
                    let wait = match &e {
                        ChatError::Platform {
                            retry_after: Some(s),
                            ..
                        } => Duration::from_secs((*s).min(300)),
                        _ => backoff,
                    };
                    if e.is_conflict() {
                        tracing::warn!(
                            channel = %self.desk.channel,
                            "another program polls this bot token (HTTP 409); backing off"
                        );
                    } else {
                        tracing::warn!(error = %e, channel = %self.desk.channel, "getUpdates failed");
                    }
                    tokio::time::sleep(wait).await;
                    backoff = (backoff * 2).min(Duration::from_secs(30));
                }
            }
        }
    }

    async fn update(&self, u: &Update) {
        if let Some(q) = &u.callback_query {
            let reply = match (&q.message, &q.data) {
                _ if q.from.is_bot => return,
                (Some(m), Some(data)) => {
                    self.desk
                        .tap(
                            &q.from.id.to_string(),
                            &m.chat.id.to_string(),
                            &m.message_id.to_string(),
                            data,
                        )
                        .await
                }
                _ => Reply::say("This request is too old to answer here."),
            };
            if let Err(e) = self.api.answer_callback(&q.id, &reply.text).await {
                tracing::warn!(error = %e, "answerCallbackQuery failed");
            }
            self.courier.after(&reply).await;
        } else if let Some(m) = &u.message
            && let (Some(text), Some(from)) = (&m.text, &m.from)
            && !from.is_bot
            && let Some(t) = crate::command::parse(text)
        {
            let chat = m.chat.id.to_string();
            let reply = self
                .desk
                .typed(&from.id.to_string(), &chat, &m.message_id.to_string(), &t)
                .await;
            if let Err(e) = self.api.reply(&chat, m.message_id, &reply.text).await {
                tracing::warn!(error = %e, "telegram reply failed");
            }
            self.courier.after(&reply).await;
        }
    }
}
