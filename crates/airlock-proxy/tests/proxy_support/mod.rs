//! Test helpers for the proxy: a loopback upstream that speaks the chat-completions wire format
//! (whole and streamed answers with tool calls, extra vendor fields, exact bytes), and a real
//! gateway with the proxy mounted over a real broker (SQLite in a temporary directory).
//!
//! The upstream answers what the last user message asks for, as JSON:
//! `{"text": "…", "calls": [["bash", "{\"command\":\"ls\"}"], …]}`.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use airlock_confirm::{Broker, BrokerConfig, PolicyProvider};
use airlock_gateway::{AppState, Auth, Role, ServeConfig};
use airlock_grants::{GrantBook, GrantConfig};
use airlock_policy::Policy;
use airlock_proxy::{Proxy, ProxyConfig};
use airlock_store::{Ledger, LedgerConfig, StoreOptions};
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// What the upstream saw: each request's headers and body.
#[derive(Clone, Default)]
pub struct Seen(pub Arc<Mutex<Vec<(HeaderMap, Bytes)>>>);

impl Seen {
    pub fn last(&self) -> (HeaderMap, Bytes) {
        self.0.lock().unwrap().last().cloned().unwrap()
    }
    pub fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

pub struct Upstream {
    pub url: String,
    pub seen: Seen,
}

/// The exact bytes of a whole answer for `spec` (odd spacing and vendor fields on purpose).
pub fn whole_answer(spec: &Value) -> String {
    let text = spec["text"].as_str().unwrap_or("");
    let calls = spec["calls"].as_array().cloned().unwrap_or_default();
    let tcs: Vec<String> = calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            format!(
                r#"{{"id": "call_{i}", "type": "function", "function": {{"name": {}, "arguments": {}}}, "vendor_call_field": 1.50}}"#,
                serde_json::to_string(c[0].as_str().unwrap()).unwrap(),
                serde_json::to_string(c[1].as_str().unwrap()).unwrap()
            )
        })
        .collect();
    let legacy = spec["legacy"].as_bool() == Some(true);
    let (finish, tool_calls) = if legacy && !calls.is_empty() {
        (
            "function_call",
            format!(
                r#", "function_call": {{"name": {}, "arguments": {}}}"#,
                serde_json::to_string(calls[0][0].as_str().unwrap()).unwrap(),
                serde_json::to_string(calls[0][1].as_str().unwrap()).unwrap()
            ),
        )
    } else if tcs.is_empty() {
        ("stop", String::new())
    } else {
        (
            "tool_calls",
            format!(r#", "tool_calls": [{}]"#, tcs.join(", ")),
        )
    };
    format!(
        r#"{{"id": "chatcmpl-test",  "object": "chat.completion", "created": 1700000000, "model": "test-model",
  "choices": [{{"index": 0, "message": {{"role": "assistant", "content": {}{tool_calls}, "refusal": null}}, "logprobs": null, "finish_reason": "{finish}"}}],
  "usage": {{"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}},
  "system_fingerprint": "fp_test", "x_vendor": {{"nested": [1, 2.50, "\u00e9"]}}}}"#,
        if text.is_empty() && !tcs.is_empty() {
            "null".to_string()
        } else {
            serde_json::to_string(text).unwrap()
        }
    )
}

