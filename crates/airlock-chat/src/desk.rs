//! What every chat channel shares: who may answer (the allow-list mapping platform user ids to
//! airlock approver names), the message claimed once per (channel, approval, chat) with its
//! nonce and code, and turning a verified tap or a typed command into `Broker::answer`, so the
//! once-only, bound-to-the-action and tier-4 rules hold for chat as for the inbox. Refusals
//! before the broker (a stranger, a forged button, an unknown code) are recorded in the store
//! and as receipts naming the channel, the platform user and the approval. After a person's
//! approval that ends a run of the same kind, the reply carries the learned grant to offer.

use std::collections::BTreeMap;

use airlock_confirm::{
    Answer, AnswerScope, Approval, ApprovalStatus, Broker, Choice, ConfirmError, Event, Learned,
    Principal, Role,
};
use airlock_store::{ChatMessageRow, ChatRefusal};

use crate::ChatError;
use crate::command::Typed;
use crate::tap::{self, Pick};

/// The store secret that keys the buttons' MACs (shared by every node of one store).
const TAP_SECRET: &str = "chat.tap";

/// Letters for codes below tier 4 (no look-alikes, as the tier-4 code).
const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/// One channel's approvers and keys.
#[derive(Clone)]
pub struct Desk {
    pub broker: Broker,
    /// `telegram:<name>`: how the store and receipts name the channel.
    pub channel: String,
    key: Vec<u8>,
    /// Platform user id → airlock approver name.
    approvers: BTreeMap<String, String>,
}

/// What to tell the person who answered, and the approval to show as decided, if it is.
#[derive(Debug, Clone)]
pub struct Reply {
    pub text: String,
    /// Set when the approval is final: every message about it shows the outcome.
    pub decided: Option<Approval>,
    /// A learned grant to offer in the chat the answer came from.
    pub offer: Option<Offer>,
    /// A summary's answer: the approvals it decided (each shown as decided), and the summary
    /// message (chat, message id) to show the result on.
    pub batch: Vec<Approval>,
    pub summary: Option<(String, String)>,
}

/// A learned grant offered with one button, on the request message's nonce.
#[derive(Debug, Clone)]
pub struct Offer {
    pub chat: String,
    pub nonce: String,
    pub learned: Learned,
}

impl Reply {
    pub fn say(text: impl Into<String>) -> Reply {
        Reply {
            text: text.into(),
            decided: None,
            offer: None,
            batch: Vec::new(),
            summary: None,
        }
    }
}

impl Desk {
    pub async fn new(
        broker: Broker,
        channel: String,
        approvers: BTreeMap<String, String>,
    ) -> Result<Desk, ChatError> {
        let fresh = random_hex(32)?;
        let key = broker
            .ledger()
            .db()
            .secret_get_or_insert(TAP_SECRET, &fresh)
            .await?;
        let key = hex::decode(key.trim())
            .map_err(|e| ChatError::Config(format!("the stored tap secret is not hex: {e}")))?;
        Ok(Desk {
            broker,
            channel,
            key,
            approvers,
        })
    }

    pub fn now(&self) -> i64 {
        self.broker.book().now()
    }

    /// The airlock approver a platform user is, if any.
    pub fn approver(&self, user: &str) -> Option<&str> {
        self.approvers.get(user).map(String::as_str)
    }

    pub fn button(&self, chat: &str, nonce: &str, pick: Pick) -> String {
        tap::encode(&self.key, &self.channel, chat, nonce, pick)
    }

    /// Claims the message about `a` in `chat`; `None` when it was claimed before (sent, being
    /// sent, or failed), so it goes out once across restarts and nodes.
    pub async fn claim(
        &self,
        a: &Approval,
        chat: &str,
    ) -> Result<Option<ChatMessageRow>, ChatError> {
        let ref_code = if a.code_required {
            self.broker.deliberate_code(&a.action_sha256)
        } else {
            random_code(6)?
        };
        let row = ChatMessageRow {
            channel: self.channel.clone(),
            approval: a.id.clone(),
            chat: chat.to_string(),
            message: None,
            nonce: random_hex(16)?,
            ref_code,
            state: "sending".into(),
            outcome: None,
            created_ms: self.now(),
            closed_ms: None,
        };
        Ok(self
            .broker
            .ledger()
            .db()
            .chat_message_claim(&row)
            .await?
            .then_some(row))
    }

    /// Claims a one-way notice about `a` (`kind`: `timeout`, `step`) to `to`; `None` when it
    /// was claimed before.
    pub async fn claim_notice(
        &self,
        a: &Approval,
        kind: &str,
        to: &str,
    ) -> Result<Option<ChatMessageRow>, ChatError> {
        let row = ChatMessageRow {
            channel: self.channel.clone(),
            approval: a.id.clone(),
            chat: format!("{kind}:{to}"),
            message: None,
            nonce: random_hex(16)?,
            // No code: a notice is not answered.
            ref_code: String::new(),
            state: "sending".into(),
            outcome: None,
            created_ms: self.now(),
            closed_ms: None,
        };
        Ok(self
            .broker
            .ledger()
            .db()
            .chat_message_claim(&row)
            .await?
            .then_some(row))
    }

