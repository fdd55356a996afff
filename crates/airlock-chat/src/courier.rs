//! What every channel does with approvals, whatever its platform: post each approval a person
//! is asked about to its chats when the route says it is due (on the broker's events, and in a
//! catch-up pass every `every`, so approvals opened on another node or while it was down, and
//! steps that came due with time, are not missed), close the messages of decided approvals with
//! the outcome and no buttons (whoever decided, wherever), and send the tier's timeout notices;
//! in the catch-up pass, a summary per session with enough approvals waiting (approve or deny
//! them all with one tap), and after an approval that ends a run, the learned grant's offer.
//! A platform supplies only [`Post`]: send a message with buttons, and edit one to its end.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use airlock_confirm::{Approval, ApprovalEvent};
use tokio::sync::{broadcast, watch};

use crate::ChatError;
use crate::desk::Desk;
use crate::route::{OnTimeout, Routes};
use crate::tap::Pick;

/// Rows of buttons: (label, data).
pub type Buttons = [Vec<(String, String)>];

/// A platform's two writes.
pub trait Post: Send + Sync + 'static {
    /// Posts `text` with `buttons` (none for a notice) to `chat`; returns the message's id.
    fn send(
        &self,
        chat: &str,
        text: &str,
        buttons: &Buttons,
    ) -> impl Future<Output = Result<String, ChatError>> + Send;

    /// Replaces message `message` in `chat` with `text` and no buttons.
    fn edit_final(
        &self,
        chat: &str,
        message: &str,
        text: &str,
    ) -> impl Future<Output = Result<(), ChatError>> + Send;
}

pub(crate) struct Courier<P: Post> {
    pub(crate) desk: Desk,
    pub(crate) post: P,
    pub(crate) chats: Vec<String>,
    pub(crate) routes: Routes,
    pub(crate) every: Duration,
    /// How a typed command starts on this platform (`/`, `/airlock `).
    pub(crate) cmd: &'static str,
    /// The longest text the platform takes in one message.
    pub(crate) max_text: usize,
}

/// Waits until this node holds the lease.
async fn until_held(held: &mut watch::Receiver<bool>) -> bool {
    held.wait_for(|h| *h).await.is_ok()
}

impl<P: Post> Courier<P> {
    fn db(&self) -> &airlock_store::Db {
        self.desk.broker.ledger().db()
    }

    /// Closes the messages of `a` when a reply says it is final.
    pub(crate) async fn after(&self, reply: &crate::desk::Reply) {
        if let Some(a) = &reply.decided
            && a.status.is_final()
        {
            self.close(a).await;
            if let Some(o) = &reply.offer {
                self.offer(a, o).await;
            }
        }
        for a in reply.batch.iter().filter(|a| a.status.is_final()) {
            self.close(a).await;
        }
        if let Some((chat, message)) = &reply.summary
            && let Err(e) = self.post.edit_final(chat, message, &reply.text).await
        {
            tracing::warn!(error = %e, "summary message not updated");
        }
    }

    /// In each catch-up pass, so a burst of a session's approvals gets one summary rather than
    /// one per arrival: each session's newest approval that may be answered together, in each
    /// chat (`summarise` posts once per newest approval and chat).
    async fn summaries(&self) {
        if self.routes.batch_after() < 2 {
            return;
        }
        let Ok(pending) = self.desk.broker.pending().await else {
            return;
        };
        // oldest first: the last one kept per session is its newest
        let mut newest = std::collections::BTreeMap::new();
        for a in pending.into_iter().filter(crate::desk::batchable) {
            newest.insert((a.agent.clone(), a.session.clone()), a);
        }
        for a in newest.values() {
            for chat in &self.chats {
                self.summarise(a, chat).await;
            }
        }
    }

