//! Routing end to end: a chain per tier across two Telegram bots and an SMS gateway (local
//! servers speaking their JSON), fail-over when a channel cannot deliver, the next step when
//! nobody answered in time, the first answer closing every message, outcomes recorded per
//! message, and the timeout actions (notify, escalate, emergency).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use airlock_chat::{Emergency, OnTimeout, Route, Routes, Telegram};
use airlock_confirm::{Broker, Ruling};
use airlock_core::Tier;
use airlock_store::ChatMessageRow;

use crate::common::*;

fn ask(b: &Broker, session: &str, command: &str) -> tokio::task::JoinHandle<Ruling> {
    let b = b.clone();
    let s = sub(session, command);
    tokio::spawn(async move { b.decide_and_wait(s, Duration::from_secs(40)).await })
}

fn chain(steps: &[&str], after: f64, on_timeout: Option<OnTimeout>) -> Route {
    Route {
        chain: steps.iter().map(|s| s.to_string()).collect(),
        after,
        on_timeout,
    }
}

async fn rows(b: &Broker, approval: &str) -> Vec<ChatMessageRow> {
    b.ledger().db().chat_messages_of(approval).await.unwrap()
}

/// The row of `channel` (the first when several), waiting until it is no longer being sent
/// or open.
async fn settled(b: &Broker, approval: &str, channel: &str) -> ChatMessageRow {
    for _ in 0..200 {
        if let Some(r) = rows(b, approval)
            .await
            .into_iter()
            .find(|r| r.channel == channel && r.outcome.is_some())
        {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!(
        "{channel} has no settled message for {approval}: {:?}",
        rows(b, approval).await
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fail_over_then_the_next_step_then_an_answer_closes_everything() {
    let ops = Bot::start().await;
    let admins = Bot::start_with("999:ADMINS").await;
    let sms = Sms::start().await;
    ops.seen.lock().unwrap().fail_sends = 1;
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, "n1").await;
    // tier 1 has 10 s: each step waits 2 s
    let routes = Routes::new().with(
        Tier::Low,
        chain(
            &["telegram:ops", "telegram:admins", "emergency:sms"],
            0.2,
            None,
        ),
    );
    let _t1 = Telegram::start(b.clone(), config(&ops.url), routes.clone())
        .await
        .unwrap();
    let _t2 = Telegram::start(b.clone(), admins_config(&admins), routes.clone())
        .await
        .unwrap();
    let _e = Emergency::start(b.clone(), sms.config(), routes.clone())
        .await
        .unwrap();
    let waiter = ask(&b, "s1", "chain deploy");
    // ops cannot deliver (HTTP 500): admins are asked at once, long before ops' 2 s are over
    let started = std::time::Instant::now();
    let m = admins.wait_calls("sendMessage", 1).await.remove(0);
    assert!(
        started.elapsed() < Duration::from_millis(1800),
        "{:?}",
        started.elapsed()
    );
    assert!(
        sms.seen.lock().unwrap().is_empty(),
        "the SMS step is not due yet"
    );
    let id = b.pending().await.unwrap().remove(0).id;
    assert_eq!(
        settled(&b, &id, "telegram:ops").await.outcome.as_deref(),
        Some("undeliverable")
    );
    // nobody answers the admins within their share: the SMS goes out, naming the inbox
    let posts = sms.wait(1).await;
    assert_eq!(posts[0].0.as_deref(), Some("Bearer sms-key"));
    assert_eq!(posts[0].1["to"], "+15551111");
    assert_eq!(posts[0].1["from"], "+15550000");
    let text = posts[0].1["text"].as_str().unwrap();
    assert!(
        text.contains("chain deploy") && text.contains("https://airlock.example/inbox"),
        "{text}"
    );
    // an admin answers in Telegram: the waiter is released and the message closed
    admins.tap(ALICE, CHAT, 2, &button(&m, "Approve once").unwrap());
    let ruling = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ruling, Ruling::Allow);
    assert_eq!(
        settled(&b, &id, "telegram:admins").await.outcome.as_deref(),
        Some("approved")
    );
    assert_eq!(
        settled(&b, &id, "emergency:sms").await.outcome.as_deref(),
        Some("notice")
    );
    assert_eq!(
        ops.calls("sendMessage").len(),
        1,
        "a failed step is not retried later"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_answer_wins_and_the_other_channel_shows_who_answered_where() {
    let ops = Bot::start().await;
    let admins = Bot::start_with("999:ADMINS").await;
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, "n1").await;
    let routes = Routes::new().with(
        Tier::Low,
        chain(&["telegram:ops", "telegram:admins"], 0.1, None),
    );
    let _t1 = Telegram::start(b.clone(), config(&ops.url), routes.clone())
        .await
        .unwrap();
    let _t2 = Telegram::start(b.clone(), admins_config(&admins), routes.clone())
        .await
        .unwrap();
    let waiter = ask(&b, "s1", "chain release");
    let m_ops = ops.wait_calls("sendMessage", 1).await.remove(0);
    // nobody answered in ops within 1 s: admins are asked too
    admins.wait_calls("sendMessage", 1).await;
    ops.tap(ALICE, CHAT, 2, &button(&m_ops, "Approve once").unwrap());
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .unwrap()
            .unwrap(),
        Ruling::Allow
    );
    let edits = admins.wait_calls("editMessageText", 1).await;
    assert!(
        edits[0]["text"]
            .as_str()
            .unwrap()
            .contains("Approved once by alice in Telegram"),
        "{}",
        edits[0]
    );
    assert_eq!(
        edits[0]["reply_markup"]["inline_keyboard"],
        serde_json::json!([])
    );
    let id = b.history(1).await.unwrap().remove(0).id;
    assert_eq!(
        settled(&b, &id, "telegram:ops").await.outcome.as_deref(),
        Some("approved")
    );
    assert_eq!(
        settled(&b, &id, "telegram:admins").await.outcome.as_deref(),
        Some("superseded")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tier_outside_its_chain_is_not_posted_there() {
    let ops = Bot::start().await;
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, "n1").await;
    let routes = Routes::new().with(Tier::High, chain(&["inbox"], 1.0, None));
    let _t = Telegram::start(b.clone(), config(&ops.url), routes)
        .await
        .unwrap();
    let _ = b.submit(sub("s1", "tier3 quiet")).await.unwrap();
    // a tier without a route still goes everywhere
    let _ = b.submit(sub("s2", "chain loud")).await.unwrap();
    let sent = ops.wait_calls("sendMessage", 1).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(ops.calls("sendMessage").len(), 1);
    assert!(sent[0]["text"].as_str().unwrap().contains("chain loud"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_notify_escalate_and_page() {
    for action in ["notify", "escalate", "emergency"] {
        let ops = Bot::start().await;
        let admins = Bot::start_with("999:ADMINS").await;
        let sms = Sms::start().await;
        let d = tempfile::tempdir().unwrap();
        let b = broker_at(d.path(), None, "n1").await;
        let on_timeout = match action {
            "notify" => OnTimeout::Notify,
            "escalate" => OnTimeout::Escalate("telegram:admins".into()),
            _ => OnTimeout::Emergency("emergency:sms".into()),
        };
        // tier 2 times out after 1 s
        let routes = Routes::new().with(
            Tier::Medium,
            chain(&["telegram:ops"], 1.0, Some(on_timeout)),
        );
        let _t1 = Telegram::start(b.clone(), config(&ops.url), routes.clone())
            .await
            .unwrap();
        let _t2 = Telegram::start(b.clone(), admins_config(&admins), routes.clone())
            .await
            .unwrap();
        let _e = Emergency::start(b.clone(), sms.config(), routes.clone())
            .await
            .unwrap();
        let waiter = ask(&b, "s1", "late report");
        assert!(
            !tokio::time::timeout(Duration::from_secs(10), waiter)
                .await
                .unwrap()
                .unwrap()
                .allowed()
        );
        match action {
            "notify" => {
                let sent = ops.wait_calls("sendMessage", 2).await;
                assert!(
                    sent[1]["text"]
                        .as_str()
                        .unwrap()
                        .contains("nobody answered"),
                    "{}",
                    sent[1]
                );
                assert!(
                    sent[1].get("reply_markup").is_none(),
                    "a notice has no buttons"
                );
            }
            "escalate" => {
                let sent = admins.wait_calls("sendMessage", 1).await;
                assert!(
                    sent[0]["text"]
                        .as_str()
                        .unwrap()
                        .contains("nobody answered")
                );
                assert!(sent[0]["text"].as_str().unwrap().contains("late report"));
            }
            _ => {
                let posts = sms.wait(1).await;
                assert!(
                    posts[0].1["text"]
                        .as_str()
                        .unwrap()
                        .contains("it was denied")
                );
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        // once, not on every pass
        let total = ops.calls("sendMessage").len()
            + admins.calls("sendMessage").len()
            + sms.seen.lock().unwrap().len();
        assert_eq!(total, 2, "{action}: the request and one notice");
        let id = b.history(1).await.unwrap().remove(0).id;
        assert_eq!(
            settled(&b, &id, "telegram:ops").await.outcome.as_deref(),
            Some("timed_out")
        );
        b.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_below_its_threshold_is_not_asked_and_the_chain_moves_on() {
    let ops = Bot::start().await;
    let admins = Bot::start_with("999:ADMINS").await;
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, "n1").await;
    // the admins are asked from risk 2.5; each step waits half the tier's time
    let steps = chain(&["telegram:admins", "telegram:ops"], 0.5, None);
    let routes = Routes::new()
        .with(Tier::Low, steps.clone())
        .with(Tier::High, steps)
        .with_threshold("telegram", 1.0)
        .with_threshold("telegram:admins", 2.5);
    let _t1 = Telegram::start(b.clone(), config(&ops.url), routes.clone())
        .await
        .unwrap();
    let _t2 = Telegram::start(b.clone(), admins_config(&admins), routes.clone())
        .await
        .unwrap();
    // tier 1 (risk 1): the admins are skipped, so ops is asked at once, not after 5 s
    let started = std::time::Instant::now();
    let waiter = ask(&b, "s1", "chain low risk");
    let m = ops.wait_calls("sendMessage", 1).await.remove(0);
    assert!(
        started.elapsed() < Duration::from_millis(3000),
        "{:?}",
        started.elapsed()
    );
    let id = b.pending().await.unwrap().remove(0).id;
    ops.tap(ALICE, CHAT, 2, &button(&m, "Approve once").unwrap());
    let ruling = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ruling, Ruling::Allow);
    assert!(admins.calls("sendMessage").is_empty());
    assert!(
        rows(&b, &id)
            .await
            .iter()
            .all(|r| r.channel == "telegram:ops"),
        "{:?}",
        rows(&b, &id).await
    );
    // tier 3 (risk 3) reaches the admins first, and ops waits its turn
    let waiter = ask(&b, "s1", "tier3 high risk");
    let m = admins.wait_calls("sendMessage", 1).await.remove(0);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(ops.calls("sendMessage").len(), 1, "ops is not due yet");
    admins.tap(ALICE, CHAT, 2, &button(&m, "Approve once").unwrap());
    let ruling = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ruling, Ruling::Allow);
    b.shutdown().await;
}
