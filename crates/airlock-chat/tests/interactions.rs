//! Slack and Discord end to end: a broker on a real SQLite file, local servers speaking each
//! platform's Web/REST API JSON (reached by real reqwest), and the daemon's interactions
//! endpoints served on loopback receiving the platforms' real payload shapes, signed as the
//! platforms sign them (Slack v0 HMAC-SHA256, Discord Ed25519): taps that approve, bad
//! signatures, stale timestamps, replays, strangers, typed commands, and the 3 s answer while
//! the platform's own API is slow.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use airlock_chat::Routes;
use airlock_chat::discord::{Discord, DiscordConfig};
use airlock_chat::slack::{Slack, SlackConfig};
use airlock_confirm::{Broker, Ruling};
use axum::Json;
use axum::extract::{Path as UrlPath, State};
use axum::routing::{patch, post};
use ed25519_dalek::{Signer, SigningKey};
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};

use crate::common::{broker_at, sub};

const SECRET: &[u8] = b"8f742231b10e8888abcd99yyyzzz85a5";
const SLACK_CHANNEL: &str = "C0AIRLOCK";
const SLACK_ALICE: &str = "U0ALICE";
const DISCORD_CHANNEL: &str = "1100000000000000001";
const DISCORD_ALICE: &str = "2200000000000000002";

/// What a fake platform API saw: (path, body) in order; `slow` delays edits and notices.
#[derive(Clone, Default)]
struct Platform {
    calls: Arc<Mutex<Vec<(String, Value)>>>,
    slow: Arc<Mutex<Duration>>,
    url: String,
}

impl Platform {
    fn calls(&self, path_part: &str) -> Vec<Value> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|(p, _)| p.contains(path_part))
            .map(|(_, b)| b.clone())
            .collect()
    }

    async fn wait(&self, path_part: &str, n: usize) -> Vec<Value> {
        for _ in 0..400 {
            let c = self.calls(path_part);
            if c.len() >= n {
                return c;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!(
            "{path_part}: {} calls, not {n}",
            self.calls(path_part).len()
        );
    }

    async fn record(&self, path: String, body: Value, delayed: bool) {
        let d = *self.slow.lock().unwrap();
        if delayed && !d.is_zero() {
            tokio::time::sleep(d).await;
        }
        self.calls.lock().unwrap().push((path, body));
    }
}

async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

async fn slack_api() -> Platform {
    let p = Platform::default();
    let app = axum::Router::new()
        .route(
            "/api/{method}",
            post(|State(p): State<Platform>, UrlPath(m): UrlPath<String>, Json(b): Json<Value>| async move {
                let n = p.calls.lock().unwrap().len();
                let reply = match m.as_str() {
                    "chat.postMessage" => json!({"ok": true, "channel": b["channel"], "ts": format!("1800000000.{n:06}"), "message": {"text": b["text"]}}),
                    "chat.update" => json!({"ok": true, "channel": b["channel"], "ts": b["ts"]}),
                    _ => json!({"ok": false, "error": "unknown_method"}),
                };
                p.record(m.clone(), b, m == "chat.update").await;
                Json(reply)
            }),
        )
        .route(
            "/response/{id}",
            post(|State(p): State<Platform>, Json(b): Json<Value>| async move {
                p.record("response".into(), b, true).await;
                "ok"
            }),
        )
        .with_state(p.clone());
    let url = serve(app).await;
    Platform { url, ..p }
}

async fn discord_api() -> Platform {
    let p = Platform::default();
    let app = axum::Router::new()
        .route(
            "/api/channels/{c}/messages",
            post(|State(p): State<Platform>, UrlPath(c): UrlPath<String>, Json(b): Json<Value>| async move {
                let n = p.calls.lock().unwrap().len();
                let id = format!("33000000000000{n:05}");
                p.record(format!("create {c}"), b.clone(), false).await;
                Json(json!({"id": id, "channel_id": c, "content": b["content"], "components": b["components"], "type": 0}))
            }),
        )
        .route(
            "/api/channels/{c}/messages/{m}",
            patch(|State(p): State<Platform>, UrlPath((c, m)): UrlPath<(String, String)>, Json(b): Json<Value>| async move {
                p.record(format!("edit {c}/{m}"), b.clone(), true).await;
                Json(json!({"id": m, "channel_id": c, "content": b["content"], "components": []}))
            }),
        )
        .with_state(p.clone());
    let url = serve(app).await;
    Platform { url, ..p }
}

fn ask(b: &Broker, command: &str) -> tokio::task::JoinHandle<Ruling> {
    let b = b.clone();
    let s = sub("s1", command);
    tokio::spawn(async move { b.decide_and_wait(s, Duration::from_secs(40)).await })
}

fn now_s() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap()
}

