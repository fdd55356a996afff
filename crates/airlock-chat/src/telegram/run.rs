//! The Telegram runner: the lease task, the poller (updates → answers) and the courier
//! (approvals → messages, decisions → edited messages). Both stand by while another node holds
//! the bot's lease.

use std::sync::Arc;
use std::time::Duration;

use airlock_confirm::{Approval, ApprovalEvent, Broker};
use tokio::sync::{broadcast, watch};
use tokio::task::JoinHandle;

use super::TelegramConfig;
use super::api::{Api, Update};
use crate::ChatError;
use crate::desk::{Desk, Reply};
use crate::route::{OnTimeout, Routes};
use crate::tap::Pick;

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
    routes: Routes,
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
        let r = Arc::new(Runner {
            desk,
            api,
            cfg,
            routes,
        });
        // Subscribe before the first catch-up, so nothing opened in between is missed.
        let events = broker.subscribe();
        let poller = tokio::spawn(r.clone().poll(held.clone()));
        let courier = tokio::spawn(r.courier(held.clone(), events));
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
                _ => Reply {
                    text: "This request is too old to answer here.".into(),
                    decided: None,
                },
            };
            if let Err(e) = self.api.answer_callback(&q.id, &reply.text).await {
                tracing::warn!(error = %e, "answerCallbackQuery failed");
            }
            self.after(&reply).await;
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
            self.after(&reply).await;
        }
    }

    async fn after(&self, reply: &Reply) {
        if let Some(a) = &reply.decided
            && a.status.is_final()
        {
            self.close(a).await;
        }
    }

    async fn courier(
        self: Arc<Self>,
        mut held: watch::Receiver<bool>,
        mut events: broadcast::Receiver<ApprovalEvent>,
    ) {
        loop {
            if !until_held(&mut held).await {
                return;
            }
            self.catch_up().await;
            let tick = tokio::time::sleep(self.cfg.catch_up_every);
            tokio::pin!(tick);
            loop {
                tokio::select! {
                    e = events.recv() => match e {
                        Ok(ApprovalEvent::Opened(id)) => self.opened(&id).await,
                        Ok(ApprovalEvent::Decided(id)) => {
                            if let Ok(a) = self.desk.broker.approval(&id).await
                                && a.status.is_final()
                            {
                                self.close(&a).await;
                                self.on_timeout(&a).await;
                            }
                        }
                        Err(broadcast::error::RecvError::Lagged(_)) => break,
                        Err(broadcast::error::RecvError::Closed) => return,
                    },
                    () = &mut tick => break,
                    r = held.changed() => {
                        if r.is_err() {
                            return;
                        }
                        if !*held.borrow() {
                            break;
                        }
                    }
                }
            }
        }
    }

    async fn opened(&self, id: &str) {
        match self.desk.broker.approval(id).await {
            Ok(a) if a.asks_person() => self.deliver(&a).await,
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, approval = id, "approval not read"),
        }
    }

    /// Sends what is pending and closes what was decided, in case events were missed (start,
    /// another node's approvals, a lagging broadcast).
    async fn catch_up(&self) {
        match self.desk.broker.pending().await {
            Ok(list) => {
                for a in list.iter().filter(|a| a.asks_person()) {
                    self.deliver(a).await;
                }
            }
            Err(e) => tracing::warn!(error = %e, "pending approvals not read"),
        }
        match self.db().chat_messages_open(&self.desk.channel).await {
            Ok(rows) => {
                for r in rows {
                    if let Ok(a) = self.desk.broker.approval(&r.approval).await
                        && a.status.is_final()
                    {
                        self.close(&a).await;
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "open chat messages not read"),
        }
        if let Ok(recent) = self.desk.broker.history(50).await {
            for a in recent
                .iter()
                .filter(|a| crate::emergency::expired_recently(a, self.desk.now()))
            {
                self.on_timeout(a).await;
            }
        }
    }

    /// The tier's timeout action, if it is this channel's: a new message in the chats that
    /// were asked (notify), or to this channel's chats (escalate to it). Once per chat.
    async fn on_timeout(&self, a: &Approval) {
        if a.status != airlock_confirm::ApprovalStatus::Expired {
            return;
        }
        let Some(action) = self.routes.route(a.tier).and_then(|r| r.on_timeout.clone()) else {
            return;
        };
        let chats: Vec<String> = match action {
            OnTimeout::Notify => match self.db().chat_messages_of(&a.id).await {
                Ok(rows) => rows
                    .into_iter()
                    .filter(|r| {
                        r.channel == self.desk.channel
                            && r.message.is_some()
                            && !r.ref_code.is_empty()
                    })
                    .map(|r| r.chat)
                    .collect(),
                Err(_) => return,
            },
            OnTimeout::Escalate(to) if to == self.desk.channel => self.cfg.chats.clone(),
            _ => return,
        };
        let text = crate::text::timed_out(a);
        for chat in chats {
            let row = match self.desk.claim_notice(a, "timeout", &chat).await {
                Ok(Some(r)) => r,
                _ => continue,
            };
            let sent = self.api.send_message(&chat, &text, &[]).await;
            self.desk
                .sent(&row, sent.map(|m| Some(m.message_id.to_string())))
                .await;
        }
    }

    /// Posts approval `a` to every configured chat it was not posted to yet.
    async fn deliver(&self, a: &Approval) {
        let earlier = match self.db().chat_messages_of(&a.id).await {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(error = %e, approval = %a.id, "chat messages not read");
                return;
            }
        };
        if !self
            .routes
            .due(a, &self.desk.channel, &earlier, self.desk.now())
        {
            return;
        }
        for chat in &self.cfg.chats {
            let row = match self.desk.claim(a, chat).await {
                Ok(Some(r)) => r,
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!(error = %e, approval = %a.id, "chat message not claimed");
                    continue;
                }
            };
            let text = crate::text::request(a, &row.ref_code, self.desk.now());
            let button =
                |label: &str, pick| (label.to_string(), self.desk.button(chat, &row.nonce, pick));
            let keyboard = if crate::desk::typed_only(a) {
                vec![vec![button("❌ Deny", Pick::Deny)]]
            } else {
                vec![
                    vec![
                        button("✅ Approve once", Pick::ApproveOnce),
                        button("✅ For this session", Pick::ApproveSession),
                    ],
                    vec![button("❌ Deny", Pick::Deny)],
                ]
            };
            let sent = self.api.send_message(chat, &text, &keyboard).await;
            self.desk
                .sent(&row, sent.map(|m| Some(m.message_id.to_string())))
                .await;
        }
        // Decided while it was being sent: show it at once.
        if let Ok(now) = self.desk.broker.approval(&a.id).await
            && now.status.is_final()
        {
            self.close(&now).await;
        }
    }

    /// Shows the outcome of final approval `a` on each of its open messages here, without
    /// buttons. A message whose edit fails stays open, and the next catch-up tries again.
    async fn close(&self, a: &Approval) {
        let rows = match self.db().chat_messages_of(&a.id).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, approval = %a.id, "chat messages not read");
                return;
            }
        };
        let text = crate::text::outcome(a);
        for r in rows
            .iter()
            .filter(|r| r.channel == self.desk.channel && r.state == "sent")
        {
            let Some(message) = &r.message else { continue };
            let body = format!("{}\n\n{}", crate::text::action_line(&a.action), text);
            match self.api.edit_final(&r.chat, message, &body).await {
                Ok(()) => {
                    let outcome = crate::route::outcome(a, r);
                    let _ = self
                        .db()
                        .chat_message_move(
                            &r.nonce,
                            "sent",
                            "closed",
                            None,
                            Some(outcome),
                            self.desk.now(),
                        )
                        .await;
                }
                Err(e) => {
                    tracing::warn!(error = %e, approval = %a.id, "telegram message not updated")
                }
            }
        }
    }
}
