//! Two gateways on one PostgreSQL database: an action submitted on node A shows up in node
//! B's event stream and pending list, an approval given on B releases the agent waiting on A,
//! and the answer cannot be given a second time on A.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_testkit::gateway as common;

use std::time::Duration;

use common::{asking, client, get, post};
use futures_util::StreamExt;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_on_b_releases_the_agent_waiting_on_a() {
    let Some(pg) = common::PgSchema::create().await else {
        return;
    };
    let a = common::start_on(Some(pg), common::DEFAULT_MAX).await;
    let b = common::start_node(&a.pg_url().unwrap(), a.data_dir().unwrap(), "node-b").await;
    let c = client();

    // Node B's inbox listens while the agent submits on A.
    let r = c
        .post(b.u("/inbox/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}", b.approver))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let cookie = r.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let mut events = c
        .get(b.u("/inbox/events"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .bytes_stream();

    let (_, out) = post(&c, &a.u("/v1/actions"), &a.agent, asking("2n")).await;
    assert_eq!(out["status"], "pending", "{out}");
    let id = out["id"].as_str().unwrap().to_string();
    let mut seen = String::new();
    let got = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(chunk) = events.next().await {
            seen.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
            if seen.contains(&id) {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(got, Ok(true), "node B's stream: {seen}");
    let (_, pending) = get(&c, &b.u("/v1/approvals"), &b.approver).await;
    assert!(
        pending
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["id"] == id.as_str())
    );

    let waiter = {
        let c = c.clone();
        let url = a.u(&format!("/v1/actions/{id}/wait?timeout=20"));
        let agent = a.agent.clone();
        tokio::spawn(async move { get(&c, &url, &agent).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (st, v) = post(
        &c,
        &b.u(&format!("/v1/approvals/{id}")),
        &b.approver,
        json!({"decision": "approve"}),
    )
    .await;
    assert_eq!(st, 200, "{v}");
    let (st, done) = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the agent on A was not released")
        .unwrap();
    assert_eq!(
        (st, done["status"].as_str()),
        (200, Some("allowed")),
        "{done}"
    );
    let (st, v) = post(
        &c,
        &a.u(&format!("/v1/approvals/{id}")),
        &a.approver,
        json!({"decision": "deny"}),
    )
    .await;
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (409, Some("ALREADY_DECIDED"))
    );
    drop(events);
    b.stop().await;
    a.stop().await;
}