fn slack_sign(ts: i64, body: &str) -> String {
    let mut m = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(SECRET).unwrap();
    m.update(format!("v0:{ts}:{body}").as_bytes());
    format!("v0={}", hex::encode(m.finalize().into_bytes()))
}

/// A block_actions payload as Slack sends it, form-encoded.
fn slack_tap(user: &str, ts: &str, value: &str, response_url: &str) -> String {
    let payload = json!({
        "type": "block_actions",
        "user": {"id": user, "username": "alice", "name": "alice", "team_id": "T0TEAM"},
        "api_app_id": "A0APP",
        "token": "legacy-verification-token",
        "container": {"type": "message", "message_ts": ts, "channel_id": SLACK_CHANNEL, "is_ephemeral": false},
        "trigger_id": "123.456.abc",
        "team": {"id": "T0TEAM", "domain": "example"},
        "channel": {"id": SLACK_CHANNEL, "name": "ops"},
        "message": {"type": "message", "ts": ts, "text": "airlock: …", "bot_id": "B0BOT"},
        "response_url": response_url,
        "actions": [{"action_id": "airlock_0", "block_id": "airlock", "text": {"type": "plain_text", "text": "Approve once"}, "value": value, "type": "button", "action_ts": "1800000001.000001"}]
    });
    form_urlencoded::Serializer::new(String::new())
        .append_pair("payload", &payload.to_string())
        .finish()
}

async fn post_slack(hook: &str, body: &str, ts: i64, sig: &str) -> (u16, String, Duration) {
    let start = Instant::now();
    let r = reqwest::Client::new()
        .post(hook)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("x-slack-request-timestamp", ts.to_string())
        .header("x-slack-signature", sig)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.text().await.unwrap(), start.elapsed())
}

fn button_value(blocks: &Value, label: &str) -> String {
    blocks
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["elements"].as_array())
        .flatten()
        .find(|e| e["text"]["text"].as_str().unwrap().contains(label))
        .map(|e| e["value"].as_str().unwrap().to_string())
        .unwrap()
}