    /// Records how a claimed message went: sent (with its platform id) or undeliverable.
    pub async fn sent(&self, row: &ChatMessageRow, result: Result<Option<String>, ChatError>) {
        let db = self.broker.ledger().db();
        let now = self.now();
        let notice = row.ref_code.is_empty();
        let moved = match &result {
            Ok(id) if notice => {
                db.chat_message_move(
                    &row.nonce,
                    "sending",
                    "closed",
                    id.as_deref(),
                    Some("notice"),
                    now,
                )
                .await
            }
            Ok(id) => {
                db.chat_message_move(&row.nonce, "sending", "sent", id.as_deref(), None, now)
                    .await
            }
            Err(e) => {
                tracing::warn!(error = %e, channel = %self.channel, approval = %row.approval, chat = %row.chat, "not delivered");
                db.chat_message_move(
                    &row.nonce,
                    "sending",
                    "failed",
                    None,
                    Some("undeliverable"),
                    now,
                )
                .await
            }
        };
        if let Err(e) = moved {
            tracing::warn!(error = %e, approval = %row.approval, "message state not recorded");
        }
    }

    async fn refuse(&self, user: &str, chat: &str, approval: Option<&str>, what: &str) {
        tracing::warn!(channel = %self.channel, user, chat, what, "chat answer refused");
        let r = ChatRefusal {
            channel: self.channel.clone(),
            user_id: user.to_string(),
            chat: chat.to_string(),
            approval: approval.map(String::from),
            what: what.to_string(),
            at_ms: self.now(),
        };
        if let Err(e) = self.broker.ledger().db().chat_refusal_insert(&r).await {
            tracing::warn!(error = %e, "chat refusal not recorded");
        }
        let event = Event::ChatRefusal {
            channel: r.channel,
            user: r.user_id,
            chat: r.chat,
            approval: r.approval,
            what: r.what,
        };
        if let Err(e) = self.broker.record_event(&event).await {
            tracing::warn!(error = %e, "chat refusal receipt not recorded");
        }
    }

    /// A button tap by `user` in `chat` on message `message` carrying `data`.
    pub async fn tap(&self, user: &str, chat: &str, message: &str, data: &str) -> Reply {
        let Some(t) = tap::verify(&self.key, &self.channel, chat, data) else {
            self.refuse(user, chat, None, "forged").await;
            return Reply::say("Refused: this is not a valid airlock button.");
        };
        let row = match self
            .broker
            .ledger()
            .db()
            .chat_message_by_nonce(&t.nonce)
            .await
        {
            Ok(Some(r))
                if r.channel == self.channel
                    && (r.chat == chat || r.chat == format!("{BATCH}:{chat}")) =>
            {
                r
            }
            Ok(_) => {
                self.refuse(user, chat, None, "unknown").await;
                return Reply::say("Refused: this button belongs to no request here.");
            }
            Err(e) => return Reply::say(format!("airlock could not read the request: {e}")),
        };
        let Some(name) = self.approver(user).map(String::from) else {
            self.refuse(user, chat, Some(&row.approval), "not_approver")
                .await;
            return Reply::say("Refused: you are not an approver on this channel.");
        };
        let approval = match self.broker.approval(&row.approval).await {
            Ok(a) => a,
            Err(e) => return Reply::say(format!("airlock could not read the request: {e}")),
        };
        let summary = is_summary(&row.chat);
        if summary != matches!(t.pick, Pick::ApproveAll | Pick::DenyAll) {
            // Only a summary carries the all-at-once buttons, and only those.
            self.refuse(user, chat, Some(&row.approval), "forged").await;
            return Reply::say("Refused: this is not a valid airlock button.");
        }
        if summary {
            return self.batch(user, chat, message, &row, t.pick, name).await;
        }
        if t.pick == Pick::Learn {
            return self.learn(user, chat, &row.approval, name).await;
        }
        if t.pick == Pick::ApproveSession && one_at_a_time(&approval) {
            self.refuse(user, chat, Some(&row.approval), "session_button")
                .await;
            return Reply::say("Refused: this action is approved once at a time.");
        }
        if typed_only(&approval) && t.pick != Pick::Deny {
            // No button approves a tier-4 action; a tap claiming to is refused.
            self.refuse(user, chat, Some(&row.approval), "tier4_button")
                .await;
            return Reply::say("Refused: a tier-4 action is approved by typing its code.");
        }
        let via = format!("{}/chat={chat}/message={message}/user={user}", self.channel);
        let answer = Answer {
            by: Principal::new(name, Role::Approver),
            decision: t.pick.choice(),
            scope: t.pick.scope(),
            reason: String::new(),
            code: None,
            action_sha256: Some(approval.action_sha256.clone()),
            via: Some(via),
        };
        let mut reply = self.answer(user, chat, &row.approval, answer).await;
        reply.offer = self.offer(&reply, chat, &row.nonce).await;
        reply
    }

