//! The Telegram channel: long polling with `getUpdates` (no public URL needed; the offset is
//! stored, so a restart neither loses nor repeats answers), one poller per bot token across
//! nodes (a lease), `sendMessage` with an inline keyboard (approve once, approve for the
//! session, deny; deny only at tier 4, whose approval needs its code typed), taps answered with
//! `answerCallbackQuery` and the message edited to show the outcome with no live buttons.
//!
//! While it holds the lease, the runner sends a message for every approval a person is asked
//! about (on the broker's events, and in a catch-up pass at start and every few seconds, so an
//! approval opened on another node or while it was down is not missed) and closes the messages
//! of decided approvals (whoever decided them, on whichever channel).

mod api;
mod run;

use std::collections::BTreeMap;
use std::time::Duration;

pub use api::{Api, CallbackQuery, Chat, Message, Update, User};
pub use run::Telegram;

/// One bot.
#[derive(Clone)]
pub struct TelegramConfig {
    /// The channel's name in the store, receipts and logs (`telegram:<name>`).
    pub name: String,
    /// The bot token from @BotFather.
    pub token: String,
    /// `https://api.telegram.org` (a local server in tests).
    pub base_url: String,
    /// Chats (user, group or channel ids) the requests are posted to.
    pub chats: Vec<String>,
    /// Telegram user id → airlock approver name. Anyone else's answer is refused.
    pub approvers: BTreeMap<String, String>,
    /// The long-poll timeout of `getUpdates`.
    pub poll_timeout: Duration,
    /// How long a node's hold on the bot lasts without renewal.
    pub lease_ttl: Duration,
    /// How often the runner looks for approvals and decisions its events missed.
    pub catch_up_every: Duration,
}

impl TelegramConfig {
    pub fn new(name: &str, token: &str) -> TelegramConfig {
        TelegramConfig {
            name: name.to_string(),
            token: token.to_string(),
            base_url: "https://api.telegram.org".into(),
            chats: Vec::new(),
            approvers: BTreeMap::new(),
            poll_timeout: Duration::from_secs(25),
            lease_ttl: Duration::from_secs(15),
            catch_up_every: Duration::from_secs(1),
        }
    }

    /// The channel's name in the store and receipts.
    pub fn channel(&self) -> String {
        format!("telegram:{}", self.name)
    }

    /// The lease and offset key of this bot: a hash of its token, so two configurations of
    /// the same bot share one poller and one offset, and the token itself is never stored.
    pub fn bot_key(&self) -> String {
        use sha2::Digest;
        let h = sha2::Sha256::digest(self.token.as_bytes());
        format!("telegram:{}", hex::encode(&h[..12]))
    }
}

impl std::fmt::Debug for TelegramConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelegramConfig")
            .field("name", &self.name)
            .field("token", &"<redacted>")
            .field("base_url", &self.base_url)
            .field("chats", &self.chats)
            .field("approvers", &self.approvers)
            .finish()
    }
}