async fn slack_setup() -> (Broker, Slack, Platform, String, tempfile::TempDir) {
    let api = slack_api().await;
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, "n1").await;
    let mut c = SlackConfig::new("ops", "xoxb-test", SECRET);
    c.base_url = format!("{}/api", api.url);
    c.channels = vec![SLACK_CHANNEL.into()];
    c.approvers = BTreeMap::from([(SLACK_ALICE.to_string(), "alice".to_string())]);
    c.catch_up_every = Duration::from_millis(300);
    let s = Slack::start(b.clone(), c, Routes::new()).await.unwrap();
    let hook = serve(s.router("/")).await;
    (b, s, api, hook, d)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_a_tap_approves_within_three_seconds_while_slack_is_slow() {
    let (b, _s, api, hook, _d) = slack_setup().await;
    *api.slow.lock().unwrap() = Duration::from_secs(4);
    let waiter = ask(&b, "tier3 deploy");
    let m = api.wait("chat.postMessage", 1).await.remove(0);
    assert_eq!(m["channel"], SLACK_CHANNEL);
    assert!(m["text"].as_str().unwrap().contains("/airlock approve"));
    let ts = "1800000000.000000";
    let body = slack_tap(
        SLACK_ALICE,
        ts,
        &button_value(&m["blocks"], "Approve once"),
        &format!("{}/response/1", api.url),
    );
    let t = now_s();
    let (status, _, took) = post_slack(&hook, &body, t, &slack_sign(t, &body)).await;
    assert_eq!(status, 200);
    assert!(took < Duration::from_secs(3), "answered in {took:?}");
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .unwrap()
            .unwrap(),
        Ruling::Allow
    );
    // the notice and the edit land after the (slow) platform took them
    let notice = api.wait("response", 1).await.remove(0);
    assert_eq!(notice["response_type"], "ephemeral");
    assert!(
        notice["text"]
            .as_str()
            .unwrap()
            .contains("Approved once by alice")
    );
    let edit = api.wait("chat.update", 1).await.remove(0);
    assert_eq!(edit["ts"], ts);
    assert_eq!(
        edit["blocks"].as_array().unwrap().len(),
        1,
        "no actions block: {edit}"
    );
    assert!(
        edit["text"]
            .as_str()
            .unwrap()
            .contains("Approved once by alice in Slack")
    );
    let a = b.history(1).await.unwrap().remove(0);
    assert_eq!(
        a.answered_via.unwrap(),
        format!("slack:ops/chat={SLACK_CHANNEL}/message={ts}/user={SLACK_ALICE}")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_bad_signatures_stale_and_replayed_requests_and_strangers() {
    let (b, _s, api, hook, _d) = slack_setup().await;
    let waiter = ask(&b, "tier3 rotate");
    let m = api.wait("chat.postMessage", 1).await.remove(0);
    let ts = "1800000000.000000";
    let url = format!("{}/response/1", api.url);
    let value = button_value(&m["blocks"], "Approve once");
    let body = slack_tap(SLACK_ALICE, ts, &value, &url);
    let t = now_s();
    // wrong secret, altered body, stale timestamp with a right signature
    assert_eq!(post_slack(&hook, &body, t, "v0=00").await.0, 401);
    assert_eq!(
        post_slack(
            &hook,
            &body.replace("alice", "mallory"),
            t,
            &slack_sign(t, &body)
        )
        .await
        .0,
        401
    );
    let old = t - 301;
    assert_eq!(
        post_slack(&hook, &body, old, &slack_sign(old, &body))
            .await
            .0,
        401
    );
    // a stranger's signed tap: refused and recorded
    let stranger = slack_tap("U0MALLORY", ts, &value, &url);
    assert_eq!(
        post_slack(&hook, &stranger, t, &slack_sign(t, &stranger))
            .await
            .0,
        200
    );
    let n = api.wait("response", 1).await;
    assert!(n[0]["text"].as_str().unwrap().contains("not an approver"));
    assert_eq!(b.pending().await.unwrap().len(), 1);
    // alice, then the same signed request replayed inside the window
    let sig = slack_sign(t, &body);
    assert_eq!(post_slack(&hook, &body, t, &sig).await.0, 200);
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .unwrap()
            .unwrap(),
        Ruling::Allow
    );
    assert_eq!(post_slack(&hook, &body, t, &sig).await.0, 200);
    let n = api.wait("response", 3).await;
    assert!(
        n[2]["text"].as_str().unwrap().contains("Already decided"),
        "{}",
        n[2]
    );
    let refusals = b.ledger().db().chat_refusals("slack:ops").await.unwrap();
    let whats: Vec<&str> = refusals.iter().map(|r| r.what.as_str()).collect();
    assert_eq!(whats, ["not_approver", "already_decided"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slack_slash_command_denies_with_a_reason() {
    let (b, _s, api, hook, _d) = slack_setup().await;
    let waiter = ask(&b, "tier3 push --force");
    let m = api.wait("chat.postMessage", 1).await.remove(0);
    let text = m["text"].as_str().unwrap();
    let code = text
        .rsplit("deny ")
        .next()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    let body = form_urlencoded::Serializer::new(String::new())
        .append_pair("token", "legacy")
        .append_pair("team_id", "T0TEAM")
        .append_pair("channel_id", SLACK_CHANNEL)
        .append_pair("user_id", SLACK_ALICE)
        .append_pair("command", "/airlock")
        .append_pair("text", &format!("deny {code} not today"))
        .append_pair("response_url", &format!("{}/response/2", api.url))
        .append_pair("trigger_id", "1.2.3")
        .finish();
    let t = now_s();
    let (status, answer, _) = post_slack(&hook, &body, t, &slack_sign(t, &body)).await;
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["response_type"], "ephemeral");
    assert!(
        answer["text"].as_str().unwrap().contains("Denied by alice"),
        "{answer}"
    );
    assert!(
        !tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .unwrap()
            .unwrap()
            .allowed()
    );
    assert_eq!(
        b.history(1).await.unwrap()[0].reason.as_deref(),
        Some("not today")
    );
}

async fn discord_setup() -> (
    Broker,
    Discord,
    Platform,
    String,
    SigningKey,
    tempfile::TempDir,
) {
    let api = discord_api().await;
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, "n1").await;
    let key = SigningKey::from_bytes(&[7u8; 32]);
    let mut c = DiscordConfig::new("ops", "bot-token", key.verifying_key().to_bytes());
    c.base_url = format!("{}/api", api.url);
    c.channels = vec![DISCORD_CHANNEL.into()];
    c.approvers = BTreeMap::from([(DISCORD_ALICE.to_string(), "alice".to_string())]);
    c.catch_up_every = Duration::from_millis(300);
    let s = Discord::start(b.clone(), c, Routes::new()).await.unwrap();
    let hook = serve(s.router("/")).await;
    (b, s, api, hook, key, d)
}

async fn post_discord(
    hook: &str,
    key: &SigningKey,
    body: &Value,
    ts: i64,
) -> (u16, Value, Duration) {
    let body = body.to_string();
    let sig = key.sign(format!("{ts}{body}").as_bytes());
    let start = Instant::now();
    let r = reqwest::Client::new()
        .post(hook)
        .header("content-type", "application/json")
        .header("x-signature-ed25519", hex::encode(sig.to_bytes()))
        .header("x-signature-timestamp", ts.to_string())
        .body(body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let v = r.json().await.unwrap_or(Value::Null);
    (status, v, start.elapsed())
}

/// A MESSAGE_COMPONENT interaction as Discord sends it from a guild channel.
fn discord_tap(user: &str, message: &str, custom_id: &str) -> Value {
    json!({
        "id": "4400000000000000004",
        "application_id": "5500000000000000005",
        "type": 3,
        "token": "interaction-token",
        "version": 1,
        "guild_id": "6600000000000000006",
        "channel_id": DISCORD_CHANNEL,
        "member": {"user": {"id": user, "username": "alice", "discriminator": "0", "global_name": "Alice"}, "roles": [], "permissions": "0"},
        "message": {"id": message, "channel_id": DISCORD_CHANNEL, "content": "airlock: …", "type": 0},
        "data": {"custom_id": custom_id, "component_type": 2},
        "locale": "en-US",
        "app_permissions": "0"
    })
}

fn discord_button(create: &Value, label: &str) -> String {
    create["components"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|row| row["components"].as_array().unwrap().clone())
        .find(|b| b["label"].as_str().unwrap().contains(label))
        .map(|b| b["custom_id"].as_str().unwrap().to_string())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discord_ping_signatures_and_a_tap_answered_within_three_seconds() {
    let (b, _s, api, hook, key, _d) = discord_setup().await;
    let t = now_s();
    let ping = json!({"id": "1", "application_id": "5", "type": 1, "token": "x", "version": 1});
    assert_eq!(
        post_discord(&hook, &key, &ping, t).await.1,
        json!({"type": 1})
    );
    let other = SigningKey::from_bytes(&[8u8; 32]);
    assert_eq!(
        post_discord(&hook, &other, &ping, t).await.0,
        401,
        "a key that is not the app's"
    );
    assert_eq!(
        post_discord(&hook, &key, &ping, t - 301).await.0,
        401,
        "stale"
    );
    *api.slow.lock().unwrap() = Duration::from_secs(4);
    let waiter = ask(&b, "tier3 deploy");
    let create = api.wait("create", 1).await.remove(0);
    let message = "3300000000000000000";
    let approve = discord_button(&create, "Approve once");
    assert!(approve.len() <= 100, "custom_id fits");
    // a stranger first
    let (_, v, _) = post_discord(&hook, &key, &discord_tap("999", message, &approve), t).await;
    assert!(
        v["data"]["content"]
            .as_str()
            .unwrap()
            .contains("not an approver")
    );
    assert_eq!(v["data"]["flags"], 64);
    let (status, v, took) = post_discord(
        &hook,
        &key,
        &discord_tap(DISCORD_ALICE, message, &approve),
        t,
    )
    .await;
    assert_eq!(status, 200);
    assert!(took < Duration::from_secs(3), "answered in {took:?}");
    assert_eq!(v["type"], 4);
    assert!(
        v["data"]["content"]
            .as_str()
            .unwrap()
            .contains("Approved once by alice")
    );
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .unwrap()
            .unwrap(),
        Ruling::Allow
    );
    // replayed: refused
    let (_, v, _) = post_discord(
        &hook,
        &key,
        &discord_tap(DISCORD_ALICE, message, &approve),
        t,
    )
    .await;
    assert!(
        v["data"]["content"]
            .as_str()
            .unwrap()
            .contains("Already decided")
    );
    let edit = api.wait("edit", 1).await.remove(0);
    assert_eq!(edit["components"], json!([]));
    assert!(
        edit["content"]
            .as_str()
            .unwrap()
            .contains("Approved once by alice in Discord")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discord_slash_command_approves_tier_four_with_its_code() {
    let (b, _s, api, hook, key, _d) = discord_setup().await;
    let waiter = ask(&b, "tier4 drop table");
    let create = api.wait("create", 1).await.remove(0);
    assert!(create["components"].to_string().contains("Deny"));
    assert!(
        !create["components"].to_string().contains("Approve"),
        "no approve button at tier 4"
    );
    let a = b.pending().await.unwrap().remove(0);
    let code = b.deliberate_code(&a.action_sha256);
    let cmd = |code: &str| {
        json!({
            "id": "7", "application_id": "5", "type": 2, "token": "x", "version": 1,
            "channel_id": DISCORD_CHANNEL,
            "member": {"user": {"id": DISCORD_ALICE, "username": "alice"}},
            "data": {"id": "8", "name": "approve", "type": 1, "options": [{"name": "code", "type": 3, "value": code}]}
        })
    };
    let (_, v, _) = post_discord(&hook, &key, &cmd("WRONG1"), now_s()).await;
    assert!(
        v["data"]["content"]
            .as_str()
            .unwrap()
            .contains("No request with code"),
        "{v}"
    );
    let (_, v, _) = post_discord(&hook, &key, &cmd(&code), now_s()).await;
    assert!(
        v["data"]["content"]
            .as_str()
            .unwrap()
            .contains("Approved once by alice"),
        "{v}"
    );
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .unwrap()
            .unwrap(),
        Ruling::Allow
    );
}