/// The events of a streamed answer for `spec`: role, text in pieces, each call's deltas in
/// pieces (name first, then arguments in three parts), the finish, usage, `[DONE]`.
pub fn stream_events(spec: &Value) -> Vec<String> {
    let env = |choices: Value| {
        json!({"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1700000000,
               "model": "test-model", "system_fingerprint": "fp_s", "choices": choices})
        .to_string()
    };
    let mut out = vec![env(
        json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]),
    )];
    let text = spec["text"].as_str().unwrap_or("");
    for piece in text.as_bytes().chunks(4) {
        let p = String::from_utf8_lossy(piece);
        out.push(env(
            json!([{"index": 0, "delta": {"content": p}, "finish_reason": null}]),
        ));
    }
    let calls = spec["calls"].as_array().cloned().unwrap_or_default();
    if spec["legacy"].as_bool() == Some(true) {
        let c = &calls[0];
        out.push(env(json!([{"index": 0, "delta": {"function_call": {"name": c[0], "arguments": ""}}, "finish_reason": null}])));
        let args = c[1].as_str().unwrap();
        let mid = args.len() / 2;
        for part in [&args[..mid], &args[mid..]] {
            out.push(env(json!([{"index": 0, "delta": {"function_call": {"arguments": part}}, "finish_reason": null}])));
        }
        out.push(env(
            json!([{"index": 0, "delta": {}, "finish_reason": "function_call"}]),
        ));
        return out;
    }
    for (i, c) in calls.iter().enumerate() {
        out.push(env(json!([{"index": 0, "delta": {"tool_calls": [
            {"index": i, "id": format!("call_{i}"), "type": "function",
             "function": {"name": c[0], "arguments": ""}}]}, "finish_reason": null}])));
        let args = c[1].as_str().unwrap();
        let n = args.len();
        let cuts = [0, n / 3, 2 * n / 3, n];
        for w in cuts.windows(2) {
            let part = args.get(w[0]..w[1]).unwrap_or(args);
            out.push(env(json!([{"index": 0, "delta": {"tool_calls": [
                {"index": i, "function": {"arguments": part}}]}, "finish_reason": null}])));
        }
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    out.push(env(
        json!([{"index": 0, "delta": {}, "finish_reason": finish}]),
    ));
    out.push(
        json!({"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1700000000,
               "model": "test-model", "choices": [],
               "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}})
        .to_string(),
    );
    out
}

fn spec_of(body: &Value) -> Value {
    let last_user = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or("{}");
    serde_json::from_str(last_user).unwrap_or_else(|_| json!({"text": last_user}))
}

async fn chat(
    axum::extract::State(seen): axum::extract::State<Seen>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    seen.0.lock().unwrap().push((headers, body.clone()));
    let Ok(req) = serde_json::from_slice::<Value>(&body) else {
        return (
            StatusCode::BAD_REQUEST,
            "{\"error\":{\"message\":\"bad json\"}}",
        )
            .into_response();
    };
    let spec = spec_of(&req);
    if spec["upstream_error"].as_bool() == Some(true) {
        return (
            StatusCode::TOO_MANY_REQUESTS,
            [("content-type", "application/json")],
            r#"{"error": {"message": "slow down", "type": "rate_limit", "code": "rate_limited"}}"#,
        )
            .into_response();
    }
    // A test may ask for another status than 200 on an answer that still carries calls.
    let status = spec["status"]
        .as_u64()
        .and_then(|s| StatusCode::from_u16(s as u16).ok())
        .unwrap_or(StatusCode::OK);
    if req["stream"].as_bool() == Some(true) {
        let events = stream_events(&spec);
        let s =
            futures_util::stream::iter(events.into_iter().enumerate()).then(|(i, e)| async move {
                // Small gaps, so deltas really arrive in separate reads.
                tokio::time::sleep(Duration::from_millis(2)).await;
                let mut frame = String::new();
                if i == 1 {
                    frame.push_str(": upstream ping\n\n");
                }
                frame.push_str(&format!("data: {e}\n\n"));
                Ok::<_, std::convert::Infallible>(Bytes::from(frame))
            });
        let done = futures_util::stream::once(async {
            Ok::<_, std::convert::Infallible>(Bytes::from_static(b"data: [DONE]\n\n"))
        });
        use futures_util::StreamExt;
        return (
            status,
            [("content-type", "text/event-stream")],
            Body::from_stream(s.chain(done)),
        )
            .into_response();
    }
    // A test may ask for an answer's exact bytes (shapes `whole_answer` does not write).
    let answer = match spec["raw_answer"].as_str() {
        Some(raw) => raw.to_string(),
        None => whole_answer(&spec),
    };
    (
        status,
        [
            ("content-type", "application/json"),
            ("x-upstream-header", "kept"),
        ],
        answer,
    )
        .into_response()
}

async fn models(
    axum::extract::State(seen): axum::extract::State<Seen>,
    headers: HeaderMap,
) -> Response {
    seen.0.lock().unwrap().push((headers, Bytes::new()));
    (
        [("content-type", "application/json")],
        r#"{"object": "list", "data": [{"id": "test-model", "object": "model", "created": 1, "owned_by": "test"}]}"#,
    )
        .into_response()
}

/// Starts the upstream on 127.0.0.1:0.
pub async fn upstream() -> Upstream {
    let seen = Seen::default();
    let app = axum::Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/v1/models", get(models))
        .with_state(seen.clone());
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(l, app).await.unwrap();
    });
    Upstream {
        url: format!("http://{addr}/v1"),
        seen,
    }
}

/// The built-in policy with a user layer: `get_weather` declared (read, tier 0), person
/// timeouts of `ask_timeout`.
pub fn policy(ask_timeout: &str) -> PolicyProvider {
    let toml = format!(
        "[[tools]]\nname = \"get_weather\"\nside_effects = \"read\"\ntier = 0\n\n[tiers.2]\ntimeout = \"{ask_timeout}\"\n\n[tiers.3]\ntimeout = \"{ask_timeout}\"\n"
    );
    let layer =
        airlock_policy::Layer::from_str(airlock_policy::LayerKind::User, "<test>", &toml, None)
            .unwrap();
    let p = Arc::new(Policy::from_layers(vec![layer]).unwrap());
    Arc::new(move |_| Ok(p.clone()))
}

pub struct Harness {
    pub url: String,
    pub addr: SocketAddr,
    pub broker: Broker,
    pub agent: String,
    pub approver: String,
    pub upstream: Upstream,
    pub proxy: std::sync::Arc<Proxy>,
    _dir: tempfile::TempDir,
}