    /// When `a`'s session has enough approvals waiting in `chat`, `a` among them, one summary
    /// message answers them all with one tap; an earlier summary of the session in this chat is
    /// replaced (shown so, without buttons).
    async fn summarise(&self, a: &Approval, chat: &str) {
        let n = self.routes.batch_after();
        if n < 2 || !crate::desk::batchable(a) {
            return;
        }
        let members = self.desk.batch_members(a, chat, self.desk.now()).await;
        if members.len() < n || !members.iter().any(|m| m.id == a.id) {
            return;
        }
        let row = match self.desk.claim_notice(a, crate::desk::BATCH, chat).await {
            Ok(Some(r)) => r,
            _ => return,
        };
        let text = crate::text::fit(&crate::text::batch(&members), self.max_text);
        let k = members.len();
        let keyboard = vec![vec![
            (
                format!("✅ Approve all {k}"),
                self.desk.button(chat, &row.nonce, Pick::ApproveAll),
            ),
            (
                format!("❌ Deny all {k}"),
                self.desk.button(chat, &row.nonce, Pick::DenyAll),
            ),
        ]];
        let sent = self.post.send(chat, &text, &keyboard).await;
        self.desk.sent(&row, sent.map(Some)).await;
        // The older summaries of the session here list fewer: replaced by this one.
        let summary_chat = format!("{}:{chat}", crate::desk::BATCH);
        for m in members.iter().filter(|m| m.id != a.id) {
            let Ok(rows) = self.db().chat_messages_of(&m.id).await else {
                continue;
            };
            for r in rows.iter().filter(|r| {
                r.channel == self.desk.channel
                    && r.chat == summary_chat
                    && r.outcome.as_deref() == Some("notice")
            }) {
                let Some(message) = &r.message else { continue };
                if self
                    .post
                    .edit_final(chat, message, "Replaced by a newer summary below.")
                    .await
                    .is_ok()
                {
                    let _ = self
                        .db()
                        .chat_message_move(
                            &r.nonce,
                            "closed",
                            "closed",
                            None,
                            Some("superseded"),
                            self.desk.now(),
                        )
                        .await;
                }
            }
        }
    }

    /// Offers the grant learned from approval `a` in the chat it was approved in: one message
    /// with one button, once per approval and chat.
    async fn offer(&self, a: &Approval, o: &crate::desk::Offer) {
        let row = match self.desk.claim_notice(a, "learn", &o.chat).await {
            Ok(Some(r)) => r,
            _ => return,
        };
        let now = self.desk.now();
        // Rounded: the expiry was set a moment ago.
        let days = ((o.learned.expires_ms - now + 43_200_000) / 86_400_000).max(1);
        let text = crate::text::fit(&crate::text::learn_offer(&o.learned, days), self.max_text);
        let keyboard = vec![vec![(
            format!("✅ Allow for {days} days"),
            self.desk.button(&o.chat, &o.nonce, Pick::Learn),
        )]];
        let sent = self.post.send(&o.chat, &text, &keyboard).await;
        self.desk.sent(&row, sent.map(Some)).await;
    }

    pub(crate) async fn run(
        self: Arc<Self>,
        mut held: watch::Receiver<bool>,
        mut events: broadcast::Receiver<ApprovalEvent>,
    ) {
        loop {
            if !until_held(&mut held).await {
                return;
            }
            self.catch_up().await;
            let tick = tokio::time::sleep(self.every);
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
        self.summaries().await;
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
            OnTimeout::Escalate(to) if to == self.desk.channel => self.chats.clone(),
            _ => return,
        };
        let text = crate::text::timed_out(a);
        for chat in chats {
            let row = match self.desk.claim_notice(a, "timeout", &chat).await {
                Ok(Some(r)) => r,
                _ => continue,
            };
            let sent = self.post.send(&chat, &text, &[]).await;
            self.desk.sent(&row, sent.map(Some)).await;
        }
    }

    /// Posts approval `a` to every configured chat it was not posted to yet.
    pub(crate) async fn deliver(&self, a: &Approval) {
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
        for chat in &self.chats {
            let row = match self.desk.claim(a, chat).await {
                Ok(Some(r)) => r,
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!(error = %e, approval = %a.id, "chat message not claimed");
                    continue;
                }
            };
            let text = crate::text::fit(
                &crate::text::request(a, &row.ref_code, self.desk.now(), self.cmd),
                self.max_text,
            );
            let button =
                |label: &str, pick| (label.to_string(), self.desk.button(chat, &row.nonce, pick));
            let keyboard = if crate::desk::typed_only(a) {
                vec![vec![button("❌ Deny", Pick::Deny)]]
            } else if crate::desk::one_at_a_time(a) {
                vec![vec![
                    button("✅ Approve once", Pick::ApproveOnce),
                    button("❌ Deny", Pick::Deny),
                ]]
            } else {
                vec![
                    vec![
                        button("✅ Approve once", Pick::ApproveOnce),
                        button("✅ For this session", Pick::ApproveSession),
                    ],
                    vec![button("❌ Deny", Pick::Deny)],
                ]
            };
            let sent = self.post.send(chat, &text, &keyboard).await;
            self.desk.sent(&row, sent.map(Some)).await;
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
    pub(crate) async fn close(&self, a: &Approval) {
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
            match self.post.edit_final(&r.chat, message, &body).await {
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
