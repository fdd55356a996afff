//! Test helpers: a broker on a real SQLite file or a fresh PostgreSQL database, with a test
//! policy whose rules ask at each tier; a local chat-completions server; a webhook receiver.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use airlock_confirm::{
    Answer, AnswerScope, Broker, BrokerConfig, Choice, LlmConfig, PolicyProvider, Principal, Role,
    Submission,
};
use airlock_core::Action;
use airlock_grants::{GrantBook, GrantConfig};
use airlock_policy::{Channel, Layer, LayerKind, Policy};
use airlock_store::{Ledger, LedgerConfig, LedgerStore, StoreOptions};
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};

/// Asks at each tier (`tierN …`), with short timeouts so tests see them pass.
pub const POLICY: &str = r#"
[[rules]]
id = "t1"
shell = "tier1 *"
decision = "ask"
tier = 1

[[rules]]
id = "t2"
shell = "tier2 *"
decision = "ask"
tier = 2

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
id = "nope"
shell = "forbidden *"
decision = "deny"
tier = 3
message = "forbidden in tests"

[tiers.1]
confirm = "llm"
timeout = "5s"
[tiers.2]
confirm = "llm+human"
timeout = "5s"
[tiers.3]
confirm = "human"
timeout = "2s"
[tiers.4]
confirm = "human"
timeout = "5s"
deliberate = true
"#;

pub fn policy(extra: &str) -> PolicyProvider {
    policy_text(&format!("{POLICY}\n{extra}"))
}

/// A provider serving the user layer `text` on the built-in policy.
pub fn policy_text(text: &str) -> PolicyProvider {
    let layer = Layer::from_str(LayerKind::User, "<test>", text, None).unwrap();
    let p = Arc::new(Policy::from_layers(vec![layer]).unwrap());
    Arc::new(move |_cwd: Option<&Path>| Ok(p.clone()))
}

pub async fn open_ledger(dir: &Path, database: Option<String>) -> Ledger {
    Ledger::open(
        &StoreOptions::new(dir).with_database(database),
        LedgerConfig::default(),
    )
    .await
    .unwrap()
}

pub async fn broker_at(
    dir: &Path,
    database: Option<String>,
    policy: PolicyProvider,
    config: BrokerConfig,
) -> Broker {
    let ledger = open_ledger(dir, database).await;
    let book = GrantBook::new(ledger.db().clone(), GrantConfig::default());
    Broker::start(ledger, book, policy, config).await.unwrap()
}

/// A broker on a fresh SQLite file with the test policy.
pub async fn sqlite_broker(config: BrokerConfig) -> (Broker, tempfile::TempDir) {
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, policy(""), config).await;
    (b, d)
}

pub fn sub(agent: &str, session: &str, command: &str) -> Submission {
    Submission {
        request_id: None,
        agent: agent.into(),
        session: session.into(),
        action: Action::shell(command),
        cwd: None,
        channel: Channel::Terminal,
    }
}

pub fn person(name: &str) -> Principal {
    Principal::new(name, Role::Approver)
}

pub fn approve(by: &str) -> Answer {
    Answer {
        by: person(by),
        decision: Choice::Approve,
        scope: AnswerScope::Once,
        reason: String::new(),
        code: None,
        action_sha256: None,
        via: None,
    }
}

pub fn deny(by: &str, reason: &str) -> Answer {
    Answer {
        decision: Choice::Deny,
        reason: reason.into(),
        ..approve(by)
    }
}

/// How many receipts the ledger holds for this request id (0 or 1).
pub async fn receipts_for(b: &Broker, request_id: &str) -> usize {
    let id = airlock_ledger::receipt::receipt_id(request_id);
    usize::from(b.ledger().receipt(&id).await.unwrap().is_some())
}

/// The receipt recorded for an approval, parsed.
pub async fn approval_receipt(b: &Broker, approval: &str) -> airlock_ledger::Receipt {
    let id = airlock_ledger::receipt::receipt_id(&format!("approval:{approval}"));
    let stored = b
        .ledger()
        .receipt(&id)
        .await
        .unwrap()
        .expect("receipt recorded");
    serde_json::from_str(&stored.body).unwrap()
}

/// What the fake chat-completions server answers.
#[derive(Clone)]
pub enum Reply {
    /// The message content, in a well-formed chat-completions body.
    Content(String),
    /// HTTP 500.
    Fail,
    /// Sleeps this long, then answers approve.
    Slow(Duration),
}

#[derive(Clone)]
pub struct Llm {
    pub reply: Arc<Mutex<Reply>>,
    /// Every request body received.
    pub seen: Arc<Mutex<Vec<Value>>>,
    pub auth: Arc<Mutex<Vec<Option<String>>>>,
}

pub fn verdict(decision: &str, risk: f64) -> Reply {
    Reply::Content(
        json!({"decision": decision, "risk": risk, "rationale": format!("test says {decision}")})
            .to_string(),
    )
}

async fn completions(
    State(llm): State<Llm>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> (StatusCode, Json<Value>) {
    llm.seen.lock().unwrap().push(body.clone());
    llm.auth.lock().unwrap().push(
        headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(String::from),
    );
    let reply = llm.reply.lock().unwrap().clone();
    let content = match reply {
        Reply::Fail => {
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                Json(json!({"error": {"message": "boom"}})),
            );
        }
        Reply::Slow(d) => {
            tokio::time::sleep(d).await;
            json!({"decision": "approve", "risk": 0.1, "rationale": "late"}).to_string()
        }
        Reply::Content(c) => c,
    };
    (
        StatusCode::OK,
        Json(json!({
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 1_800_000_000,
            "model": body["model"],
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop"
            }],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
        })),
    )
}

/// A chat-completions server on 127.0.0.1:0; returns its state and base URL (`…/v1`).
pub async fn llm_server(reply: Reply) -> (Llm, String) {
    let llm = Llm {
        reply: Arc::new(Mutex::new(reply)),
        seen: Arc::new(Mutex::new(Vec::new())),
        auth: Arc::new(Mutex::new(Vec::new())),
    };
    let app = axum::Router::new()
        .route("/v1/chat/completions", post(completions))
        .with_state(llm.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (llm, format!("http://{addr}/v1"))
}

pub fn llm_config(base_url: &str, timeout: Duration) -> LlmConfig {
    LlmConfig {
        base_url: base_url.into(),
        model: "test-model".into(),
        api_key_env: None,
        timeout,
    }
}
