//! The Slack channel: Block Kit messages with buttons posted with `chat.postMessage`, closed with
//! `chat.update`; answers arrive at the app's request URL on this daemon (interactivity, and the
//! `/airlock approve CODE` slash command), signed with the app's signing secret:
//! `X-Slack-Signature: v0=hex(HMAC-SHA256(secret, "v0:" + X-Slack-Request-Timestamp + ":" +
//! body))`, refused when the timestamp is more than 300 s away. Slack wants the HTTP answer
//! within 3 s: the tap is answered in the store first (fast), the person's notice goes to the
//! payload's `response_url` and the messages are edited afterwards, off the request.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use airlock_confirm::{ApprovalEvent, Broker};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use hmac::{Hmac, KeyInit, Mac};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::Sha256;
use tokio::sync::{broadcast, watch};
use tokio::task::JoinHandle;

use crate::ChatError;
use crate::courier::{Buttons, Courier, Post};
use crate::desk::Desk;
use crate::http::header;
use crate::route::Routes;

const PLATFORM: &str = "Slack";

/// The most a request to the request URL may carry.
pub const MAX_BODY: usize = 64 * 1024;

/// One Slack app.
#[derive(Clone)]
pub struct SlackConfig {
    pub name: String,
    /// The bot token (`xoxb-…`).
    pub token: String,
    /// The app's signing secret.
    pub signing_secret: Vec<u8>,
    /// `https://slack.com/api` (a local server in tests).
    pub base_url: String,
    /// Channel ids (`C…`) the requests are posted to.
    pub channels: Vec<String>,
    /// Slack user id (`U…`) → airlock approver name.
    pub approvers: BTreeMap<String, String>,
    pub catch_up_every: Duration,
    /// How far a request's timestamp may be from now (replay window).
    pub max_skew: Duration,
}

impl SlackConfig {
    pub fn new(name: &str, token: &str, signing_secret: &[u8]) -> SlackConfig {
        SlackConfig {
            name: name.into(),
            token: token.into(),
            signing_secret: signing_secret.to_vec(),
            base_url: "https://slack.com/api".into(),
            channels: Vec::new(),
            approvers: BTreeMap::new(),
            catch_up_every: Duration::from_secs(1),
            max_skew: Duration::from_secs(300),
        }
    }

    pub fn channel(&self) -> String {
        format!("slack:{}", self.name)
    }
}

impl std::fmt::Debug for SlackConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlackConfig")
            .field("name", &self.name)
            .field("token", &"<redacted>")
            .field("signing_secret", &"<redacted>")
            .field("channels", &self.channels)
            .field("approvers", &self.approvers)
            .finish()
    }
}

/// The Web API calls airlock makes.
#[derive(Clone)]
pub struct SlackApi {
    client: reqwest::Client,
    base: String,
    token: String,
}

impl SlackApi {
    async fn call(&self, method: &str, body: Value) -> Result<Value, ChatError> {
        let resp = self
            .client
            .post(format!("{}/{method}", self.base))
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await
            .map_err(|e| ChatError::Transport {
                platform: PLATFORM,
                detail: format!("{method}: {e}"),
            })?;
        let status = resp.status().as_u16();
        let v: Value = resp.json().await.map_err(|e| ChatError::Malformed {
            platform: PLATFORM,
            method: method.into(),
            detail: e.to_string(),
        })?;
        // Slack answers errors with HTTP 200 and `ok: false`.
        if status != 200 || v["ok"] != json!(true) {
            return Err(ChatError::Platform {
                platform: PLATFORM,
                method: method.into(),
                status,
                description: v["error"].as_str().unwrap_or("").to_string(),
                retry_after: None,
            });
        }
        Ok(v)
    }

    /// A notice only the person who answered sees.
    async fn respond(&self, response_url: &str, text: &str) -> Result<(), ChatError> {
        self.client
            .post(response_url)
            .json(&json!({"response_type": "ephemeral", "replace_original": false, "text": text}))
            .send()
            .await
            .map_err(|e| ChatError::Transport {
                platform: PLATFORM,
                detail: format!("response_url: {e}"),
            })?;
        Ok(())
    }
}

fn blocks(text: &str, buttons: &Buttons) -> Value {
    let mut blocks = vec![json!({"type": "section", "text": {"type": "plain_text", "text": text}})];
    let elements: Vec<Value> = buttons
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, (label, data))| {
            let mut b = json!({
                "type": "button",
                "action_id": format!("airlock_{i}"),
                "text": {"type": "plain_text", "text": label},
                "value": data,
            });
            if label.contains("Deny") {
                b["style"] = json!("danger");
            } else if i == 0 {
                b["style"] = json!("primary");
            }
            b
        })
        .collect();
    if !elements.is_empty() {
        blocks.push(json!({"type": "actions", "block_id": "airlock", "elements": elements}));
    }
    Value::Array(blocks)
}

