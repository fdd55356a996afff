//! How many taps people need on a replayed workload, with and without summaries: the team's
//! decisions in `datasets/replay/decisions.jsonl`, submitted through a real broker and posted
//! by the Telegram channel to a local server speaking the Bot API, `GROUP` actions of one
//! session at a time (an agent issuing parallel tool calls). The person answers as they did:
//! with one tap on a summary when every action it lists was approved (or every one denied) in
//! the dataset, otherwise each action's own button.
//!
//! `cargo test -p airlock-chat --test fatigue -- --nocapture` prints the figures.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use airlock_chat::{Routes, Telegram};
use airlock_confirm::{Broker, Ruling, Submission};
use airlock_core::Action;
use airlock_policy::Channel;
use serde_json::Value;

use crate::common::*;

/// Every shell command and tool call asks a person at tier 3, on top of the built-in policy.
const REPLAY_POLICY: &str = r#"
[[rules]]
id = "replay.shell"
shell = "*"
decision = "ask"
tier = 3

[[rules]]
id = "replay.tool"
tool = "*"
decision = "ask"
tier = 3

[tiers.3]
confirm = "human"
timeout = "60s"
"#;

/// Actions submitted together.
const GROUP: usize = 5;

#[derive(Debug, Default, PartialEq)]
struct Taps {
    /// Approvals a person was asked about.
    asked: u32,
    /// Taps they needed, of which on a summary.
    taps: u32,
    summary_taps: u32,
    /// Messages the chat received (requests, summaries).
    messages: u32,
}

fn lines() -> Vec<Value> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../datasets/replay/decisions.jsonl"
    ))
    .unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The first line of a message about `action`, as the request shows it.
fn shown(action: &Action) -> String {
    airlock_chat::text::action_line(action)
}

async fn replay(batch_after: usize) -> Taps {
    let bot = Bot::start().await;
    let d = tempfile::tempdir().unwrap();
    let b = broker_with(d.path(), None, "n1", policy_of(REPLAY_POLICY)).await;
    let tg = Telegram::start(
        b.clone(),
        config(&bot.url),
        Routes::new().with_batch(batch_after),
    )
    .await
    .unwrap();
    let mut t = Taps::default();
    for (g, group) in lines().chunks(GROUP).enumerate() {
        let session = format!("g{g}");
        let start = bot.calls("sendMessage").len();
        let mut waiters = Vec::new();
        let mut answers: BTreeMap<String, bool> = BTreeMap::new();
        for v in group {
            let action: Action = serde_json::from_value(v["action"].clone()).unwrap();
            answers.insert(shown(&action), v["person"] == "approved");
            let s = Submission {
                request_id: None,
                agent: "claude".into(),
                session: session.clone(),
                action,
                cwd: None,
                channel: Channel::Terminal,
            };
            let b2: Broker = b.clone();
            waiters.push(tokio::spawn(async move {
                b2.decide_and_wait(s, Duration::from_secs(60)).await
            }));
        }
        // wait until every approval of the group is posted (the policy decides some at once)
        let mut pending = Vec::new();
        for _ in 0..400 {
            tokio::time::sleep(Duration::from_millis(50)).await;
            pending = b
                .pending()
                .await
                .unwrap()
                .into_iter()
                .filter(|a| a.session == session)
                .collect();
            let done = waiters.iter().filter(|w| w.is_finished()).count();
            let posted = bot.calls("sendMessage").len() - start >= pending.len();
            if posted && pending.len() + done == group.len() {
                break;
            }
        }
        // the summary comes with the catch-up pass after the last arrival (every 300 ms here):
        // wait until nothing more is sent
        let mut count = bot.calls("sendMessage").len();
        loop {
            tokio::time::sleep(Duration::from_millis(700)).await;
            let now = bot.calls("sendMessage").len();
            if now == count {
                break;
            }
            count = now;
        }
        t.asked += pending.len() as u32;
        let sent: Vec<(usize, Value)> = bot
            .calls("sendMessage")
            .into_iter()
            .enumerate()
            .skip(start)
            .collect();
        let summary = sent.iter().rev().find(|(_, m)| {
            button(m, "Approve all").is_some()
                && m["text"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("(session {session})"))
        });
        let mut left = pending.clone();
        if let Some((i, m)) = summary {
            let i = *i;
            let text = m["text"].as_str().unwrap();
            let listed: Vec<_> = pending
                .iter()
                .filter(|a| text.contains(&shown(&a.action)))
                .collect();
            let said: Vec<bool> = listed.iter().map(|a| answers[&shown(&a.action)]).collect();
            let all = |yes: bool| said.iter().all(|s| *s == yes);
            let pick = if all(true) {
                Some("Approve all")
            } else if all(false) {
                Some("Deny all")
            } else {
                None
            };
            if let Some(label) = pick {
                bot.tap(ALICE, CHAT, i as i64 + 2, &button(m, label).unwrap());
                t.taps += 1;
                t.summary_taps += 1;
                left.retain(|a| !text.contains(&shown(&a.action)));
            }
        }
        let mut used = Vec::new();
        for a in &left {
            let yes = answers[&shown(&a.action)];
            if a.code_required {
                // tier 4: approving is typing its code; denying is its button
                let code = if yes { "approve" } else { "deny" };
                let typed = format!("/{code} {} replayed", b.deliberate_code(&a.action_sha256));
                bot.say(ALICE, CHAT, &typed);
                t.taps += 1;
                continue;
            }
            let (i, m) = sent
                .iter()
                .find(|(i, m)| {
                    !used.contains(i)
                        && button(m, "Approve once").is_some()
                        && m["text"].as_str().unwrap().contains(&shown(&a.action))
                })
                .unwrap_or_else(|| panic!("no message for {a:?}"));
            used.push(*i);
            let label = if yes { "Approve once" } else { "Deny" };
            bot.tap(ALICE, CHAT, *i as i64 + 2, &button(m, label).unwrap());
            t.taps += 1;
        }
        for w in waiters {
            let r: Ruling = tokio::time::timeout(Duration::from_secs(30), w)
                .await
                .unwrap()
                .unwrap();
            let _ = r;
        }
    }
    t.messages = bot.calls("sendMessage").len() as u32;
    drop(tg);
    b.shutdown().await;
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn summaries_cut_the_taps_on_a_replayed_workload() {
    let without = replay(0).await;
    let with = replay(3).await;
    println!(
        "replay of datasets/replay/decisions.jsonl, {GROUP} actions of one session at a time:"
    );
    println!("  without summaries: {without:?}");
    println!("  with summaries from 3 pending: {with:?}");
    assert_eq!(without.asked, with.asked);
    assert_eq!(without.taps, without.asked);
    assert!(with.taps < without.taps, "{with:?} vs {without:?}");
}
