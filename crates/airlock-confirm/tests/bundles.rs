//! Per-agent tool bundles through the broker, the path every daemon surface takes (REST, the
//! proxy and the MCP gateway submit with their token's agent): an agent with a bundle is denied
//! what it was not given; another agent is not affected. Production declared by the policy makes
//! a change ask a person whoever submits it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use airlock_confirm::{BrokerConfig, Status, Submission};
use airlock_core::{Action, Decision, ReasonCode};
use airlock_policy::Channel;

use common::*;

fn tool(agent: &str, name: &str) -> Submission {
    Submission {
        action: Action::Tool {
            tool: name.into(),
            arguments: serde_json::json!({"file_path": "README.md"}),
        },
        channel: Channel::Api,
        ..sub(agent, "s1", "unused")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bundle_holds_through_the_broker() {
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(
        d.path(),
        None,
        policy("[agents.helper]\ntools = [\"Read\"]\n"),
        BrokerConfig::default(),
    )
    .await;
    let read = b.submit(tool("helper", "Read")).await.unwrap();
    assert_eq!(read.decision, Decision::Allow, "{read:?}");
    let grep = b.submit(tool("helper", "Grep")).await.unwrap();
    assert_eq!(grep.status, Status::Denied, "{grep:?}");
    assert_eq!(grep.reasons[0].rule_id, "policy.agent_bundle");
    assert_eq!(grep.reasons[0].code, ReasonCode::ToolUndeclared);
    let shell = b.submit(sub("helper", "s1", "ls")).await.unwrap();
    assert_eq!(shell.status, Status::Denied);
    // another agent keeps the declared tools and the read-only commands
    assert_eq!(
        b.submit(tool("claude", "Grep")).await.unwrap().decision,
        Decision::Allow
    );
    assert_eq!(
        b.submit(sub("claude", "s2", "ls")).await.unwrap().decision,
        Decision::Allow
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn production_alone_asks_a_person_through_the_broker() {
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(
        d.path(),
        None,
        policy("[policy]\nproduction = true\n"),
        BrokerConfig::default(),
    )
    .await;
    let o = b
        .submit(sub("claude", "s1", "touch notes.txt"))
        .await
        .unwrap();
    assert_eq!(o.decision, Decision::Ask, "{o:?}");
    assert_eq!(o.reasons[0].code, ReasonCode::ProductionChange);
    let a = b.approval(&o.approval.unwrap()).await.unwrap();
    assert!(a.confirm.person(), "{:?}", a.confirm);
    let read = b.submit(sub("claude", "s1", "ls -la")).await.unwrap();
    assert_eq!(read.decision, Decision::Allow);
}
