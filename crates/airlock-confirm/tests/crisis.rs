//! A session's crisis mode through the broker, on a real SQLite file and on two brokers (nodes)
//! of one PostgreSQL database: a crisis mark puts the session's decision tools behind a person
//! (support tools stay ungated, other sessions are untouched), the mark and its clearing are
//! receipts, only an approver clears it, and a mark made on one node is honoured on the other.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use airlock_confirm::{
    Broker, BrokerConfig, ConfirmError, Origin, Principal, Role, Status, Submission,
};
use airlock_core::{Action, ReasonCode};
use airlock_policy::Channel;
use airlock_store::LedgerStore;
use airlock_testkit::PgDb;

use common::*;

/// The tools of a crisis-support assistant, declared and allowed outside crisis mode.
const TOOLS: &str = r#"
[[tools]]
name = "share_location"
tier = 1

[[tools]]
name = "show_crisis_resources"
tier = 1
"#;

fn tool(session: &str, name: &str) -> Submission {
    Submission {
        request_id: None,
        agent: "assistant".into(),
        session: session.into(),
        action: Action::Tool {
            tool: name.into(),
            arguments: serde_json::json!({}),
        },
        cwd: None,
        channel: Channel::Terminal,
    }
}

fn origin(session: &str) -> Origin {
    Origin {
        agent: "claude".into(),
        session: session.into(),
    }
}

