//! The proxy's settings: the `[proxy]` section of the daemon's TOML file as written
//! ([`ProxySettings`], unknown keys refused) and as used ([`ProxyConfig`], durations parsed and
//! the upstream key read from its environment variable once, at start).

use std::time::Duration;

use airlock_policy::parse_duration;
use serde::Deserialize;

use super::privacy::{PrivacyConfig, PrivacySettings};
use super::toolmap::{ToolMap, ToolMapping};

/// The default explanation put in the assistant message for a blocked tool call.
pub const DEFAULT_DENY_TEMPLATE: &str = "[airlock] The tool call `{tool}` was blocked ({code}): {reason} Do not retry the same call; choose another approach or ask the user.";

/// What the proxy does with inbound text that the scanner flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextAction {
    /// Forward unchanged (the verdict is still recorded).
    Pass,
    /// Wrap the text in a warning the model sees.
    Annotate,
    /// Replace the flagged spans.
    Redact,
    /// Refuse the request (400 `INPUT_BLOCKED`).
    Block,
}

/// `[proxy.scan]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScanSettings {
    /// For a jailbreak in a user message (default `block`).
    pub jailbreak: Option<TextAction>,
    /// For an injection in a tool-role message (default `annotate`).
    pub injection: Option<TextAction>,
    /// The model a request from a person in crisis is routed to (default: the requested one).
    pub crisis_model: Option<String>,
    /// A crisis-response file of the operator's (resources per language, system text); the
    /// built-in `rules/text/crisis_response.toml` when absent.
    pub crisis_response: Option<String>,
    /// Turn inbound scanning off entirely.
    #[serde(default)]
    pub disabled: bool,
    /// Clean verdicts of one agent and session within this many milliseconds share a receipt
    /// (default 20, at most 1000; 0: one receipt per request).
    pub clean_window_ms: Option<u64>,
}

/// `[proxy.budget]`: limits per agent token and period; absent limits are unlimited.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetSettings {
    /// The period's length (`1h`, `1d`…; default `1d`), in fixed windows.
    pub period: Option<String>,
    pub requests: Option<u64>,
    pub tokens: Option<u64>,
    /// In the currency of the prices below.
    pub cost: Option<f64>,
    /// Price per 1000 prompt tokens and per 1000 completion tokens.
    pub prompt_price_per_1k: Option<f64>,
    pub completion_price_per_1k: Option<f64>,
}

/// `[[proxy.tools]]`: one tool of the agent and the action it maps to.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSettings {
    pub name: String,
    /// `shell` (one argument holds a command line) or `tool` (the arguments as JSON).
    pub kind: String,
    /// For `shell`: the argument names that may hold the command, in order.
    #[serde(default)]
    pub arguments: Vec<String>,
    /// For `tool`: the name the policy sees (default: the same name).
    pub policy_name: Option<String>,
}

/// The `[proxy]` section as written in the TOML file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProxySettings {
    /// The upstream's base URL, such as `https://api.openai.com/v1`.
    pub upstream: Option<String>,
    /// The environment variable holding the upstream's API key (sent as its bearer token).
    pub upstream_key_env: Option<String>,
    /// The explanation of a blocked call; `{tool}`, `{code}` and `{reason}` are filled in.
    pub deny_template: Option<String>,
    /// How often a held stream gets an SSE comment (default `10s`).
    pub keepalive: Option<String>,
    /// The longest a response is held for an ask (default `10m`); then the call is denied.
    pub max_hold: Option<String>,
    /// The upstream's own time limit for one response (default `10m`).
    pub timeout: Option<String>,
    /// Largest request body (default 16 MiB).
    pub max_body: Option<usize>,
    /// Replaces the built-in tool map when set.
    pub tools: Option<Vec<ToolSettings>>,
    #[serde(default)]
    pub scan: ScanSettings,
    pub budget: Option<BudgetSettings>,
    /// The outbound privacy filter.
    #[serde(default)]
    pub privacy: PrivacySettings,
}