impl Post for SlackApi {
    async fn send(&self, chat: &str, text: &str, buttons: &Buttons) -> Result<String, ChatError> {
        let v = self
            .call(
                "chat.postMessage",
                json!({"channel": chat, "text": text, "blocks": blocks(text, buttons)}),
            )
            .await?;
        v["ts"]
            .as_str()
            .map(String::from)
            .ok_or_else(|| ChatError::Malformed {
                platform: PLATFORM,
                method: "chat.postMessage".into(),
                detail: "no ts".into(),
            })
    }

    async fn edit_final(&self, chat: &str, message: &str, text: &str) -> Result<(), ChatError> {
        self.call(
            "chat.update",
            json!({"channel": chat, "ts": message, "text": text, "blocks": blocks(text, &[])}),
        )
        .await
        .map(|_| ())
    }
}

/// A running Slack channel.
pub struct Slack {
    task: JoinHandle<()>,
    hook: Arc<Hook>,
    _held: watch::Sender<bool>,
}

impl Drop for Slack {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct Hook {
    courier: Arc<Courier<SlackApi>>,
    secret: Vec<u8>,
    max_skew: Duration,
}

impl Slack {
    pub async fn start(
        broker: Broker,
        cfg: SlackConfig,
        routes: Routes,
    ) -> Result<Slack, ChatError> {
        if cfg.channels.is_empty() || cfg.approvers.is_empty() {
            return Err(ChatError::Config(format!(
                "slack channel {} needs channels to post to and approvers",
                cfg.name
            )));
        }
        if cfg.signing_secret.len() < 16 {
            return Err(ChatError::Config(format!(
                "slack channel {}: the signing secret is too short",
                cfg.name
            )));
        }
        let desk = Desk::new(broker.clone(), cfg.channel(), cfg.approvers.clone()).await?;
        let api = SlackApi {
            client: crate::http::client(Duration::from_secs(10))?,
            base: cfg.base_url.trim_end_matches('/').to_string(),
            token: cfg.token.clone(),
        };
        let courier = Arc::new(Courier {
            desk,
            post: api,
            chats: cfg.channels.clone(),
            routes,
            every: cfg.catch_up_every,
            cmd: "/airlock ",
            max_text: 2900,
        });
        // No poller: answers come to the request URL on any node, and a claim makes every
        // message once, so each node runs the courier.
        let (held, rx) = watch::channel(true);
        let events: broadcast::Receiver<ApprovalEvent> = broker.subscribe();
        let task = tokio::spawn(courier.clone().run(rx, events));
        Ok(Slack {
            task,
            hook: Arc::new(Hook {
                courier,
                secret: cfg.signing_secret,
                max_skew: cfg.max_skew,
            }),
            _held: held,
        })
    }

    /// The endpoint's route at `path` (the daemon mounts `/v1/chat/slack/<name>`), to merge
    /// into any router.
    pub fn router<S: Clone + Send + Sync + 'static>(&self, path: &str) -> axum::Router<S> {
        axum::Router::new()
            .route(path, axum::routing::post(interaction))
            .with_state(self.hook.clone())
    }
}

/// The `X-Slack-Signature` Slack sends for `body` at `ts` (for tests and tools that play Slack).
pub fn sign(secret: &[u8], ts: &str, body: &[u8]) -> String {
    let Ok(mut m) = <Hmac<Sha256> as KeyInit>::new_from_slice(secret) else {
        return String::new();
    };
    m.update(b"v0:");
    m.update(ts.as_bytes());
    m.update(b":");
    m.update(body);
    format!("v0={}", hex::encode(m.finalize().into_bytes()))
}

/// Whether `sig` (`v0=<hex>`) signs `body` sent at `ts` (unix seconds, within `skew` of `now`).
pub fn verify(secret: &[u8], ts: &str, sig: &str, body: &[u8], now_s: i64, skew: Duration) -> bool {
    if !crate::http::within_window(ts, now_s, skew) {
        return false;
    }
    let Some(given) = sig.strip_prefix("v0=").and_then(|h| hex::decode(h).ok()) else {
        return false;
    };
    let Ok(mut m) = <Hmac<Sha256> as KeyInit>::new_from_slice(secret) else {
        return false;
    };
    m.update(b"v0:");
    m.update(ts.as_bytes());
    m.update(b":");
    m.update(body);
    m.verify_slice(&given).is_ok()
}

