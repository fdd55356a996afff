//! Workspace roots of agent tokens, over a real gateway and broker whose policy is found from
//! the action's working directory as the daemon finds it (`.airlock/policy.toml` above `cwd`):
//! an agent token created with roots cannot name a `cwd` outside them, nor `cd` out of them in
//! its command line, so it cannot pick the directory (and the project policy) its actions are
//! judged by. Refusals are 422 `CWD_OUTSIDE_ROOTS` and never reach the broker. SQLite and
//! PostgreSQL.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_testkit::gateway as common;

use std::path::Path;
use std::sync::Arc;

use airlock_confirm::PolicyProvider;
use airlock_policy::{Policy, Sources};
use common::{client, post};
use serde_json::{Value, json};

fn discovering() -> PolicyProvider {
    Arc::new(|cwd: Option<&Path>| Policy::load(&Sources::discover(None, cwd)).map(Arc::new))
}

async fn roots(pg: Option<common::PgSchema>) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let proj = ws.join("proj");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(proj.join(".airlock")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        proj.join(".airlock/policy.toml"),
        "[[rules]]\nid = \"no-publish\"\nshell = \"npm publish *\"\ndecision = \"deny\"\n",
    )
    .unwrap();
    let s = common::start_with(discovering(), pg, common::DEFAULT_MAX).await;
    let c = client();
    let ws_text = ws.display().to_string();

    // roots belong to agent tokens and are absolute
    let (st, v) = post(
        &c,
        &s.u("/v1/tokens"),
        &s.admin,
        json!({"name": "alice", "role": "approver", "roots": [ws_text]}),
    )
    .await;
    assert_eq!(st, 422, "{v}");
    let (st, v) = post(
        &c,
        &s.u("/v1/tokens"),
        &s.admin,
        json!({"name": "bot", "role": "agent", "roots": ["relative/dir"]}),
    )
    .await;
    assert_eq!(st, 422, "{v}");
    let (st, v) = post(
        &c,
        &s.u("/v1/tokens"),
        &s.admin,
        json!({"name": "bot", "role": "agent", "roots": [format!("{ws_text}/./")]}),
    )
    .await;
    assert_eq!(st, 201, "{v}");
    let bot = v["secret"].as_str().unwrap().to_string();

    let submit = |cwd: Option<String>, command: &str| {
        let mut b = json!({"kind": "shell", "command": command, "session": "r1"});
        if let Some(c) = cwd {
            b["cwd"] = Value::String(c);
        }
        b
    };
    let before = s.receipts().await.len();
    // inside the roots, the project's policy judges
    let (st, v) = post(
        &c,
        &s.u("/v1/actions"),
        &bot,
        submit(Some(proj.display().to_string()), "npm publish"),
    )
    .await;
    assert_eq!((st, v["decision"].as_str()), (200, Some("deny")), "{v}");
    // a cwd outside the roots (where no project forbids it) is refused, whatever its spelling
    for cwd in [
        outside.display().to_string(),
        format!("{ws_text}/../outside"),
        format!("{ws_text}x"),
        "proj".to_string(),
        "/".to_string(),
    ] {
        let (st, v) = post(
            &c,
            &s.u("/v1/actions"),
            &bot,
            submit(Some(cwd.clone()), "ls"),
        )
        .await;
        assert_eq!(
            (st, v["error"]["code"].as_str()),
            (422, Some("CWD_OUTSIDE_ROOTS")),
            "{cwd}: {v}"
        );
    }
    // so is a line that changes directory out of them
    for line in [
        format!("cd {} && npm publish", outside.display()),
        "cd .. && cd .. && ls".to_string(),
        "bash -c 'cd / && ls'".to_string(),
    ] {
        let (st, v) = post(
            &c,
            &s.u("/v1/actions"),
            &bot,
            submit(Some(ws_text.clone()), &line),
        )
        .await;
        assert_eq!(
            (st, v["error"]["code"].as_str()),
            (422, Some("CWD_OUTSIDE_ROOTS")),
            "{line}: {v}"
        );
    }
    assert_eq!(
        s.receipts().await.len(),
        before + 1,
        "refusals never reach the broker"
    );
    // inside, without a cwd (the first root), and a cd that stays inside: decided
    let (st, v) = post(&c, &s.u("/v1/actions"), &bot, submit(None, "ls")).await;
    assert_eq!((st, v["decision"].as_str()), (200, Some("allow")), "{v}");
    let (st, v) = post(
        &c,
        &s.u("/v1/actions"),
        &bot,
        submit(Some(ws_text.clone()), "cd proj && ls"),
    )
    .await;
    assert_eq!((st, v["decision"].as_str()), (200, Some("allow")), "{v}");
    // a line that changes into the project from elsewhere in the roots is judged by the
    // project's policy, as if sent from inside it
    for line in [
        "cd proj && npm publish",
        "cd ./proj; npm publish --tag next",
    ] {
        let (st, v) = post(
            &c,
            &s.u("/v1/actions"),
            &bot,
            submit(Some(ws_text.clone()), line),
        )
        .await;
        assert_eq!(
            (st, v["decision"].as_str()),
            (200, Some("deny")),
            "{line}: {v}"
        );
    }
    // a token without roots is not confined
    let (st, v) = post(
        &c,
        &s.u("/v1/actions"),
        &s.agent,
        submit(Some(outside.display().to_string()), "ls"),
    )
    .await;
    assert_eq!(st, 200, "{v}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_roots_confine_the_working_directory() {
    roots(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_roots_confine_the_working_directory() {
    let Some(pg) = common::PgSchema::create().await else {
        return;
    };
    roots(Some(pg)).await;
}
