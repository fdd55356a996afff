//! The chat crate's errors.

/// Why a channel could not start or a platform call failed.
#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    #[error("chat channel configuration: {0}")]
    Config(String),
    #[error(transparent)]
    Store(#[from] airlock_store::StoreError),
    #[error(transparent)]
    Broker(#[from] airlock_confirm::ConfirmError),
    /// The platform could not be reached, or its answer did not arrive whole.
    #[error("{platform} unreachable: {detail}")]
    Transport {
        platform: &'static str,
        detail: String,
    },
    /// The platform answered with an error (`ok: false` or an HTTP error status).
    #[error("{platform} refused {method}: HTTP {status} {description}")]
    Platform {
        platform: &'static str,
        method: String,
        status: u16,
        description: String,
        /// Seconds to wait before retrying, when the platform said (HTTP 429).
        retry_after: Option<u64>,
    },
    /// The platform's answer was not the JSON its API documents.
    #[error("{platform} answered {method} with unexpected JSON: {detail}")]
    Malformed {
        platform: &'static str,
        method: String,
        detail: String,
    },
}

impl ChatError {
    /// HTTP 409 from Telegram's `getUpdates`: another poller uses the same bot token.
    pub fn is_conflict(&self) -> bool {
        matches!(self, ChatError::Platform { status: 409, .. })
    }
}
