//! The daemon's configuration file (`airlock serve --config FILE`, TOML). Everything has a safe
//! default, so the file is optional: loopback, no LLM reviewer (its share goes to a person), no
//! webhook. Unknown keys are errors, so a misspelt setting is never silently ignored. Secrets
//! are never in the file: it names the environment variables that hold them.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use airlock_confirm::{BrokerConfig, LlmConfig, WebhookConfig};
use airlock_policy::parse_duration;
use airlock_proxy::ProxyConfig;
use anyhow::{Context, Result, bail};
use serde::Deserialize;

/// The default address: loopback, on a port browsers accept (6000 is blocked by Chromium).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7373";

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(default)]
    pub serve: ServeSection,
    pub llm: Option<LlmSection>,
    pub webhook: Option<WebhookSection>,
    #[serde(default)]
    pub fatigue: FatigueSection,
    /// The OpenAI-compatible proxy (served when an upstream is set).
    pub proxy: Option<airlock_proxy::ProxySettings>,
    /// Telegram bots people approve from, by name (`[telegram.ops]`).
    #[serde(default)]
    pub telegram: std::collections::BTreeMap<String, TelegramSection>,
    /// Slack apps people approve from, by name (`[slack.ops]`).
    #[serde(default)]
    pub slack: std::collections::BTreeMap<String, SlackSection>,
    /// Discord applications people approve from, by name (`[discord.ops]`).
    #[serde(default)]
    pub discord: std::collections::BTreeMap<String, DiscordSection>,
    /// Last-resort notices through an SMS gateway's REST API, by name (`[emergency.sms]`).
    #[serde(default)]
    pub emergency: std::collections::BTreeMap<String, EmergencySection>,
    /// Who is asked, in what order, per tier (`[routes.tier3]`).
    #[serde(default)]
    pub routes: std::collections::BTreeMap<String, RouteSection>,
    /// The lowest risk (0 to 4) each chat platform or channel is asked at (`[thresholds]`).
    #[serde(default)]
    pub thresholds: std::collections::BTreeMap<String, f64>,
}

/// The built-in risk thresholds of the chat platforms (on the approval's 0–4 risk scale).
pub const DEFAULT_THRESHOLDS: [(&str, f64); 3] =
    [("telegram", 2.0), ("slack", 2.0), ("discord", 2.5)];

/// A Slack app: its request URL is `{public_url}/v1/chat/slack/<name>`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlackSection {
    /// The environment variable holding the bot token (`xoxb-…`).
    pub token_env: String,
    /// The environment variable holding the app's signing secret.
    pub signing_secret_env: String,
    /// Channel ids (`C…`) requests are posted to.
    pub channels: Vec<String>,
    /// Slack user id (`U…`) → airlock approver name.
    pub approvers: std::collections::BTreeMap<String, String>,
    pub base_url: Option<String>,
}

/// A Discord application: its interactions endpoint is `{public_url}/v1/chat/discord/<name>`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiscordSection {
    /// The environment variable holding the bot token.
    pub token_env: String,
    /// The application's public key (64 hex digits, from the developer portal).
    pub public_key: String,
    /// Channel ids requests are posted to.
    pub channels: Vec<String>,
    /// Discord user id → airlock approver name.
    pub approvers: std::collections::BTreeMap<String, String>,
    pub base_url: Option<String>,
}

/// An SMS gateway: one JSON POST `{"from", "to", "text"}` per recipient.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmergencySection {
    pub url: String,
    /// The environment variable holding the gateway's key (sent as a bearer token).
    pub api_key_env: Option<String>,
    pub from: String,
    pub to: Vec<String>,
}

/// One tier's chain of channels.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteSection {
    /// Channels in order: `telegram:NAME`, `emergency:NAME`, `inbox`.
    pub chain: Vec<String>,
    /// The share of the tier's time each step waits before the next is asked (default 1/3).
    pub after: Option<f64>,
    /// `notify`, `escalate:telegram:NAME` or `emergency:NAME`.
    pub on_timeout: Option<String>,
}

