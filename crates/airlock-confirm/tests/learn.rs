//! Learned grants and `airlock stats` through the broker on a real SQLite file: a run of
//! approvals of one kind by a person proposes the narrowest grant covering them, a denial
//! starts the count again, accepting is an approver's (recorded as a grant receipt) and then
//! allows the kind without asking, for that agent only; the report counts prompts, answers and
//! what the learned grant allowed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use airlock_confirm::{BrokerConfig, ConfirmError, Principal, Role, Status};
use airlock_grants::Scope;
use airlock_store::LedgerStore;

use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_of_approvals_proposes_a_narrow_grant_a_person_accepts() {
    let (b, _d) = sqlite_broker(BrokerConfig::default()).await;
    run_of_approvals(b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_of_approvals_on_postgresql() {
    let Some(pg) = airlock_testkit::PgDb::create().await else {
        eprintln!("PostgreSQL not reachable: skipped");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(
        d.path(),
        Some(pg.url.clone()),
        policy(""),
        BrokerConfig::default(),
    )
    .await;
    run_of_approvals(b).await;
}

async fn run_of_approvals(b: airlock_confirm::Broker) {
    let decide = |cmd: &'static str, yes: bool| {
        let b = b.clone();
        async move {
            let o = b.submit(sub("claude", "s1", cmd)).await.unwrap();
            assert_eq!(o.status, Status::Pending, "{cmd}: {o:?}");
            let id = o.approval.unwrap();
            let answer = if yes {
                approve("alice")
            } else {
                deny("alice", "not that one")
            };
            b.answer(&id, answer).await.unwrap()
        }
    };
    for cmd in ["tier3 deploy web-1", "tier3 deploy web-2"] {
        let a = decide(cmd, true).await;
        assert_eq!(b.learnable(&a).await.unwrap(), None, "{cmd}: too few");
    }
    // a denial of the kind starts the count again
    let a = decide("tier3 deploy web-3", false).await;
    assert_eq!(b.learnable(&a).await.unwrap(), None);
    decide("tier3 deploy web-4", true).await;
    let a = decide("tier3 deploy web-5", true).await;
    assert_eq!(b.learnable(&a).await.unwrap(), None, "two since the denial");
    let a = decide("tier3 deploy web-6", true).await;
    let l = b.learnable(&a).await.unwrap().expect("three in a row");
    assert_eq!(l.approvals, 3);
    assert_eq!(
        l.scope,
        Scope::CommandPrefix {
            argv: vec!["tier3".into(), "deploy".into()]
        }
    );
    let week = 7 * 86_400_000;
    assert!((l.expires_ms - b.book().now() - week).abs() < 60_000);

    // only an approver accepts, never the agent
    let agent = Principal::new("claude", Role::Agent);
    assert!(matches!(
        b.accept_learned(&a.id, &agent).await,
        Err(ConfirmError::Forbidden(_))
    ));
    let g = b.accept_learned(&a.id, &person("bob")).await.unwrap();
    assert!(g.reason.starts_with("learned:"), "{}", g.reason);
    assert_eq!(g.subject.agent, "claude");
    assert_eq!(g.subject.session, None);
    assert_eq!(g.creator.to_string(), "person:bob");
    // accepting twice keeps one grant
    assert_eq!(
        b.accept_learned(&a.id, &person("bob")).await.unwrap().id,
        g.id
    );
    // the acceptance is a grant receipt naming the person
    let stored = b.ledger().receipts(0, 10_000).await.unwrap();
    let adds: Vec<airlock_ledger::Receipt> = stored
        .iter()
        .map(|s| serde_json::from_str::<airlock_ledger::Receipt>(&s.body).unwrap())
        .filter(|r| r.tool.as_deref() == Some("airlock.grant.add"))
        .collect();
    assert_eq!(adds.len(), 1);
    assert_eq!(adds[0].grant.as_deref(), Some(g.id.as_str()));
    assert_eq!(adds[0].approvers, ["person:bob"]);

    // the kind is allowed without asking, for this agent only; another kind still asks
    let o = b
        .submit(sub("claude", "s2", "tier3 deploy web-7"))
        .await
        .unwrap();
    assert_eq!(o.status, Status::Allowed, "{o:?}");
    let o = b
        .submit(sub("codex", "s3", "tier3 deploy web-7"))
        .await
        .unwrap();
    assert_eq!(o.status, Status::Pending);
    let o = b
        .submit(sub("claude", "s2", "tier3 restart web-7"))
        .await
        .unwrap();
    assert_eq!(o.status, Status::Pending);

    let s = b.stats(0).await.unwrap();
    assert_eq!(s.prompts, 8, "{s:?}");
    assert_eq!(s.answered, 6);
    assert_eq!(s.llm_answered, 0);
    assert_eq!(s.learned_grants, 1);
    assert_eq!(s.learned_allowed, 1);
    assert!(s.median_answer_ms.is_some());
    assert_eq!(s.days.len(), 1);
    assert_eq!(s.days[0].prompts, 8);
    b.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tier_four_is_never_learned() {
    let (b, _d) = sqlite_broker(BrokerConfig {
        learn_after: 1,
        ..BrokerConfig::default()
    })
    .await;
    let o = b
        .submit(sub("claude", "s1", "tier4 drop db"))
        .await
        .unwrap();
    let id = o.approval.unwrap();
    let mut yes = approve("alice");
    yes.code = Some(b.deliberate_code(&b.approval(&id).await.unwrap().action_sha256));
    let a = b.answer(&id, yes).await.unwrap();
    assert_eq!(a.status, airlock_confirm::ApprovalStatus::Approved);
    assert_eq!(b.learnable(&a).await.unwrap(), None);
    // a tier-3 action is learned after one approval with learn_after = 1
    let o = b.submit(sub("claude", "s1", "tier3 ok")).await.unwrap();
    let a = b
        .answer(&o.approval.unwrap(), approve("alice"))
        .await
        .unwrap();
    assert!(b.learnable(&a).await.unwrap().is_some());
    b.shutdown().await;
}

/// The asks of the replay: every shell command and tool call asks at tier 3 (a person), on top
/// of the built-in policy, which may deny or ask more strictly on its own.
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

/// What one replay of the workload cost.
#[derive(Debug, Default, PartialEq)]
struct Replayed {
    prompts: u32,
    offers: u32,
    learned_allowed: u32,
    /// Allowed by a learned grant where the person had denied it (their families).
    wrong_allows: Vec<String>,
    policy_decided: u32,
}

/// Replays `datasets/replay/decisions.jsonl` in order through a real broker: each action is
/// submitted; when it asks, the person's recorded answer is given; every learned grant offered
/// is accepted (the most any approver could save).
async fn replay(learn_after: u32) -> Replayed {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../datasets/replay/decisions.jsonl"
    ))
    .unwrap();
    let d = tempfile::tempdir().unwrap();
    let config = BrokerConfig {
        learn_after,
        ..BrokerConfig::default()
    };
    let b = broker_at(d.path(), None, policy_text(REPLAY_POLICY), config).await;
    let mut r = Replayed::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let action: airlock_core::Action = serde_json::from_value(v["action"].clone()).unwrap();
        let approved = v["person"] == "approved";
        let mut s = sub("claude", "replay", "-");
        s.action = action;
        let o = b.submit(s).await.unwrap();
        match o.status {
            Status::Pending => {
                r.prompts += 1;
                let id = o.approval.unwrap();
                let answer = if approved {
                    approve("alice")
                } else {
                    deny("alice", v["reason"].as_str().unwrap_or(""))
                };
                let a = b.answer(&id, answer).await.unwrap();
                if b.learnable(&a).await.unwrap().is_some() {
                    r.offers += 1;
                    b.accept_learned(&id, &person("alice")).await.unwrap();
                }
            }
            Status::Allowed
                if o.reasons
                    .first()
                    .is_some_and(|f| f.code == airlock_core::ReasonCode::GrantUsed) =>
            {
                r.learned_allowed += 1;
                if !approved {
                    r.wrong_allows
                        .push(v["family"].as_str().unwrap_or("?").to_string());
                }
            }
            _ => r.policy_decided += 1,
        }
    }
    b.shutdown().await;
    r
}

/// `cargo test -p airlock-confirm --test learn -- --nocapture replay_` prints the figures.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_learned_grants_cut_prompts() {
    let without = replay(0).await;
    let with = replay(3).await;
    println!("replay of datasets/replay/decisions.jsonl (55 decisions):");
    println!("  without learned grants: {without:?}");
    println!("  with learned grants (after 3, every offer accepted): {with:?}");
    assert_eq!(without.offers + without.learned_allowed, 0);
    assert!(with.prompts < without.prompts, "{with:?} vs {without:?}");
    assert_eq!(
        with.prompts + with.learned_allowed + with.policy_decided,
        without.prompts + without.policy_decided
    );
}