    /// The learned grant to offer after `reply`, if it approved and ends a run.
    async fn offer(&self, reply: &Reply, chat: &str, nonce: &str) -> Option<Offer> {
        let a = reply.decided.as_ref()?;
        match self.broker.learnable(a).await {
            Ok(l) => l.map(|learned| Offer {
                chat: chat.to_string(),
                nonce: nonce.to_string(),
                learned,
            }),
            Err(e) => {
                tracing::warn!(error = %e, approval = %a.id, "learned grant not looked up");
                None
            }
        }
    }

    /// The approvals a summary about `anchor`'s session in `chat`, made at `at_ms`, lists: those
    /// of the session still pending that may be answered together and whose message was sent
    /// to this chat by then, oldest first. What a later tap answers is a part of what the
    /// summary showed, never more.
    pub async fn batch_members(&self, anchor: &Approval, chat: &str, at_ms: i64) -> Vec<Approval> {
        let pending = match self.broker.pending().await {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(error = %e, "pending approvals not read");
                return Vec::new();
            }
        };
        let db = self.broker.ledger().db();
        let mut out = Vec::new();
        for a in pending
            .into_iter()
            .filter(|a| a.agent == anchor.agent && a.session == anchor.session && batchable(a))
        {
            let shown = db.chat_messages_of(&a.id).await.is_ok_and(|rows| {
                rows.iter().any(|r| {
                    r.channel == self.channel
                        && r.chat == chat
                        && r.state == "sent"
                        && r.created_ms <= at_ms
                })
            });
            if shown {
                out.push(a);
            }
        }
        out
    }

    /// A tap on a summary's approve-all or deny-all: each approval it lists that is still
    /// pending is answered on its own through the broker (bound to its action's hash, recorded
    /// as its own receipt), as `name` in `chat`.
    async fn batch(
        &self,
        user: &str,
        chat: &str,
        message: &str,
        row: &ChatMessageRow,
        pick: Pick,
        name: String,
    ) -> Reply {
        if row.outcome.as_deref() == Some("superseded") {
            return Reply::say("This summary was replaced by a newer one: answer there.");
        }
        let anchor = match self.broker.approval(&row.approval).await {
            Ok(a) => a,
            Err(e) => return Reply::say(format!("airlock could not read the request: {e}")),
        };
        let members = self.batch_members(&anchor, chat, row.created_ms).await;
        let via = format!(
            "{}/chat={chat}/message={message}/user={user}/batch",
            self.channel
        );
        let (mut done, mut missed) = (Vec::new(), 0usize);
        for a in &members {
            let answer = Answer {
                by: Principal::new(name.clone(), Role::Approver),
                decision: pick.choice(),
                scope: AnswerScope::Once,
                reason: format!(
                    "answered with {} others of session {} in one tap",
                    members.len() - 1,
                    a.session
                ),
                code: None,
                action_sha256: Some(a.action_sha256.clone()),
                via: Some(via.clone()),
            };
            match self.broker.answer(&a.id, answer).await {
                Ok(decided) => done.push(decided),
                Err(e) => {
                    missed += 1;
                    tracing::info!(error = %e, approval = %a.id, "not answered with its summary");
                }
            }
        }
        let verb = if pick == Pick::ApproveAll {
            "Approved"
        } else {
            "Denied"
        };
        let mut text = format!("{verb} {} by {name}", done.len());
        if missed > 0 {
            text.push_str(&format!("; {missed} were decided meanwhile"));
        }
        if done.is_empty() && missed == 0 {
            text = "Nothing left to answer: every request here was decided.".into();
        }
        Reply {
            batch: done,
            summary: Some((chat.to_string(), message.to_string())),
            ..Reply::say(text)
        }
    }

    /// `user` (approver `name`) accepts the grant learned from approval `id`.
    async fn learn(&self, user: &str, chat: &str, id: &str, name: String) -> Reply {
        let by = Principal::new(name, Role::Approver);
        match self.broker.accept_learned(id, &by).await {
            Ok(g) => Reply::say(format!(
                "Granted ({}): {} for {} until {} UTC, without asking.",
                g.id,
                g.scope.describe(),
                g.subject.agent,
                crate::text::when(g.expires_at)
            )),
            Err(e) => {
                self.refuse(user, chat, Some(id), e.code()).await;
                Reply::say(format!("Refused: {e}"))
            }
        }
    }

    /// A typed `/approve CODE` or `/deny CODE reason` by `user` in `chat` (message `message`).
    pub async fn typed(&self, user: &str, chat: &str, message: &str, t: &Typed) -> Reply {
        let rows = match self
            .broker
            .ledger()
            .db()
            .chat_message_by_ref(&self.channel, chat, &t.code)
            .await
        {
            Ok(r) => r,
            Err(e) => return Reply::say(format!("airlock could not read the request: {e}")),
        };
        let Some(row) = rows.into_iter().next() else {
            self.refuse(user, chat, None, "unknown_code").await;
            return Reply::say(format!("No request with code {} here.", t.code));
        };
        let Some(name) = self.approver(user).map(String::from) else {
            self.refuse(user, chat, Some(&row.approval), "not_approver")
                .await;
            return Reply::say("Refused: you are not an approver on this channel.");
        };
        let approval = match self.broker.approval(&row.approval).await {
            Ok(a) => a,
            Err(e) => return Reply::say(format!("airlock could not read the request: {e}")),
        };
        // The request's message, then the typed one.
        let via = format!(
            "{}/chat={chat}/message={}/user={user}/typed={message}",
            self.channel,
            row.message.as_deref().unwrap_or("-")
        );
        let answer = Answer {
            by: Principal::new(name, Role::Approver),
            decision: if t.approve {
                Choice::Approve
            } else {
                Choice::Deny
            },
            scope: AnswerScope::Once,
            reason: t.reason.clone(),
            // The tier-4 code is the code the message showed (checked by the broker).
            code: approval.code_required.then(|| t.code.clone()),
            action_sha256: Some(approval.action_sha256.clone()),
            via: Some(via),
        };
        let mut reply = self.answer(user, chat, &row.approval, answer).await;
        reply.offer = self.offer(&reply, chat, &row.nonce).await;
        reply
    }

    async fn answer(&self, user: &str, chat: &str, id: &str, answer: Answer) -> Reply {
        match self.broker.answer(id, answer).await {
            Ok(a) => Reply {
                decided: Some(a.clone()),
                ..Reply::say(crate::text::outcome(&a))
            },
            Err(ConfirmError::AlreadyDecided { .. }) => {
                let now = self.broker.approval(id).await.ok();
                let what = match now.as_ref().map(|a| a.status) {
                    Some(ApprovalStatus::Expired) => "late",
                    _ => "already_decided",
                };
                self.refuse(user, chat, Some(id), what).await;
                let text = match &now {
                    Some(a) if a.status == ApprovalStatus::Expired => {
                        "Too late: this request expired and was denied.".to_string()
                    }
                    Some(a) => format!("Already decided: {}", crate::text::outcome(a)),
                    None => "Already decided.".to_string(),
                };
                Reply {
                    decided: now,
                    ..Reply::say(text)
                }
            }
            Err(e) => {
                self.refuse(user, chat, Some(id), e.code()).await;
                // A lock-out after wrong codes is final: show it.
                let decided = self
                    .broker
                    .approval(id)
                    .await
                    .ok()
                    .filter(|a| a.status.is_final());
                Reply {
                    decided,
                    ..Reply::say(format!("Refused: {e}"))
                }
            }
        }
    }
}

