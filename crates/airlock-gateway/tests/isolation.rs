//! Agents are kept apart: one agent cannot read another's outcomes, and a request id another
//! agent already used never hands over that agent's decision for a different action.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_testkit::gateway as common;

use airlock_gateway::Role;
use common::{client, get, post, start};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_ids_and_outcomes_are_per_agent() {
    let s = start().await;
    let c = client();
    let other = s.auth.create("agent-2", Role::Agent).await.unwrap().secret;
    let (_, a) = post(
        &c,
        &s.u("/v1/actions"),
        &s.agent,
        json!({"kind": "shell", "command": "ls", "session": "a", "request_id": "req-1"}),
    )
    .await;
    assert_eq!(a["status"], "allowed", "{a}");
    // The same request id from another agent, for a dangerous command: decided on its own.
    let (st, b) = post(
        &c,
        &s.u("/v1/actions"),
        &other,
        json!({"kind": "shell", "command": "rm -rf / --no-preserve-root", "session": "b", "request_id": "req-1"}),
    )
    .await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(
        b["status"], "denied",
        "another agent's allow was handed over: {b}"
    );
    // The same agent reusing the id for another action does not get the old allow either,
    // while repeating the same action is idempotent (the same id and receipt).
    let (_, c2) = post(
        &c,
        &s.u("/v1/actions"),
        &s.agent,
        json!({"kind": "shell", "command": "rm -rf / --no-preserve-root", "session": "a", "request_id": "req-1"}),
    )
    .await;
    assert_eq!(c2["status"], "denied", "{c2}");
    let (_, again) = post(
        &c,
        &s.u("/v1/actions"),
        &s.agent,
        json!({"kind": "shell", "command": "ls", "session": "a", "request_id": "req-1"}),
    )
    .await;
    assert_eq!((&again["id"], &again["receipt"]), (&a["id"], &a["receipt"]));
    // Nor can it read the first agent's outcome.
    let id = a["id"].as_str().unwrap();
    let (st, _) = get(&c, &s.u(&format!("/v1/actions/{id}")), &other).await;
    assert_eq!(st, 404);
    let (st, v) = get(&c, &s.u(&format!("/v1/actions/{id}")), &s.agent).await;
    assert_eq!((st, v["status"].as_str()), (200, Some("allowed")));
    s.stop().await;
}