#[derive(Deserialize)]
struct Payload {
    #[serde(rename = "type")]
    kind: String,
    user: IdOnly,
    #[serde(default)]
    channel: Option<IdOnly>,
    #[serde(default)]
    message: Option<Ts>,
    #[serde(default)]
    actions: Vec<Action>,
    #[serde(default)]
    response_url: Option<String>,
}

#[derive(Deserialize)]
struct IdOnly {
    id: String,
}

#[derive(Deserialize)]
struct Ts {
    ts: String,
}

#[derive(Deserialize)]
struct Action {
    #[serde(default)]
    value: Option<String>,
}

async fn interaction(State(h): State<Arc<Hook>>, headers: HeaderMap, body: Bytes) -> Response {
    if body.len() > MAX_BODY {
        return (StatusCode::PAYLOAD_TOO_LARGE, "too large").into_response();
    }
    let now_s = h.courier.desk.now() / 1000;
    if !verify(
        &h.secret,
        header(&headers, "x-slack-request-timestamp"),
        header(&headers, "x-slack-signature"),
        &body,
        now_s,
        h.max_skew,
    ) {
        return (StatusCode::UNAUTHORIZED, "invalid signature").into_response();
    }
    let form: BTreeMap<String, String> = form_urlencoded::parse(&body).into_owned().collect();
    if let Some(p) = form.get("payload") {
        let Ok(p) = serde_json::from_str::<Payload>(p) else {
            return (StatusCode::BAD_REQUEST, "unreadable payload").into_response();
        };
        if p.kind != "block_actions" {
            return StatusCode::OK.into_response();
        }
        let (Some(chat), Some(msg), Some(data)) = (
            p.channel.as_ref(),
            p.message.as_ref(),
            p.actions.first().and_then(|a| a.value.as_deref()),
        ) else {
            return (StatusCode::BAD_REQUEST, "no action").into_response();
        };
        let reply = h
            .courier
            .desk
            .tap(&p.user.id, &chat.id, &msg.ts, data)
            .await;
        let c = h.courier.clone();
        let url = p.response_url.clone();
        // Off the request: Slack wants its answer within 3 s.
        tokio::spawn(async move {
            if let Some(u) = url
                && let Err(e) = c.post.respond(&u, &reply.text).await
            {
                tracing::warn!(error = %e, "slack response_url failed");
            }
            c.after(&reply).await;
        });
        return StatusCode::OK.into_response();
    }
    if form.contains_key("command") {
        let text = form.get("text").map(String::as_str).unwrap_or("");
        let (Some(user), Some(chat)) = (form.get("user_id"), form.get("channel_id")) else {
            return (StatusCode::BAD_REQUEST, "no user").into_response();
        };
        let Some(t) = crate::command::parse(&format!("/{}", text.trim())) else {
            return axum::Json(json!({"response_type": "ephemeral", "text": "Use: /airlock approve CODE, or /airlock deny CODE reason"})).into_response();
        };
        let reply = h.courier.desk.typed(user, chat, "-", &t).await;
        let c = h.courier.clone();
        let text = reply.text.clone();
        tokio::spawn(async move { c.after(&reply).await });
        return axum::Json(json!({"response_type": "ephemeral", "text": text})).into_response();
    }
    (
        StatusCode::BAD_REQUEST,
        "neither an interaction nor a command",
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_and_the_replay_window() {
        // Slack's documented example
        let secret = b"8f742231b10e8888abcd99yyyzzz85a5";
        let body = b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
        let sig = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
        let w = Duration::from_secs(300);
        assert!(verify(secret, "1531420618", sig, body, 1_531_420_618, w));
        assert!(verify(
            secret,
            "1531420618",
            sig,
            body,
            1_531_420_618 + 299,
            w
        ));
        assert!(
            !verify(secret, "1531420618", sig, body, 1_531_420_618 + 301, w),
            "replayed late"
        );
        assert!(!verify(secret, "1531420619", sig, body, 1_531_420_618, w));
        assert!(!verify(b"other", "1531420618", sig, body, 1_531_420_618, w));
        assert!(!verify(
            secret,
            "1531420618",
            "v0=zz",
            body,
            1_531_420_618,
            w
        ));
        assert!(!verify(secret, "x", sig, body, 1_531_420_618, w));
    }
}