async fn receipt(b: &Broker, id: &str) -> airlock_ledger::Receipt {
    let stored = b.ledger().receipt(id).await.unwrap().expect("receipt");
    serde_json::from_str(&stored.body).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crisis_mark_puts_decision_tools_behind_a_person_until_an_approver_clears_it() {
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, policy(TOOLS), BrokerConfig::default()).await;
    assert_eq!(
        b.submit(tool("s1", "share_location")).await.unwrap().status,
        Status::Allowed
    );

    let id = b
        .mark_crisis(&origin("s1"), "hook:claude", "crisis.suicidal_ideation")
        .await
        .unwrap();
    let id = id.expect("first mark recorded");
    let r = receipt(&b, &id).await;
    assert_eq!(r.event, Some(airlock_ledger::EventKind::Crisis));
    assert_eq!(r.session, "s1");
    assert_eq!(r.reasons[0].code, ReasonCode::SessionCrisis.as_str());
    // marked once
    assert_eq!(
        b.mark_crisis(&origin("s1"), "proxy", "x").await.unwrap(),
        None
    );
    assert!(b.in_crisis("s1").await.unwrap());

    let o = b.submit(tool("s1", "share_location")).await.unwrap();
    assert_eq!(o.status, Status::Pending, "{o:?}");
    assert!(
        o.reasons
            .iter()
            .any(|f| f.code == ReasonCode::CrisisDecision),
        "{o:?}"
    );
    assert_eq!(
        b.submit(tool("s1", "show_crisis_resources"))
            .await
            .unwrap()
            .status,
        Status::Allowed
    );
    assert_eq!(
        b.submit(tool("s2", "share_location")).await.unwrap().status,
        Status::Allowed
    );

    // only an approver clears it, recorded naming them
    let agent = Principal::new("claude", Role::Agent);
    assert!(matches!(
        b.clear_crisis(&agent, "s1").await,
        Err(ConfirmError::Forbidden(_))
    ));
    assert!(b.in_crisis("s1").await.unwrap());
    let (row, id) = b
        .clear_crisis(&person("alice"), "s1")
        .await
        .unwrap()
        .expect("cleared");
    assert_eq!(row.source, "hook:claude");
    let r = receipt(&b, &id).await;
    assert_eq!(r.event, Some(airlock_ledger::EventKind::Crisis));
    assert_eq!(r.approvers, ["alice"]);
    assert_eq!(r.reasons[0].code, ReasonCode::CrisisCleared.as_str());
    assert_eq!(b.clear_crisis(&person("alice"), "s1").await.unwrap(), None);
    assert_eq!(
        b.submit(tool("s1", "share_location")).await.unwrap().status,
        Status::Allowed
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_on_one_postgresql_agree_on_a_sessions_crisis_mode() {
    let Some(pg) = PgDb::create().await else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let cfg = |node: &str| BrokerConfig {
        node: node.into(),
        ..BrokerConfig::default()
    };
    let a = broker_at(d.path(), Some(pg.url.clone()), policy(TOOLS), cfg("a")).await;
    let b = broker_at(d.path(), Some(pg.url.clone()), policy(TOOLS), cfg("b")).await;
    a.mark_crisis(&origin("shared"), "proxy", "crisis.despair")
        .await
        .unwrap()
        .expect("marked");
    // node b decides in crisis mode, and sees the same list
    let o = b.submit(tool("shared", "share_location")).await.unwrap();
    assert_eq!(o.status, Status::Pending, "{o:?}");
    assert_eq!(b.crisis_sessions().await.unwrap().len(), 1);
    assert_eq!(
        b.mark_crisis(&origin("shared"), "hook:codex", "x")
            .await
            .unwrap(),
        None
    );
    // cleared on b, over on a
    b.clear_crisis(&person("bob"), "shared")
        .await
        .unwrap()
        .expect("cleared");
    assert!(!a.in_crisis("shared").await.unwrap());
    assert_eq!(
        a.submit(tool("shared", "share_location"))
            .await
            .unwrap()
            .status,
        Status::Allowed
    );
}

/// Tier 3 lets the reviewer share the decision, so a crisis decision meets the LLM factor.
const REVIEWED: &str = r#"
[[tools]]
name = "share_location"
tier = 1

[tiers.3]
confirm = "llm"
timeout = "20s"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_but_a_person_answers_a_crisis_decision() {
    for said in ["approve", "deny"] {
        let (_llm, url) = llm_server(verdict(said, 0.1)).await;
        let config = BrokerConfig {
            llm: Some(llm_config(&url, std::time::Duration::from_secs(5))),
            learn_after: 2,
            ..BrokerConfig::default()
        };
        let d = tempfile::tempdir().unwrap();
        let b = broker_at(d.path(), None, policy_text(REVIEWED), config).await;
        b.mark_crisis(&origin("s1"), "hook:claude", "crisis.x")
            .await
            .unwrap();
        // a grant of exactly this action, made by a person, stands in for nobody here
        let action = tool("s1", "share_location").action;
        let g = airlock_grants::NewGrant::new(
            airlock_grants::Subject::new("assistant", None),
            airlock_grants::Scope::exact(&action).unwrap(),
            airlock_grants::GrantKind::Permanent,
        );
        b.book().create(g, "alice").await.unwrap();

        let mut ids = Vec::new();
        for _ in 0..3 {
            let o = b.submit(tool("s1", "share_location")).await.unwrap();
            assert_eq!(o.status, Status::Pending, "{said}: {o:?}");
            let id = o.approval.unwrap();
            // the reviewer's verdict is recorded, and applied neither way
            for _ in 0..200 {
                if b.approval(&id).await.unwrap().llm.is_some() {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            let a = b.approval(&id).await.unwrap();
            assert!(a.llm.is_some(), "{said}: reviewed");
            assert_eq!(a.status, airlock_confirm::ApprovalStatus::Pending, "{said}");
            // no session grant stands in for a person either
            let session = airlock_confirm::Answer {
                scope: airlock_confirm::AnswerScope::Session,
                ..approve("alice")
            };
            assert!(
                matches!(b.answer(&id, session).await, Err(ConfirmError::Invalid(_))),
                "{said}"
            );
            let a = b.answer(&id, approve("alice")).await.unwrap();
            assert_eq!(a.status, airlock_confirm::ApprovalStatus::Approved);
            // however often a person approved it, nothing is learned
            assert_eq!(b.learnable(&a).await.unwrap(), None, "{said}");
            assert!(b.accept_learned(&id, &person("bob")).await.is_err());
            ids.push(id);
        }
        b.shutdown().await;
    }
}