/// Budgets as used.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    pub period: Duration,
    pub requests: Option<u64>,
    pub tokens: Option<u64>,
    /// In millionths of the price unit, so counting is exact.
    pub cost_micros: Option<u64>,
    pub prompt_micros_per_1k: u64,
    pub completion_micros_per_1k: u64,
}

/// The proxy's settings as used.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// Without a trailing slash.
    pub upstream: String,
    pub upstream_key: Option<String>,
    pub deny_template: String,
    pub keepalive: Duration,
    pub max_hold: Duration,
    pub timeout: Duration,
    pub max_body: usize,
    pub tools: ToolMap,
    pub jailbreak: TextAction,
    pub injection: TextAction,
    pub crisis_model: Option<String>,
    /// The operator's crisis response (`None`: the scanner's built-in one).
    pub crisis_response: Option<std::sync::Arc<airlock_shield::CrisisResponse>>,
    pub scan: bool,
    /// See `ScanSettings::clean_window_ms`.
    pub clean_window: Duration,
    pub budget: Option<Budget>,
    pub privacy: PrivacyConfig,
}

impl ProxyConfig {
    /// Settings for `upstream` with every default.
    pub fn new(upstream: &str) -> ProxyConfig {
        ProxyConfig {
            upstream: upstream.trim_end_matches('/').to_string(),
            upstream_key: None,
            deny_template: DEFAULT_DENY_TEMPLATE.to_string(),
            keepalive: Duration::from_secs(10),
            max_hold: Duration::from_secs(600),
            timeout: Duration::from_secs(600),
            max_body: 16 * 1024 * 1024,
            tools: ToolMap::builtin(),
            jailbreak: TextAction::Block,
            injection: TextAction::Annotate,
            crisis_model: None,
            crisis_response: None,
            scan: true,
            clean_window: Duration::from_millis(20),
            budget: None,
            privacy: PrivacyConfig::default(),
        }
    }

    /// From the file's section; `upstream` (a flag) wins over the file. A named key variable
    /// that is unset is an error now rather than a silent unauthenticated upstream.
    pub fn from_settings(s: &ProxySettings, upstream: Option<&str>) -> Result<ProxyConfig, String> {
        let url = upstream
            .or(s.upstream.as_deref())
            .ok_or("the proxy needs an upstream URL (proxy.upstream or --upstream)")?;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!("proxy.upstream {url:?} must be an http(s) URL"));
        }
        let mut c = ProxyConfig::new(url);
        if let Some(var) = &s.upstream_key_env {
            match std::env::var(var) {
                Ok(v) if !v.is_empty() => c.upstream_key = Some(v),
                _ => {
                    return Err(format!(
                        "proxy.upstream_key_env names {var}, which is not set"
                    ));
                }
            }
        }
        if let Some(t) = &s.deny_template {
            c.deny_template = t.clone();
        }
        c.keepalive = dur(s.keepalive.as_deref(), "proxy.keepalive", c.keepalive)?;
        c.max_hold = dur(s.max_hold.as_deref(), "proxy.max_hold", c.max_hold)?;
        c.timeout = dur(s.timeout.as_deref(), "proxy.timeout", c.timeout)?;
        if let Some(m) = s.max_body {
            c.max_body = m;
        }
        if let Some(tools) = &s.tools {
            let mut map = Vec::new();
            for t in tools {
                map.push(ToolMapping::from_settings(t)?);
            }
            c.tools = ToolMap::new(map);
        }
        c.jailbreak = s.scan.jailbreak.unwrap_or(c.jailbreak);
        c.injection = s.scan.injection.unwrap_or(c.injection);
        c.crisis_model = s.scan.crisis_model.clone();
        if let Some(path) = &s.scan.crisis_response {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("proxy.scan.crisis_response {path}: {e}"))?;
            let r = airlock_shield::CrisisResponse::from_toml(&text)
                .map_err(|e| format!("proxy.scan.crisis_response {path}: {e}"))?;
            c.crisis_response = Some(std::sync::Arc::new(r));
        }
        c.scan = !s.scan.disabled;
        if let Some(ms) = s.scan.clean_window_ms {
            if ms > 1000 {
                return Err(format!(
                    "proxy.scan.clean_window_ms is {ms}: at most 1000 (what a crash may lose grows with it)"
                ));
            }
            c.clean_window = Duration::from_millis(ms);
        }
        if let Some(b) = &s.budget {
            c.budget = Some(budget(b)?);
        }
        c.privacy = PrivacyConfig::from_settings(&s.privacy);
        Ok(c)
    }
}