/// One Telegram bot: where it posts and who may answer.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelegramSection {
    /// The environment variable holding the bot token from @BotFather.
    pub token_env: String,
    /// Chat ids (a person's, a group's) the requests are posted to.
    pub chats: Vec<String>,
    /// Telegram user id → airlock approver name; anyone else's answer is refused.
    pub approvers: std::collections::BTreeMap<String, String>,
    /// Default `https://api.telegram.org`.
    pub base_url: Option<String>,
    /// The `getUpdates` long-poll timeout (default 25s).
    pub poll_timeout: Option<String>,
    /// How long a node holds the bot without renewing (default 15s): another node of a shared
    /// PostgreSQL takes over after it.
    pub lease_ttl: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServeSection {
    pub listen: Option<String>,
    /// The URL people reach this node at (links in webhooks, the Secure cookie flag).
    pub public_url: Option<String>,
    /// This node's name; default: the host name.
    pub node: Option<String>,
    /// Listening on anything but loopback needs this (or `--allow-remote`).
    #[serde(default)]
    pub allow_remote: bool,
    /// Largest request body, in bytes.
    pub max_body: Option<usize>,
    /// How long a live token may be remembered without asking the store, in milliseconds
    /// (default 1000; 0 asks on every request). Revocations through this node apply at once;
    /// revocations made elsewhere (another node, `airlock token revoke`) within this time.
    pub token_cache_ms: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmSection {
    pub base_url: String,
    pub model: String,
    pub api_key_env: Option<String>,
    pub timeout: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookSection {
    pub url: String,
    /// The environment variable holding the HMAC secret (at least 32 bytes).
    pub secret_env: String,
    pub link_ttl: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FatigueSection {
    pub denial_streak: Option<u32>,
    pub suggest_after: Option<u32>,
    /// Approvals of one kind in a row before a grant is proposed (0: never).
    pub learn_after: Option<u32>,
    /// How long an accepted learned grant lasts (`7d`).
    pub learn_ttl: Option<String>,
    /// Pending approvals of one session in a chat before a summary answers them all (0: never).
    pub batch_after: Option<u32>,
}

impl ConfigFile {
    pub fn load(path: &Path) -> Result<ConfigFile> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the configuration {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("in {}", path.display()))
    }

    pub fn parse(text: &str) -> Result<ConfigFile> {
        Ok(toml::from_str(text)?)
    }

    /// The address to bind: the flag, else the file, else loopback. A non-loopback address
    /// needs an explicit permission, because the REST API decides what agents may do.
    pub fn listen(&self, flag: Option<&str>, allow_remote_flag: bool) -> Result<SocketAddr> {
        let text = flag
            .or(self.serve.listen.as_deref())
            .unwrap_or(DEFAULT_LISTEN);
        let addr: SocketAddr = text
            .parse()
            .with_context(|| format!("--listen {text:?} is not ADDRESS:PORT"))?;
        if !(addr.ip().is_loopback() || allow_remote_flag || self.serve.allow_remote) {
            bail!(
                "refusing to listen on {addr}: it is not a loopback address. Put airlock behind \
                 TLS and pass --allow-remote (or set serve.allow_remote) if that is intended"
            );
        }
        Ok(addr)
    }

    /// The proxy's settings, when an upstream is configured (the flag wins over the file).
    pub fn proxy(&self, upstream: Option<&str>) -> Result<Option<ProxyConfig>> {
        let settings = self.proxy.clone().unwrap_or_default();
        if upstream.is_none() && settings.upstream.is_none() {
            if self.proxy.is_some() {
                bail!("[proxy] needs `upstream`, the model API's base URL");
            }
            return Ok(None);
        }
        ProxyConfig::from_settings(&settings, upstream)
            .map(Some)
            .map_err(|e| anyhow::anyhow!(e))
    }

    /// The broker's settings, with secrets read from the environment now (a missing secret is
    /// an error at start, not a silent loss of a channel).
    pub fn broker(&self, node: String) -> Result<BrokerConfig> {
        let mut c = BrokerConfig {
            node,
            public_url: self.serve.public_url.clone(),
            ..BrokerConfig::default()
        };
        if let Some(l) = &self.llm {
            if let Some(var) = &l.api_key_env
                && std::env::var(var).map(|v| v.is_empty()).unwrap_or(true)
            {
                bail!("llm.api_key_env names {var}, which is not set");
            }
            c.llm = Some(LlmConfig {
                base_url: l.base_url.trim_end_matches('/').to_string(),
                model: l.model.clone(),
                api_key_env: l.api_key_env.clone(),
                timeout: duration(l.timeout.as_deref(), "llm.timeout", Duration::from_secs(10))?,
            });
        }
        if let Some(w) = &self.webhook {
            let secret = std::env::var(&w.secret_env).unwrap_or_default();
            if secret.len() < 32 {
                bail!(
                    "webhook.secret_env names {}, which must hold a secret of at least 32 bytes",
                    w.secret_env
                );
            }
            if c.public_url.is_none() {
                bail!("the webhook channel needs serve.public_url for its approve/deny links");
            }
            c.webhook = Some(WebhookConfig {
                url: w.url.clone(),
                secret: secret.into_bytes(),
                link_ttl: duration(
                    w.link_ttl.as_deref(),
                    "webhook.link_ttl",
                    Duration::from_secs(600),
                )?,
            });
        }
        if let Some(n) = self.fatigue.denial_streak {
            c.denial_streak = n.max(1);
        }
        if let Some(n) = self.fatigue.suggest_after {
            c.suggest_after = n.max(1);
        }
        if let Some(n) = self.fatigue.learn_after {
            c.learn_after = n;
        }
        c.learn_ttl = duration(
            self.fatigue.learn_ttl.as_deref(),
            "fatigue.learn_ttl",
            c.learn_ttl,
        )?;
        Ok(c)
    }
}

impl ConfigFile {
    /// The Telegram channels, with their tokens read from the environment now (a missing token
    /// is an error at start, not a channel silently gone).
    pub fn telegram(&self) -> Result<Vec<airlock_chat::TelegramConfig>> {
        let mut out = Vec::new();
        for (name, t) in &self.telegram {
            let token = std::env::var(&t.token_env).unwrap_or_default();
            if token.trim().is_empty() {
                bail!(
                    "telegram.{name}.token_env names {}, which is not set",
                    t.token_env
                );
            }
            if t.chats.is_empty() || t.approvers.is_empty() {
                bail!("telegram.{name} needs `chats` to post to and `approvers` who may answer");
            }
            for id in t.chats.iter().chain(t.approvers.keys()) {
                if id.parse::<i64>().is_err() {
                    bail!("telegram.{name}: {id:?} is not a Telegram id (a number)");
                }
            }
            let mut c = airlock_chat::TelegramConfig::new(name, token.trim());
            if let Some(u) = &t.base_url {
                c.base_url = u.trim_end_matches('/').to_string();
            }
            c.chats = t.chats.clone();
            c.approvers = t.approvers.clone();
            c.poll_timeout = duration(
                t.poll_timeout.as_deref(),
                "telegram.poll_timeout",
                c.poll_timeout,
            )?;
            c.lease_ttl = duration(t.lease_ttl.as_deref(), "telegram.lease_ttl", c.lease_ttl)?;
            out.push(c);
        }
        Ok(out)
    }
}

impl ConfigFile {
    /// The emergency channels, keys read from the environment now.
    pub fn emergency(&self) -> Result<Vec<airlock_chat::EmergencyConfig>> {
        let mut out = Vec::new();
        for (name, e) in &self.emergency {
            let api_key = match &e.api_key_env {
                Some(var) => match std::env::var(var) {
                    Ok(v) if !v.trim().is_empty() => Some(v.trim().to_string()),
                    _ => bail!("emergency.{name}.api_key_env names {var}, which is not set"),
                },
                None => None,
            };
            if e.to.is_empty() {
                bail!("emergency.{name} needs `to`, the numbers to notify");
            }
            out.push(airlock_chat::EmergencyConfig {
                name: name.clone(),
                url: e.url.clone(),
                api_key,
                from: e.from.clone(),
                to: e.to.clone(),
                inbox_url: self
                    .serve
                    .public_url
                    .as_ref()
                    .map(|u| format!("{}/inbox", u.trim_end_matches('/'))),
                every: Duration::from_secs(1),
            });
        }
        Ok(out)
    }

    /// The Slack apps, secrets read from the environment now.
    pub fn slack(&self) -> Result<Vec<airlock_chat::slack::SlackConfig>> {
        let mut out = Vec::new();
        for (name, s) in &self.slack {
            let token = env_secret(&s.token_env, &format!("slack.{name}.token_env"))?;
            let secret = env_secret(
                &s.signing_secret_env,
                &format!("slack.{name}.signing_secret_env"),
            )?;
            if s.channels.is_empty() || s.approvers.is_empty() {
                bail!("slack.{name} needs `channels` to post to and `approvers` who may answer");
            }
            let mut c = airlock_chat::slack::SlackConfig::new(name, &token, secret.as_bytes());
            if let Some(u) = &s.base_url {
                c.base_url = u.trim_end_matches('/').to_string();
            }
            c.channels = s.channels.clone();
            c.approvers = s.approvers.clone();
            out.push(c);
        }
        Ok(out)
    }

    /// The Discord applications, tokens read from the environment now.
    pub fn discord(&self) -> Result<Vec<airlock_chat::discord::DiscordConfig>> {
        let mut out = Vec::new();
        for (name, d) in &self.discord {
            let token = env_secret(&d.token_env, &format!("discord.{name}.token_env"))?;
            let key: [u8; 32] = hex::decode(d.public_key.trim())
                .ok()
                .and_then(|k| k.try_into().ok())
                .with_context(|| format!("discord.{name}.public_key: expected 64 hex digits"))?;
            if d.channels.is_empty() || d.approvers.is_empty() {
                bail!("discord.{name} needs `channels` to post to and `approvers` who may answer");
            }
            let mut c = airlock_chat::discord::DiscordConfig::new(name, &token, key);
            if let Some(u) = &d.base_url {
                c.base_url = u.trim_end_matches('/').to_string();
            }
            c.channels = d.channels.clone();
            c.approvers = d.approvers.clone();
            out.push(c);
        }
        Ok(out)
    }

    /// The routes per tier; every channel they name must be configured.
    pub fn routes(&self) -> Result<airlock_chat::Routes> {
        let known = |c: &str| -> bool {
            c == "inbox"
                || c.strip_prefix("telegram:")
                    .is_some_and(|n| self.telegram.contains_key(n))
                || c.strip_prefix("slack:")
                    .is_some_and(|n| self.slack.contains_key(n))
                || c.strip_prefix("discord:")
                    .is_some_and(|n| self.discord.contains_key(n))
                || c.strip_prefix("emergency:")
                    .is_some_and(|n| self.emergency.contains_key(n))
        };
        let batch = self.fatigue.batch_after.unwrap_or(3);
        if batch == 1 {
            bail!("fatigue.batch_after: a summary needs at least 2 approvals (0 turns it off)");
        }
        let mut routes = airlock_chat::Routes::new().with_batch(batch as usize);
        for (platform, t) in DEFAULT_THRESHOLDS {
            routes = routes.with_threshold(platform, t);
        }
        for (key, t) in &self.thresholds {
            let platform = matches!(key.as_str(), "telegram" | "slack" | "discord" | "emergency");
            if !platform && (key == "inbox" || !known(key)) {
                bail!(
                    "thresholds.{key}: not a chat platform (telegram, slack, discord, emergency) or a configured channel (telegram:NAME, …)"
                );
            }
            if !(t.is_finite() && (0.0..=4.0).contains(t)) {
                bail!("thresholds.{key} must be a risk from 0 to 4 (the approval's tier)");
            }
            routes = routes.with_threshold(key, *t);
        }
        for (key, r) in &self.routes {
            let tier = key
                .strip_prefix("tier")
                .and_then(|t| t.parse::<u8>().ok())
                .and_then(|t| airlock_core::Tier::try_from(t).ok())
                .with_context(|| format!("routes.{key}: expected tier0 … tier4"))?;
            for c in &r.chain {
                if !known(c) {
                    bail!(
                        "routes.{key}: {c:?} is not a configured channel (telegram:NAME, slack:NAME, discord:NAME, emergency:NAME or inbox)"
                    );
                }
            }
            let after = r.after.unwrap_or(1.0 / 3.0);
            if !(after > 0.0 && after <= 1.0) {
                bail!("routes.{key}.after must be a share of the tier's time, in (0, 1]");
            }
            let on_timeout = match r.on_timeout.as_deref() {
                None => None,
                Some("notify") => Some(airlock_chat::OnTimeout::Notify),
                Some(t) if t.starts_with("escalate:") => {
                    let to = &t["escalate:".len()..];
                    if to.starts_with("emergency:") || to == "inbox" || !known(to) {
                        bail!("routes.{key}.on_timeout: {to:?} is not a configured chat channel");
                    }
                    Some(airlock_chat::OnTimeout::Escalate(to.to_string()))
                }
                Some(t) if t.starts_with("emergency:") && known(t) => {
                    Some(airlock_chat::OnTimeout::Emergency(t.to_string()))
                }
                Some(t) => bail!(
                    "routes.{key}.on_timeout: {t:?} is not notify, escalate:telegram:NAME or a configured emergency:NAME"
                ),
            };
            routes = routes.with(
                tier,
                airlock_chat::Route {
                    chain: r.chain.clone(),
                    after,
                    on_timeout,
                },
            );
        }
        Ok(routes)
    }
}

fn env_secret(var: &str, key: &str) -> Result<String> {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => Ok(v.trim().to_string()),
        _ => bail!("{key} names {var}, which is not set"),
    }
}

fn duration(text: Option<&str>, key: &str, default: Duration) -> Result<Duration> {
    match text {
        None => Ok(default),
        Some(t) => parse_duration(t).map_err(|e| anyhow::anyhow!("{key}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_file_is_loopback_without_reviewer() {
        let c = ConfigFile::parse("").unwrap();
        assert_eq!(c.listen(None, false).unwrap().to_string(), DEFAULT_LISTEN);
        let b = c.broker("n".into()).unwrap();
        assert!(b.llm.is_none() && b.webhook.is_none());
    }

    #[test]
    fn remote_listening_needs_permission() {
        let c = ConfigFile::parse("").unwrap();
        assert!(c.listen(Some("0.0.0.0:7373"), false).is_err());
        assert!(c.listen(Some("0.0.0.0:7373"), true).is_ok());
        let c = ConfigFile::parse("[serve]\nallow_remote = true\nlisten = \"0.0.0.0:1\"").unwrap();
        assert!(c.listen(None, false).is_ok());
        assert!(c.listen(Some("nonsense"), false).is_err());
    }

    #[test]
    fn unknown_keys_and_missing_secrets_are_errors() {
        assert!(ConfigFile::parse("[serve]\nlisten_on = \"x\"").is_err());
        let c = ConfigFile::parse(
            "[webhook]\nurl = \"http://127.0.0.1:1/h\"\nsecret_env = \"AIRLOCK_TEST_UNSET_SECRET\"",
        )
        .unwrap();
        assert!(c.broker("n".into()).is_err());
        let c = ConfigFile::parse(
            "[llm]\nbase_url = \"http://127.0.0.1:1/v1/\"\nmodel = \"m\"\ntimeout = \"3s\"",
        )
        .unwrap();
        let b = c.broker("n".into()).unwrap();
        let l = b.llm.unwrap();
        assert_eq!(l.base_url, "http://127.0.0.1:1/v1");
        assert_eq!(l.timeout, Duration::from_secs(3));
    }

    #[test]
    fn the_proxy_section() {
        let c = ConfigFile::parse("").unwrap();
        assert!(c.proxy(None).unwrap().is_none());
        assert!(c.proxy(Some("http://127.0.0.1:9/v1")).unwrap().is_some());
        let c = ConfigFile::parse(
            "[proxy]\nupstream = \"http://127.0.0.1:9/v1\"\ndeny_template = \"no {tool}\"\n[proxy.scan]\ninjection = \"block\"\n[[proxy.tools]]\nname = \"run\"\nkind = \"shell\"",
        )
        .unwrap();
        let p = c.proxy(None).unwrap().unwrap();
        assert_eq!(p.deny_template, "no {tool}");
        assert!(ConfigFile::parse("[proxy]\nupstream = \"http://x\"\nbogus = 1").is_err());
        assert!(
            ConfigFile::parse("[proxy]\nkeepalive = \"1s\"")
                .unwrap()
                .proxy(None)
                .is_err()
        );
    }

    #[test]
    fn telegram_sections() {
        let text = "[telegram.ops]\ntoken_env = \"PATH\"\nchats = [\"-1001\"]\napprovers = { \"111\" = \"alice\" }\npoll_timeout = \"5s\"";
        let t = ConfigFile::parse(text).unwrap().telegram().unwrap();
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].channel(), "telegram:ops");
        assert_eq!(t[0].poll_timeout, Duration::from_secs(5));
        assert_eq!(t[0].approvers["111"], "alice");
        // a token variable that is not set, an id that is not a number, no approvers, a typo
        let unset = text.replace("PATH", "AIRLOCK_TEST_UNSET_TOKEN");
        assert!(ConfigFile::parse(&unset).unwrap().telegram().is_err());
        let bad_id = text.replace("-1001", "@ops");
        assert!(ConfigFile::parse(&bad_id).unwrap().telegram().is_err());
        let nobody = text.replace("{ \"111\" = \"alice\" }", "{}");
        assert!(ConfigFile::parse(&nobody).unwrap().telegram().is_err());
        assert!(ConfigFile::parse(&format!("{text}\nchat = 1")).is_err());
    }

    #[test]
    fn routes_name_configured_channels() {
        let base = "[telegram.ops]\ntoken_env = \"PATH\"\nchats = [\"1\"]\napprovers = { \"1\" = \"a\" }\n[emergency.sms]\nurl = \"http://127.0.0.1:1/sms\"\nfrom = \"+1\"\nto = [\"+2\"]\n";
        let good = format!(
            "{base}[routes.tier3]\nchain = [\"telegram:ops\", \"inbox\", \"emergency:sms\"]\nafter = 0.25\non_timeout = \"escalate:telegram:ops\"\n[routes.tier4]\nchain = [\"telegram:ops\"]\non_timeout = \"emergency:sms\""
        );
        let c = ConfigFile::parse(&good).unwrap();
        let r = c.routes().unwrap();
        let t3 = r.route(airlock_core::Tier::High).unwrap();
        assert_eq!(t3.chain.len(), 3);
        assert_eq!(t3.after, 0.25);
        assert_eq!(
            t3.on_timeout,
            Some(airlock_chat::OnTimeout::Escalate("telegram:ops".into()))
        );
        assert_eq!(c.emergency().unwrap()[0].to, vec!["+2".to_string()]);
        for bad in [
            "[routes.tier3]\nchain = [\"telegram:nobody\"]",
            "[routes.tier9]\nchain = [\"inbox\"]",
            "[routes.tier3]\nchain = [\"inbox\"]\nafter = 1.5",
            "[routes.tier3]\nchain = [\"inbox\"]\non_timeout = \"page\"",
            "[routes.tier3]\nchain = [\"inbox\"]\non_timeout = \"escalate:emergency:sms\"",
        ] {
            let c = ConfigFile::parse(&format!("{base}{bad}")).unwrap();
            assert!(c.routes().is_err(), "{bad}");
        }
    }

    #[test]
    fn thresholds_per_platform_and_channel() {
        let base = "[telegram.ops]\ntoken_env = \"PATH\"\nchats = [\"1\"]\napprovers = { \"1\" = \"a\" }\n";
        let r = ConfigFile::parse(base).unwrap().routes().unwrap();
        assert_eq!(r.threshold("telegram:ops"), 2.0);
        assert_eq!(r.threshold("discord:x"), 2.5);
        assert_eq!(r.threshold("inbox"), 0.0);
        let c = ConfigFile::parse(&format!(
            "{base}[thresholds]\ntelegram = 1.5\n\"telegram:ops\" = 3.0\n"
        ))
        .unwrap();
        let r = c.routes().unwrap();
        assert_eq!(r.threshold("telegram:ops"), 3.0);
        assert_eq!(r.threshold("telegram:admins"), 1.5);
        for bad in [
            "[thresholds]\ntelegram = 4.5",
            "[thresholds]\ntelegram = -1",
            "[thresholds]\n\"telegram:nobody\" = 2.0",
            "[thresholds]\ninbox = 2.0",
            "[thresholds]\nterminal = 2.0",
        ] {
            let c = ConfigFile::parse(&format!("{base}{bad}")).unwrap();
            assert!(c.routes().is_err(), "{bad}");
        }
        let f = ConfigFile::parse("[fatigue]\nlearn_after = 5\nlearn_ttl = \"2d\"").unwrap();
        assert_eq!(f.fatigue.learn_after, Some(5));
        assert_eq!(f.routes().unwrap().batch_after(), 3);
        let f = ConfigFile::parse("[fatigue]\nbatch_after = 0").unwrap();
        assert_eq!(f.routes().unwrap().batch_after(), 0);
        assert!(
            ConfigFile::parse("[fatigue]\nbatch_after = 1")
                .unwrap()
                .routes()
                .is_err()
        );
    }
}
