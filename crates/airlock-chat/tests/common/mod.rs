//! Test support: a broker on a real SQLite file or a fresh PostgreSQL database, and a local
//! server speaking the Telegram Bot API's JSON (`POST /bot<token>/<method>`, `{"ok": …}`
//! envelopes, long-polled `getUpdates` honouring `offset`), reached by real reqwest over
//! loopback. It can answer a poll with 409 (another poller) or cut a poll's answer mid-body.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use airlock_chat::TelegramConfig;
use airlock_confirm::{Broker, BrokerConfig, PolicyProvider, Submission};
use airlock_core::Action;
use airlock_grants::{GrantBook, GrantConfig};
use airlock_policy::{Channel, Layer, LayerKind, Policy};
use airlock_store::{Ledger, LedgerConfig, StoreOptions};
use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::sync::Notify;

pub const TOKEN: &str = "123456:TEST-token_abc";
pub const CHAT: i64 = -1_001_234;
pub const ALICE: i64 = 111;
pub const MALLORY: i64 = 666;

/// Tier 3 asks a person with time to tap; `late` asks with one second.
pub const POLICY: &str = r#"
[[rules]]
id = "t3"
shell = "tier3 *"
decision = "ask"
tier = 3

[[rules]]
id = "t4"
shell = "tier4 *"
decision = "ask"
tier = 4

[[rules]]
id = "chain"
shell = "chain *"
decision = "ask"
tier = 1

[[rules]]
id = "late"
shell = "late *"
decision = "ask"
tier = 2

[tiers.1]
confirm = "human"
timeout = "10s"
[tiers.2]
confirm = "human"
timeout = "1s"
[tiers.3]
confirm = "human"
timeout = "30s"
[tiers.4]
confirm = "human"
timeout = "30s"
deliberate = true
"#;

pub fn policy() -> PolicyProvider {
    policy_of(POLICY)
}

/// A provider serving the user layer `text` on the built-in policy.
pub fn policy_of(text: &str) -> PolicyProvider {
    let layer = Layer::from_str(LayerKind::User, "<test>", text, None).unwrap();
    let p = Arc::new(Policy::from_layers(vec![layer]).unwrap());
    Arc::new(move |_cwd: Option<&Path>| Ok(p.clone()))
}

pub async fn broker_at(dir: &Path, database: Option<String>, node: &str) -> Broker {
    broker_with(dir, database, node, policy()).await
}

/// A broker on `dir` (or `database`) judging by `policy`.
pub async fn broker_with(
    dir: &Path,
    database: Option<String>,
    node: &str,
    policy: PolicyProvider,
) -> Broker {
    let ledger = Ledger::open(
        &StoreOptions::new(dir).with_database(database),
        LedgerConfig::default(),
    )
    .await
    .unwrap();
    let book = GrantBook::new(ledger.db().clone(), GrantConfig::default());
    let config = BrokerConfig {
        node: node.into(),
        sweep_every: Duration::from_millis(100),
        ..BrokerConfig::default()
    };
    Broker::start(ledger, book, policy, config).await.unwrap()
}

pub fn sub(session: &str, command: &str) -> Submission {
    Submission {
        request_id: None,
        agent: "claude".into(),
        session: session.into(),
        action: Action::shell(command),
        cwd: None,
        channel: Channel::Terminal,
    }
}

pub fn config(base_url: &str) -> TelegramConfig {
    let mut c = TelegramConfig::new("ops", TOKEN);
    c.base_url = base_url.into();
    c.chats = vec![CHAT.to_string()];
    c.approvers = BTreeMap::from([(ALICE.to_string(), "alice".to_string())]);
    c.poll_timeout = Duration::from_secs(1);
    c.lease_ttl = Duration::from_millis(900);
    c.catch_up_every = Duration::from_millis(300);
    c
}

/// What the fake Bot API saw and will answer.
#[derive(Default)]
pub struct Seen {
    /// Updates not yet confirmed (`offset` past them).
    pub queue: Vec<Value>,
    pub next_update: i64,
    pub next_message: i64,
    /// Every call: (method, body).
    pub calls: Vec<(String, Value)>,
    /// Polls still to answer with HTTP 409.
    pub conflicts: u32,
    /// Polls still to cut mid-body.
    pub drops: u32,
    /// `sendMessage` calls still to fail with HTTP 500.
    pub fail_sends: u32,
}