fn budget(b: &BudgetSettings) -> Result<Budget, String> {
    let micros = |v: Option<f64>, key: &str| -> Result<Option<u64>, String> {
        match v {
            None => Ok(None),
            Some(x) if x.is_finite() && x >= 0.0 => Ok(Some((x * 1_000_000.0).round() as u64)),
            Some(_) => Err(format!("proxy.budget.{key} must be a non-negative number")),
        }
    };
    let period = dur(
        b.period.as_deref(),
        "proxy.budget.period",
        Duration::from_secs(86_400),
    )?;
    if period.as_millis() == 0 {
        return Err("proxy.budget.period must be longer than zero".into());
    }
    Ok(Budget {
        period,
        requests: b.requests,
        tokens: b.tokens,
        cost_micros: micros(b.cost, "cost")?,
        prompt_micros_per_1k: micros(b.prompt_price_per_1k, "prompt_price_per_1k")?.unwrap_or(0),
        completion_micros_per_1k: micros(b.completion_price_per_1k, "completion_price_per_1k")?
            .unwrap_or(0),
    })
}

fn dur(text: Option<&str>, key: &str, default: Duration) -> Result<Duration, String> {
    match text {
        None => Ok(default),
        Some(t) => parse_duration(t).map_err(|e| format!("{key}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_and_check() {
        let s: ProxySettings = serde_json::from_str(
            r#"{"upstream": "http://127.0.0.1:9/v1/", "keepalive": "2s",
                "scan": {"injection": "redact"}, "budget": {"requests": 3, "cost": 1.5},
                "tools": [{"name": "run", "kind": "shell", "arguments": ["script"]}]}"#,
        )
        .unwrap();
        let c = ProxyConfig::from_settings(&s, None).unwrap();
        assert_eq!(c.upstream, "http://127.0.0.1:9/v1");
        assert_eq!(c.keepalive, Duration::from_secs(2));
        assert_eq!(c.injection, TextAction::Redact);
        assert_eq!(c.jailbreak, TextAction::Block);
        let b = c.budget.unwrap();
        assert_eq!((b.requests, b.cost_micros), (Some(3), Some(1_500_000)));
        assert!(serde_json::from_str::<ProxySettings>(r#"{"upstreem": "x"}"#).is_err());
        assert!(ProxyConfig::from_settings(&ProxySettings::default(), None).is_err());
        assert!(ProxyConfig::from_settings(&ProxySettings::default(), Some("ftp://x")).is_err());
        let s = ProxySettings {
            upstream_key_env: Some("AIRLOCK_TEST_UNSET_PROXY_KEY".into()),
            ..ProxySettings::default()
        };
        assert!(ProxyConfig::from_settings(&s, Some("http://x")).is_err());
        // The clean-verdict window: 20 ms unless set, bounded.
        assert_eq!(c.clean_window, Duration::from_millis(20));
        let window = |ms: u64| {
            let mut s = ProxySettings::default();
            s.scan.clean_window_ms = Some(ms);
            ProxyConfig::from_settings(&s, Some("http://x")).map(|c| c.clean_window)
        };
        assert_eq!(window(0), Ok(Duration::ZERO));
        assert_eq!(window(1000), Ok(Duration::from_secs(1)));
        assert!(window(1001).is_err());
    }
}