/// A gateway with the proxy in front of a fresh upstream; `tune` adjusts the proxy's settings.
pub async fn start(ask_timeout: &str, tune: impl FnOnce(&mut ProxyConfig)) -> Harness {
    start_with(policy(ask_timeout), tune).await
}

/// The built-in policy with `user_toml` as its user layer.
pub fn policy_with(user_toml: &str) -> PolicyProvider {
    let layer =
        airlock_policy::Layer::from_str(airlock_policy::LayerKind::User, "<test>", user_toml, None)
            .unwrap();
    let p = Arc::new(Policy::from_layers(vec![layer]).unwrap());
    Arc::new(move |_| Ok(p.clone()))
}

/// As [`start`], deciding with `policy`.
pub async fn start_with(policy: PolicyProvider, tune: impl FnOnce(&mut ProxyConfig)) -> Harness {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let up = upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let opts = StoreOptions::new(dir.path());
    let ledger = Ledger::open(&opts, LedgerConfig::default()).await.unwrap();
    let db = ledger.db().clone();
    let book = GrantBook::new(db.clone(), GrantConfig::default());
    let broker = Broker::start(ledger, book, policy, BrokerConfig::default())
        .await
        .unwrap();
    let auth = Auth::new(db);
    let agent = auth.create("agent-1", Role::Agent).await.unwrap().secret;
    let approver = auth.create("alice", Role::Approver).await.unwrap().secret;
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let mut pc = ProxyConfig::new(&up.url);
    pc.keepalive = Duration::from_millis(200);
    tune(&mut pc);
    let proxy = Proxy::new(broker.clone(), pc).unwrap();
    let config = ServeConfig {
        listen: addr,
        public_url: None,
        max_body: 1024 * 1024,
    };
    let state = AppState::new(broker.clone(), auth, config);
    let proxy = std::sync::Arc::new(proxy);
    let serving = proxy.clone();
    tokio::spawn(async move {
        airlock_proxy::serve(l, state, serving, std::future::pending::<()>())
            .await
            .unwrap();
    });
    Harness {
        url: format!("http://{addr}"),
        addr,
        broker,
        agent,
        approver,
        upstream: up,
        proxy,
        _dir: dir,
    }
}

impl Harness {
    /// The directory holding the ledger's files.
    pub fn data_dir(&self) -> &std::path::Path {
        self._dir.path()
    }

    pub fn u(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    /// Every receipt recorded so far, decoded.
    pub async fn all_receipts(&self) -> Vec<Value> {
        let rows = self
            .broker
            .ledger()
            .db()
            .receipts(0, 100_000)
            .await
            .unwrap();
        rows.iter()
            .map(|r| serde_json::from_str(&r.body).unwrap())
            .collect()
    }

    /// Decision receipts recorded so far: all but the clean inbound-scan receipts, which the
    /// proxy appends in the background (see `clean_receipts`).
    pub async fn receipts(&self) -> Vec<Value> {
        let mut rs = self.all_receipts().await;
        rs.retain(|r| !is_clean_scan(r));
        rs
    }

    /// Waits (up to 10 s) until `n` clean inbound-scan receipts are recorded; returns them.
    pub async fn clean_receipts(&self, n: usize) -> Vec<Value> {
        for _ in 0..200 {
            let rs: Vec<Value> = self
                .all_receipts()
                .await
                .into_iter()
                .filter(is_clean_scan)
                .collect();
            if rs.len() >= n {
                return rs;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("fewer than {n} clean inbound-scan receipts after 10 s");
    }

    /// Waits for a pending approval and answers it as the approver over REST.
    pub async fn answer_next(&self, decision: &str) -> Value {
        let c = client();
        for _ in 0..200 {
            let list: Value = c
                .get(self.u("/v1/approvals"))
                .bearer_auth(&self.approver)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if let Some(a) = list
                .as_array()
                .and_then(|l| l.first())
                .or_else(|| list["approvals"].as_array().and_then(|l| l.first()))
            {
                let id = a["id"].as_str().unwrap().to_string();
                let r = c
                    .post(self.u(&format!("/v1/approvals/{id}")))
                    .bearer_auth(&self.approver)
                    .json(&json!({"decision": decision, "reason": "test answer"}))
                    .send()
                    .await
                    .unwrap();
                assert!(r.status().is_success(), "answer: {}", r.status());
                return a.clone();
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("no approval appeared");
    }
}

pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().unwrap()
}

/// A chat request whose user message is `spec`.
pub fn request(spec: Value, stream: bool) -> Value {
    json!({
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "You are a test."},
            {"role": "user", "content": spec.to_string()}
        ],
        "stream": stream,
        "x_client_field": {"kept": true},
        "tools": [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]
    })
}

/// A receipt of the proxy's inbound scanner for clean texts (no reasons, decision allow).
pub fn is_clean_scan(r: &Value) -> bool {
    r["tool"] == "airlock.proxy.inbound_text"
        && r["decision"] == "allow"
        && r["reasons"].as_array().is_none_or(|a| a.is_empty())
}