#[derive(Clone)]
pub struct Bot {
    pub seen: Arc<Mutex<Seen>>,
    pub wake: Arc<Notify>,
    pub url: String,
    pub token: String,
}

impl Bot {
    pub async fn start() -> Bot {
        Bot::start_with(TOKEN).await
    }

    /// A bot server accepting only `token`.
    pub async fn start_with(token: &str) -> Bot {
        let bot = Bot {
            token: token.to_string(),
            seen: Arc::new(Mutex::new(Seen {
                next_update: 1000,
                next_message: 1,
                ..Seen::default()
            })),
            wake: Arc::new(Notify::new()),
            url: String::new(),
        };
        let app = axum::Router::new()
            .route("/{bot}/{method}", post(method))
            .with_state(bot.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Bot {
            url: format!("http://{addr}"),
            ..bot
        }
    }

    fn push(&self, kind: &str, body: Value) {
        let mut s = self.seen.lock().unwrap();
        s.next_update += 1;
        let id = s.next_update;
        s.queue.push(json!({ "update_id": id, kind: body }));
        drop(s);
        self.wake.notify_waiters();
    }

    /// A tap by `user` on button data `data` of message `message` in `chat`.
    pub fn tap(&self, user: i64, chat: i64, message: i64, data: &str) -> String {
        let id = format!("cbq-{user}-{message}-{}", data.len() + rand_u32() as usize);
        self.push(
            "callback_query",
            json!({
                "id": id,
                "from": {"id": user, "is_bot": false, "first_name": "T", "username": format!("u{user}")},
                "message": {
                    "message_id": message,
                    "from": {"id": 42, "is_bot": true, "first_name": "airlock"},
                    "chat": {"id": chat, "type": "supergroup", "title": "ops"},
                    "date": 1_800_000_000,
                    "text": "airlock: …"
                },
                "chat_instance": "-7",
                "data": data
            }),
        );
        id
    }

    /// A text message by `user` in `chat`.
    pub fn say(&self, user: i64, chat: i64, text: &str) {
        let mid = 900 + i64::from(rand_u32() % 1000);
        self.push(
            "message",
            json!({
                "message_id": mid,
                "from": {"id": user, "is_bot": false, "first_name": "T"},
                "chat": {"id": chat, "type": "supergroup", "title": "ops"},
                "date": 1_800_000_000,
                "text": text
            }),
        );
    }

    pub fn calls(&self, m: &str) -> Vec<Value> {
        self.seen
            .lock()
            .unwrap()
            .calls
            .iter()
            .filter(|(name, _)| name == m)
            .map(|(_, b)| b.clone())
            .collect()
    }

    /// Waits until `m` was called at least `n` times; returns those calls.
    pub async fn wait_calls(&self, m: &str, n: usize) -> Vec<Value> {
        for _ in 0..400 {
            let c = self.calls(m);
            if c.len() >= n {
                return c;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("{m} was called {} times, not {n}", self.calls(m).len());
    }
}

fn rand_u32() -> u32 {
    let mut b = [0u8; 4];
    getrandom::fill(&mut b).unwrap();
    u32::from_le_bytes(b)
}

/// The button data of the sent message `m` whose label starts with `label`.
pub fn button(m: &Value, label: &str) -> Option<String> {
    m["reply_markup"]["inline_keyboard"]
        .as_array()?
        .iter()
        .flat_map(|row| row.as_array().cloned().unwrap_or_default())
        .find(|b| b["text"].as_str().is_some_and(|t| t.contains(label)))
        .and_then(|b| b["callback_data"].as_str().map(String::from))
}

fn ok(result: Value) -> Response {
    Json(json!({"ok": true, "result": result})).into_response()
}

fn fail(status: StatusCode, description: &str) -> Response {
    (
        status,
        Json(json!({"ok": false, "error_code": status.as_u16(), "description": description})),
    )
        .into_response()
}

async fn method(
    State(bot): State<Bot>,
    UrlPath((prefix, m)): UrlPath<(String, String)>,
    Json(body): Json<Value>,
) -> Response {
    if prefix != format!("bot{}", bot.token) {
        return fail(StatusCode::UNAUTHORIZED, "Unauthorized");
    }
    bot.seen
        .lock()
        .unwrap()
        .calls
        .push((m.clone(), body.clone()));
    match m.as_str() {
        "getUpdates" => get_updates(&bot, &body).await,
        "sendMessage" => {
            let mut s = bot.seen.lock().unwrap();
            if s.fail_sends > 0 {
                s.fail_sends -= 1;
                return fail(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error");
            }
            s.next_message += 1;
            let id = s.next_message;
            ok(json!({
                "message_id": id,
                "from": {"id": 42, "is_bot": true, "first_name": "airlock"},
                "chat": {"id": body["chat_id"].as_str().and_then(|c| c.parse::<i64>().ok()).unwrap_or(0), "type": "supergroup"},
                "date": 1_800_000_000,
                "text": body["text"]
            }))
        }
        "answerCallbackQuery" => ok(json!(true)),
        "editMessageText" => ok(json!({
            "message_id": body["message_id"],
            "chat": {"id": 0, "type": "supergroup"},
            "date": 1_800_000_000,
            "text": body["text"]
        })),
        _ => fail(StatusCode::NOT_FOUND, "Not Found: method not found"),
    }
}

async fn get_updates(bot: &Bot, body: &Value) -> Response {
    let offset = body["offset"].as_i64();
    let timeout = Duration::from_secs(body["timeout"].as_u64().unwrap_or(0).min(2));
    {
        let mut s = bot.seen.lock().unwrap();
        if s.conflicts > 0 {
            s.conflicts -= 1;
            return fail(
                StatusCode::CONFLICT,
                "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
            );
        }
        if s.drops > 0 {
            s.drops -= 1;
            // Half an answer, then the connection breaks.
            let parts: Vec<Result<Bytes, std::io::Error>> = vec![
                Ok(Bytes::from_static(
                    b"{\"ok\":true,\"result\":[{\"update_id\":",
                )),
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "cut",
                )),
            ];
            return Response::builder()
                .header("content-type", "application/json")
                .body(Body::from_stream(futures_util::stream::iter(parts)))
                .unwrap();
        }
    }
    let take = |bot: &Bot| {
        let mut s = bot.seen.lock().unwrap();
        if let Some(o) = offset {
            // Telegram forgets updates below the offset: they are confirmed.
            s.queue
                .retain(|u| u["update_id"].as_i64().unwrap_or(0) >= o);
        }
        s.queue.clone()
    };
    let wake = bot.wake.notified();
    let now = take(bot);
    if !now.is_empty() {
        return ok(Value::Array(now));
    }
    let _ = tokio::time::timeout(timeout, wake).await;
    ok(Value::Array(take(bot)))
}

/// A second bot (`admins`) for chains, on its own server.
pub fn admins_config(bot: &Bot) -> TelegramConfig {
    let mut c = config(&bot.url);
    c.name = "admins".into();
    c.token = bot.token.clone();
    c
}

/// One POST to the SMS gateway: its Authorization header and JSON body.
pub type SmsPost = (Option<String>, Value);

/// An SMS gateway: records each POST's JSON body and bearer key.
#[derive(Clone, Default)]
pub struct Sms {
    pub seen: Arc<Mutex<Vec<SmsPost>>>,
    pub url: String,
}

impl Sms {
    pub async fn start() -> Sms {
        let sms = Sms::default();
        let app = axum::Router::new()
            .route(
                "/v1/sms",
                post(
                    |State(s): State<Sms>,
                     headers: axum::http::HeaderMap,
                     Json(body): Json<Value>| async move {
                        let auth = headers
                            .get("authorization")
                            .and_then(|v| v.to_str().ok())
                            .map(String::from);
                        s.seen.lock().unwrap().push((auth, body));
                        Json(json!({"status": "queued"}))
                    },
                ),
            )
            .with_state(sms.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Sms {
            url: format!("http://{addr}/v1/sms"),
            ..sms
        }
    }

    pub fn config(&self) -> airlock_chat::EmergencyConfig {
        airlock_chat::EmergencyConfig {
            name: "sms".into(),
            url: self.url.clone(),
            api_key: Some("sms-key".into()),
            from: "+15550000".into(),
            to: vec!["+15551111".into()],
            inbox_url: Some("https://airlock.example/inbox".into()),
            every: Duration::from_millis(100),
        }
    }

    pub async fn wait(&self, n: usize) -> Vec<SmsPost> {
        for _ in 0..400 {
            if self.seen.lock().unwrap().len() >= n {
                return self.seen.lock().unwrap().clone();
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!(
            "the SMS gateway got {} posts, not {n}",
            self.seen.lock().unwrap().len()
        );
    }
}
