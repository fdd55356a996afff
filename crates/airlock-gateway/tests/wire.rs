//! Snapshots of the JSON wire shapes (insta), with ids, times, hashes and secrets redacted so
//! a snapshot changes only when a shape does: outcomes (allowed, denied, pending, decided),
//! an approval as approvers see it, errors, tokens, health and ledger verification.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_testkit::gateway as common;

use common::{asking, client, get, post, start};
use serde_json::{Value, json};

const REDACT: &[&str] = &[
    "id",
    "approval",
    "receipt",
    "request_id",
    "deadline_ms",
    "created_ms",
    "decided_ms",
    "effective_ms",
    "revoked_ms",
    "policy_sha256",
    "secret",
    "root",
    "anchor",
    "grant",
];

/// Ids inside messages (`apr-` and 24 hex digits).
fn redact_ids(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find("apr-") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 4..];
        let n = tail.chars().take_while(char::is_ascii_hexdigit).count();
        out.push_str(if n > 0 { "[id]" } else { "apr-" });
        rest = &tail[n..];
    }
    out.push_str(rest);
    out
}

/// Replaces volatile values by a marker that keeps their JSON type visible. The policy's own
/// texts (a finding's message, remediation, evidence) belong to the rule packs' tests.
fn redact(v: &mut Value) {
    let finding = v.get("rule_id").is_some();
    match v {
        Value::String(s) => *s = redact_ids(s),
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                let policy_text =
                    finding && ["message", "remediation", "evidence"].contains(&k.as_str());
                if (REDACT.contains(&k.as_str()) || policy_text) && !x.is_null() {
                    *x = Value::String(format!(
                        "[{}]",
                        match x {
                            Value::Number(_) => "number",
                            Value::String(_) => "string",
                            _ => "value",
                        }
                    ));
                } else {
                    redact(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(redact),
        _ => {}
    }
}

fn r(mut v: Value) -> Value {
    redact(&mut v);
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wire_shapes() {
    let s = start().await;
    let c = client();
    let (_, allowed) = post(
        &c,
        &s.u("/v1/actions"),
        &s.agent,
        json!({"kind": "shell", "command": "ls", "session": "w"}),
    )
    .await;
    insta::assert_json_snapshot!("outcome_allowed", r(allowed));
    let (_, denied) = post(
        &c,
        &s.u("/v1/actions"),
        &s.agent,
        json!({"kind": "shell", "command": "rm -rf / --no-preserve-root", "session": "w"}),
    )
    .await;
    insta::assert_json_snapshot!("outcome_denied", r(denied));
    let (_, pending) = post(&c, &s.u("/v1/actions"), &s.agent, asking("w")).await;
    let id = pending["id"].as_str().unwrap().to_string();
    insta::assert_json_snapshot!("outcome_pending", r(pending));
    // The LLM factor is recorded just after the approval opens (here: no reviewer).
    let mut approval = Value::Null;
    for _ in 0..100 {
        approval = get(&c, &s.u(&format!("/v1/approvals/{id}")), &s.approver)
            .await
            .1;
        if !approval["llm"].is_null() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    insta::assert_json_snapshot!("approval_pending", r(approval));
    let (_, answered) = post(
        &c,
        &s.u(&format!("/v1/approvals/{id}")),
        &s.approver,
        json!({"decision": "approve", "reason": "ok"}),
    )
    .await;
    insta::assert_json_snapshot!("approval_approved", r(answered));
    let (_, done) = get(
        &c,
        &s.u(&format!("/v1/actions/{id}/wait?timeout=5")),
        &s.agent,
    )
    .await;
    insta::assert_json_snapshot!("outcome_decided", r(done));

    let (_, e403) = post(
        &c,
        &s.u(&format!("/v1/approvals/{id}")),
        &s.agent,
        json!({"decision": "approve"}),
    )
    .await;
    insta::assert_json_snapshot!("error_forbidden", e403);
    let (_, e409) = post(
        &c,
        &s.u(&format!("/v1/approvals/{id}")),
        &s.approver,
        json!({"decision": "deny"}),
    )
    .await;
    insta::assert_json_snapshot!("error_already_decided", r(e409));
    let (_, e400) = post(
        &c,
        &s.u("/v1/actions"),
        &s.agent,
        json!({"kind": "shell", "command": "ls", "session": "w", "allow": true}),
    )
    .await;
    insta::assert_json_snapshot!("error_unknown_field", e400);

    let (_, token) = post(
        &c,
        &s.u("/v1/tokens"),
        &s.admin,
        json!({"name": "ci-bot", "role": "agent"}),
    )
    .await;
    insta::assert_json_snapshot!("token_created", r(token));
    let (_, health) = common::call(&c, reqwest::Method::GET, &s.u("/healthz"), None, None).await;
    insta::assert_json_snapshot!("healthz", health);
    let (_, verify) = get(&c, &s.u("/v1/ledger/verify"), &s.admin).await;
    // Counts depend on when checkpoints were signed: only the shape is fixed.
    let shape: serde_json::Map<String, Value> = verify
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let t = match v {
                Value::Bool(b) => Value::Bool(*b),
                Value::Number(_) => "[number]".into(),
                Value::String(_) => "[string]".into(),
                _ => "[value]".into(),
            };
            (k.clone(), t)
        })
        .collect();
    insta::assert_json_snapshot!("ledger_verify", shape);
    s.stop().await;
}