/// A tier-4 action (or one needing its code) is approved by typing, never by a button.
pub(crate) fn typed_only(a: &Approval) -> bool {
    a.code_required || a.tier == airlock_core::Tier::Critical
}

/// How a summary's row names its chat (`batch:<chat>`).
pub(crate) const BATCH: &str = "batch";

fn is_summary(chat: &str) -> bool {
    chat.starts_with("batch:")
}

/// May be answered with others of its session in one tap: pending, a person asked, below tier
/// 4 and without a code, and not a decision for a person who may be in crisis.
pub(crate) fn batchable(a: &Approval) -> bool {
    a.asks_person() && !one_at_a_time(a)
}

/// Approved once at a time, never for a session: tier 4, and a decision for a person who may
/// be in crisis.
pub(crate) fn one_at_a_time(a: &Approval) -> bool {
    typed_only(a) || airlock_confirm::crisis::decides_for_person(&a.reasons)
}

pub(crate) fn random_hex(n: usize) -> Result<String, ChatError> {
    let mut b = vec![0u8; n];
    getrandom::fill(&mut b).map_err(|e| ChatError::Config(format!("no randomness: {e}")))?;
    Ok(hex::encode(b))
}

fn random_code(n: usize) -> Result<String, ChatError> {
    let mut b = vec![0u8; n];
    getrandom::fill(&mut b).map_err(|e| ChatError::Config(format!("no randomness: {e}")))?;
    Ok(b.iter()
        .map(|x| char::from(CODE_ALPHABET[usize::from(*x) % CODE_ALPHABET.len()]))
        .collect())
}
