//! How a broker is set up: the optional LLM reviewer and webhook channel, links, fatigue
//! control, and where the policy for a working directory comes from.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use airlock_policy::{Policy, PolicyError};

/// The broker's settings.
#[derive(Debug, Clone)]
pub struct BrokerConfig {
    /// The OpenAI-compatible reviewer; without it, whatever the LLM would decide goes to a
    /// person.
    pub llm: Option<LlmConfig>,
    /// HMAC-signed POST with one-time approve/deny links when an approval opens.
    pub webhook: Option<WebhookConfig>,
    /// Base URL for links, e.g. `http://127.0.0.1:7373`.
    pub public_url: Option<String>,
    /// This node's name (metrics, logs).
    pub node: String,
    /// After this many denials in a row in one session, the agent is told to stop trying
    /// variations.
    pub denial_streak: u32,
    /// After this many approvals by a person of the same action, a rule is suggested.
    pub suggest_after: u32,
    /// After this many approvals by a person in a row of the same kind of action by one
    /// agent, a narrow grant is proposed (0: never).
    pub learn_after: u32,
    /// How long a learned grant lasts once accepted.
    pub learn_ttl: Duration,
    /// How often the sweeper looks for approvals past their deadline or time lock.
    pub sweep_every: Duration,
}

impl Default for BrokerConfig {
    fn default() -> Self {
        BrokerConfig {
            llm: None,
            webhook: None,
            public_url: None,
            node: "local".into(),
            denial_streak: 3,
            suggest_after: 3,
            learn_after: 3,
            learn_ttl: Duration::from_secs(7 * 24 * 3600),
            sweep_every: Duration::from_millis(500),
        }
    }
}

/// An OpenAI-compatible chat-completions endpoint used as the smart reviewer.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// E.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`; the broker posts to
    /// `{base_url}/chat/completions`.
    pub base_url: String,
    pub model: String,
    /// The environment variable holding the API key (sent as a bearer token), if any.
    pub api_key_env: Option<String>,
    /// No usable answer within this time escalates to a person.
    pub timeout: Duration,
}

/// The webhook channel.
#[derive(Clone)]
pub struct WebhookConfig {
    pub url: String,
    /// HMAC-SHA256 key for the body signature and the links.
    pub secret: Vec<u8>,
    /// How long an approve/deny link stays valid (at most until the approval's deadline).
    pub link_ttl: Duration,
}

impl std::fmt::Debug for WebhookConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookConfig")
            .field("url", &self.url)
            .field("secret", &"<redacted>")
            .field("link_ttl", &self.link_ttl)
            .finish()
    }
}

/// Loads the policy in force for a working directory (the binary supplies it: layers, project).
pub type PolicyProvider =
    Arc<dyn Fn(Option<&Path>) -> Result<Arc<Policy>, PolicyError> + Send + Sync>;
