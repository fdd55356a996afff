//! The webhook channel against a real receiver on loopback: the signed POST when a person is
//! asked, its approve/deny links spent once, forged and expired links refused, and tier 4
//! offering no approve link (the code cannot travel in a link).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use airlock_confirm::{
    ApprovalStatus, BrokerConfig, Choice, ConfirmError, Status, WebhookConfig, webhook,
};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use serde_json::Value;

use common::*;

const SECRET: &[u8] = b"webhook test secret";

#[derive(Clone, Default)]
struct Inbox {
    got: Arc<Mutex<Vec<(HeaderMap, Bytes)>>>,
}

async fn receive(State(inbox): State<Inbox>, headers: HeaderMap, body: Bytes) -> &'static str {
    inbox.got.lock().unwrap().push((headers, body));
    "ok"
}

async fn receiver() -> (Inbox, String) {
    let inbox = Inbox::default();
    let app = axum::Router::new()
        .route("/hook", post(receive))
        .with_state(inbox.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (inbox, format!("http://{addr}/hook"))
}

async fn delivered(inbox: &Inbox, n: usize) -> Vec<(HeaderMap, Bytes)> {
    for _ in 0..250 {
        if inbox.got.lock().unwrap().len() >= n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    inbox.got.lock().unwrap().clone()
}

async fn setup(link_ttl: Duration) -> (airlock_confirm::Broker, Inbox, tempfile::TempDir) {
    let (inbox, url) = receiver().await;
    let config = BrokerConfig {
        webhook: Some(WebhookConfig {
            url,
            secret: SECRET.to_vec(),
            link_ttl,
        }),
        public_url: Some("http://127.0.0.1:7373".into()),
        ..BrokerConfig::default()
    };
    let (b, d) = sqlite_broker(config).await;
    (b, inbox, d)
}

fn token_of(body: &Value, choice: &str) -> Option<String> {
    let url = body["links"][choice].as_str()?;
    assert!(url.starts_with("http://127.0.0.1:7373/v1/links/"), "{url}");
    Some(url.rsplit('/').next().unwrap().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_post_with_one_time_links() {
    let (b, inbox, _d) = setup(Duration::from_secs(60)).await;
    let id = b
        .submit(sub("claude", "s1", "tier3 deploy prod"))
        .await
        .unwrap()
        .approval
        .unwrap();
    let got = delivered(&inbox, 1).await;
    assert_eq!(got.len(), 1);
    let (headers, body) = &got[0];
    let sig = headers["x-airlock-signature"].to_str().unwrap();
    assert!(webhook::verify_signature(SECRET, body, sig));
    assert!(!webhook::verify_signature(b"wrong", body, sig));
    let ts: i64 = headers["x-airlock-timestamp"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let v: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(v["timestamp"], ts);
    assert_eq!(v["approval"]["id"], id.as_str());
    assert_eq!(v["approval"]["action"]["command"], "tier3 deploy prod");
    assert_eq!(b.metrics().webhook_sent, 1);

    let approve = token_of(&v, "approve").unwrap();
    let deny = token_of(&v, "deny").unwrap();
    // Looking does not spend.
    let (a, c) = b.link_info(&approve).await.unwrap();
    assert_eq!((a.id.as_str(), c), (id.as_str(), Choice::Approve));
    // A forged token (signature of another secret) is refused.
    let (nonce, _) = approve.split_once('.').unwrap();
    let forged = format!("{nonce}.{}", "00".repeat(32));
    assert!(matches!(
        b.answer_link(&forged).await,
        Err(ConfirmError::BadLink(_))
    ));

    let a = b.answer_link(&approve).await.unwrap();
    assert_eq!(a.status, ApprovalStatus::Approved);
    assert_eq!(a.decided_by.as_deref(), Some("webhook"));
    assert_eq!(approval_receipt(&b, &id).await.approvers, ["webhook"]);
    // Spent once.
    assert!(matches!(
        b.answer_link(&approve).await,
        Err(ConfirmError::BadLink(_))
    ));
    assert!(matches!(
        b.link_info(&approve).await,
        Err(ConfirmError::BadLink(_))
    ));
    // The other link cannot change the decision.
    assert!(matches!(
        b.answer_link(&deny).await,
        Err(ConfirmError::AlreadyDecided { .. })
    ));
    assert_eq!(b.outcome(&id).await.unwrap().status, Status::Allowed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_expire_and_tier_four_has_no_approve_link() {
    let (b, inbox, _d) = setup(Duration::from_millis(300)).await;
    let id = b
        .submit(sub("claude", "s1", "tier4 wipe disk"))
        .await
        .unwrap()
        .approval
        .unwrap();
    let got = delivered(&inbox, 1).await;
    let v: Value = serde_json::from_slice(&got[0].1).unwrap();
    assert_eq!(v["approval"]["code_required"], true);
    assert!(token_of(&v, "approve").is_none());
    let deny = token_of(&v, "deny").unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(matches!(
        b.answer_link(&deny).await,
        Err(ConfirmError::BadLink(_))
    ));
    assert_eq!(
        b.approval(&id).await.unwrap().status,
        ApprovalStatus::Pending
    );
    // A fresh deny link works.
    let url = b.link(&id, Choice::Deny).await.unwrap();
    let token = url.rsplit('/').next().unwrap();
    let a = b.answer_link(token).await.unwrap();
    assert_eq!(a.status, ApprovalStatus::Denied);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_webhook_links_are_refused() {
    let (b, _d) = sqlite_broker(BrokerConfig::default()).await;
    assert!(matches!(
        b.answer_link("00.11").await,
        Err(ConfirmError::BadLink(_))
    ));
    let id = b
        .submit(sub("claude", "s1", "tier3 x"))
        .await
        .unwrap()
        .approval
        .unwrap();
    assert!(matches!(
        b.link(&id, Choice::Approve).await,
        Err(ConfirmError::Invalid(_))
    ));
}
