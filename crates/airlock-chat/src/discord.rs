//! The Discord channel: messages with buttons (message components) posted with the bot token
//! (`POST /channels/{id}/messages`), closed with `PATCH /channels/{id}/messages/{id}`; answers
//! arrive at the application's interactions endpoint on this daemon, signed with Ed25519:
//! `X-Signature-Ed25519` over `X-Signature-Timestamp` + body under the application's public
//! key (refused when the timestamp is more than 300 s away). PING is answered with PONG; a
//! button (type 3) and the `/approve` and `/deny` commands (type 2, options `code` and
//! `reason`) are answered within Discord's 3 s with an ephemeral message, and the requests'
//! messages are edited afterwards, off the request.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use airlock_confirm::Broker;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use ed25519_dalek::{Signature, Verifier, VerifyingKey};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::ChatError;
use crate::courier::{Buttons, Courier, Post};
use crate::desk::Desk;
use crate::http::header;
use crate::route::Routes;

const PLATFORM: &str = "Discord";

/// The most an interaction may carry.
pub const MAX_BODY: usize = 64 * 1024;

/// Ephemeral: only the person who answered sees the reply.
const EPHEMERAL: u64 = 64;

/// One Discord application.
#[derive(Clone)]
pub struct DiscordConfig {
    pub name: String,
    /// The bot token.
    pub token: String,
    /// The application's public key (32 bytes; hex in the developer portal).
    pub public_key: [u8; 32],
    /// `https://discord.com/api/v10` (a local server in tests).
    pub base_url: String,
    /// Channel ids the requests are posted to.
    pub channels: Vec<String>,
    /// Discord user id → airlock approver name.
    pub approvers: BTreeMap<String, String>,
    pub catch_up_every: Duration,
    pub max_skew: Duration,
}

impl DiscordConfig {
    pub fn new(name: &str, token: &str, public_key: [u8; 32]) -> DiscordConfig {
        DiscordConfig {
            name: name.into(),
            token: token.into(),
            public_key,
            base_url: "https://discord.com/api/v10".into(),
            channels: Vec::new(),
            approvers: BTreeMap::new(),
            catch_up_every: Duration::from_secs(1),
            max_skew: Duration::from_secs(300),
        }
    }

    pub fn channel(&self) -> String {
        format!("discord:{}", self.name)
    }
}

impl std::fmt::Debug for DiscordConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiscordConfig")
            .field("name", &self.name)
            .field("token", &"<redacted>")
            .field("channels", &self.channels)
            .field("approvers", &self.approvers)
            .finish()
    }
}

/// The REST calls airlock makes.
#[derive(Clone)]
pub struct DiscordApi {
    client: reqwest::Client,
    base: String,
    token: String,
}

impl DiscordApi {
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Value,
    ) -> Result<Value, ChatError> {
        let resp = self
            .client
            .request(method, format!("{}{path}", self.base))
            .header("authorization", format!("Bot {}", self.token))
            .json(&body)
            .send()
            .await
            .map_err(|e| ChatError::Transport {
                platform: PLATFORM,
                detail: e.to_string(),
            })?;
        let status = resp.status().as_u16();
        let v: Value = resp.json().await.unwrap_or(Value::Null);
        if !(200..300).contains(&status) {
            return Err(ChatError::Platform {
                platform: PLATFORM,
                method: path.into(),
                status,
                description: v["message"].as_str().unwrap_or("").to_string(),
                retry_after: v["retry_after"].as_f64().map(|s| s.ceil() as u64),
            });
        }
        Ok(v)
    }
}

fn components(buttons: &Buttons) -> Value {
    let rows: Vec<Value> = buttons
        .iter()
        .map(|row| {
            let b: Vec<Value> = row
                .iter()
                .map(|(label, data)| {
                    // 3 success, 4 danger
                    let style = if label.contains("Deny") { 4 } else { 3 };
                    json!({"type": 2, "style": style, "label": label, "custom_id": data})
                })
                .collect();
            json!({"type": 1, "components": b})
        })
        .collect();
    Value::Array(rows)
}

impl Post for DiscordApi {
    async fn send(&self, chat: &str, text: &str, buttons: &Buttons) -> Result<String, ChatError> {
        let v = self
            .call(
                reqwest::Method::POST,
                &format!("/channels/{chat}/messages"),
                json!({"content": text, "components": components(buttons), "allowed_mentions": {"parse": []}}),
            )
            .await?;
        v["id"]
            .as_str()
            .map(String::from)
            .ok_or_else(|| ChatError::Malformed {
                platform: PLATFORM,
                method: "create message".into(),
                detail: "no id".into(),
            })
    }

    async fn edit_final(&self, chat: &str, message: &str, text: &str) -> Result<(), ChatError> {
        self.call(
            reqwest::Method::PATCH,
            &format!("/channels/{chat}/messages/{message}"),
            json!({"content": text, "components": []}),
        )
        .await
        .map(|_| ())
    }
}

/// A running Discord channel.
pub struct Discord {
    task: JoinHandle<()>,
    hook: Arc<Hook>,
    _held: watch::Sender<bool>,
}

