//! One-time webhook links through the gateway: opening a link shows what it would do and
//! changes nothing; the POST spends it once; a second use, a forged link and an unknown one are
//! refused with 410 and leave the approval as it was.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_testkit::gateway as common;

use std::time::Duration;

use airlock_confirm::{ApprovalStatus, BrokerConfig, Choice, WebhookConfig};
use common::{asking, client, post};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_show_then_spend_once() {
    let config = BrokerConfig {
        webhook: Some(WebhookConfig {
            // Nothing listens there: deliveries fail, links still work.
            url: "http://127.0.0.1:9/hook".into(),
            secret: b"test webhook secret".to_vec(),
            link_ttl: Duration::from_secs(60),
        }),
        ..BrokerConfig::default()
    };
    let s = common::start_full(common::builtin_policy(), config, None, common::DEFAULT_MAX).await;
    let c = client();
    let (_, out) = post(&c, &s.u("/v1/actions"), &s.agent, asking("links")).await;
    let id = out["id"].as_str().unwrap().to_string();
    let deny = s.broker.link(&id, Choice::Deny).await.unwrap();
    let approve = s.broker.link(&id, Choice::Approve).await.unwrap();
    assert!(approve.starts_with(&s.u("/v1/links/")), "{approve}");

    // Opening shows the action and the choice, and changes nothing.
    for _ in 0..2 {
        let r = c.get(&approve).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let html = r.text().await.unwrap();
        assert!(html.contains("git push --force origin main") && html.contains("Confirm: approve"));
    }
    assert_eq!(
        s.broker.approval(&id).await.unwrap().status,
        ApprovalStatus::Pending
    );

    // A forged link (one character changed) and garbage are refused.
    let mut forged = approve.clone().into_bytes();
    let last = forged.len() - 1;
    forged[last] = if forged[last] == b'a' { b'b' } else { b'a' };
    let forged = String::from_utf8(forged).unwrap();
    for bad in [forged.as_str(), &s.u("/v1/links/nothing")] {
        let r = c.post(bad).send().await.unwrap();
        assert_eq!(r.status(), 410, "{bad}");
        let r = c.get(bad).send().await.unwrap();
        assert_eq!(r.status(), 410, "{bad}");
    }
    assert_eq!(
        s.broker.approval(&id).await.unwrap().status,
        ApprovalStatus::Pending
    );

    let r = c.post(&deny).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.text().await.unwrap().contains("denied"));
    let (_, v) = common::get(
        &c,
        &s.u(&format!("/v1/actions/{id}/wait?timeout=5")),
        &s.agent,
    )
    .await;
    assert_eq!(v["status"], "denied");
    // Spent, and the other link can no longer change the decision.
    assert_eq!(c.post(&deny).send().await.unwrap().status(), 410);
    let r = c.post(&approve).send().await.unwrap();
    assert!(r.status() == 409 || r.status() == 410, "{}", r.status());
    assert_eq!(
        s.broker.approval(&id).await.unwrap().status,
        ApprovalStatus::Denied
    );
    s.stop().await;
}