impl Drop for Discord {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct Hook {
    courier: Arc<Courier<DiscordApi>>,
    key: VerifyingKey,
    max_skew: Duration,
}

impl Discord {
    pub async fn start(
        broker: Broker,
        cfg: DiscordConfig,
        routes: Routes,
    ) -> Result<Discord, ChatError> {
        if cfg.channels.is_empty() || cfg.approvers.is_empty() {
            return Err(ChatError::Config(format!(
                "discord channel {} needs channels to post to and approvers",
                cfg.name
            )));
        }
        let key = VerifyingKey::from_bytes(&cfg.public_key).map_err(|e| {
            ChatError::Config(format!("discord channel {}: bad public key: {e}", cfg.name))
        })?;
        let desk = Desk::new(broker.clone(), cfg.channel(), cfg.approvers.clone()).await?;
        let api = DiscordApi {
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
            cmd: "/",
            max_text: 1900,
        });
        let (held, rx) = watch::channel(true);
        let task = tokio::spawn(courier.clone().run(rx, broker.subscribe()));
        Ok(Discord {
            task,
            hook: Arc::new(Hook {
                courier,
                key,
                max_skew: cfg.max_skew,
            }),
            _held: held,
        })
    }

    /// The endpoint's route at `path` (the daemon mounts `/v1/chat/discord/<name>`), to merge
    /// into any router.
    pub fn router<S: Clone + Send + Sync + 'static>(&self, path: &str) -> axum::Router<S> {
        axum::Router::new()
            .route(path, axum::routing::post(interaction))
            .with_state(self.hook.clone())
    }
}

/// Whether `sig_hex` is the Ed25519 signature of `ts` + `body` under `key`, with `ts` (unix
/// seconds) within `skew` of `now_s`.
pub fn verify(
    key: &VerifyingKey,
    ts: &str,
    sig_hex: &str,
    body: &[u8],
    now_s: i64,
    skew: Duration,
) -> bool {
    if !crate::http::within_window(ts, now_s, skew) {
        return false;
    }
    let Some(sig) = hex::decode(sig_hex)
        .ok()
        .and_then(|b| Signature::from_slice(&b).ok())
    else {
        return false;
    };
    let mut msg = Vec::with_capacity(ts.len() + body.len());
    msg.extend_from_slice(ts.as_bytes());
    msg.extend_from_slice(body);
    key.verify(&msg, &sig).is_ok()
}

#[derive(Deserialize)]
struct Interaction {
    #[serde(rename = "type")]
    kind: u8,
    #[serde(default)]
    channel_id: Option<String>,
    #[serde(default)]
    member: Option<Member>,
    #[serde(default)]
    user: Option<User>,
    #[serde(default)]
    message: Option<MessageRef>,
    #[serde(default)]
    data: Option<Data>,
}

#[derive(Deserialize)]
struct Member {
    user: User,
}

#[derive(Deserialize)]
struct User {
    id: String,
}

#[derive(Deserialize)]
struct MessageRef {
    id: String,
}

#[derive(Deserialize)]
struct Data {
    #[serde(default)]
    custom_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    options: Vec<Opt>,
}

#[derive(Deserialize)]
struct Opt {
    name: String,
    #[serde(default)]
    value: Value,
}

fn ephemeral(text: &str) -> Response {
    axum::Json(json!({"type": 4, "data": {"content": text, "flags": EPHEMERAL}})).into_response()
}

async fn interaction(State(h): State<Arc<Hook>>, headers: HeaderMap, body: Bytes) -> Response {
    if body.len() > MAX_BODY {
        return (StatusCode::PAYLOAD_TOO_LARGE, "too large").into_response();
    }
    if !verify(
        &h.key,
        header(&headers, "x-signature-timestamp"),
        header(&headers, "x-signature-ed25519"),
        &body,
        h.courier.desk.now() / 1000,
        h.max_skew,
    ) {
        return (StatusCode::UNAUTHORIZED, "invalid request signature").into_response();
    }
    let Ok(i) = serde_json::from_slice::<Interaction>(&body) else {
        return (StatusCode::BAD_REQUEST, "unreadable interaction").into_response();
    };
    let user = i
        .member
        .map(|m| m.user.id)
        .or(i.user.map(|u| u.id))
        .unwrap_or_default();
    let chat = i.channel_id.unwrap_or_default();
    let reply = match (i.kind, i.data) {
        (1, _) => return axum::Json(json!({"type": 1})).into_response(),
        (3, Some(d)) => {
            let (Some(data), Some(m)) = (d.custom_id, i.message) else {
                return (StatusCode::BAD_REQUEST, "no button").into_response();
            };
            h.courier.desk.tap(&user, &chat, &m.id, &data).await
        }
        (2, Some(d)) => {
            let opt = |n: &str| {
                d.options
                    .iter()
                    .find(|o| o.name == n)
                    .and_then(|o| o.value.as_str())
                    .unwrap_or("")
                    .to_string()
            };
            let line = format!(
                "/{} {} {}",
                d.name.as_deref().unwrap_or(""),
                opt("code"),
                opt("reason")
            );
            let Some(t) = crate::command::parse(&line) else {
                return ephemeral("Use /approve code:CODE or /deny code:CODE reason:…");
            };
            h.courier.desk.typed(&user, &chat, "-", &t).await
        }
        _ => return ephemeral("airlock does not handle this interaction."),
    };
    let text = reply.text.clone();
    let c = h.courier.clone();
    // Off the request: Discord wants its answer within 3 s.
    tokio::spawn(async move { c.after(&reply).await });
    ephemeral(&text)
}
