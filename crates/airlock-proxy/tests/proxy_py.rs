//! The proxy with the official `openai` Python SDK as its client (tests/proxy_py/client.py),
//! against a loopback upstream speaking the real wire format: allow passes byte for byte, deny
//! is rewritten, an ask is held and released by an approver answering over REST, silence denies,
//! streams are valid to the SDK (its own stream helper assembles and checks them).
//!
//! Needs the venv made by `.ci/proxy-py.sh` (target/proxy-py-venv, or AIRLOCK_PROXY_PYTHON).
//! Without it the tests print why and pass, unless AIRLOCK_REQUIRE_PY=1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod proxy_support;

use std::path::PathBuf;
use std::time::Duration;

use proxy_support::{Harness, start, whole_answer};
use serde_json::{Value, json};

fn python() -> Option<PathBuf> {
    let p = std::env::var_os("AIRLOCK_PROXY_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/proxy-py-venv/bin/python")
        });
    if p.exists() {
        return Some(p);
    }
    if std::env::var("AIRLOCK_REQUIRE_PY").as_deref() == Ok("1") {
        panic!(
            "AIRLOCK_REQUIRE_PY=1 but there is no Python venv at {}: run .ci/proxy-py.sh",
            p.display()
        );
    }
    eprintln!(
        "skipping: no Python venv with the openai SDK at {} (run .ci/proxy-py.sh)",
        p.display()
    );
    None
}

/// Runs the SDK client in `mode` with the user message `spec`; returns what it printed.
async fn sdk(py: &PathBuf, h: &Harness, mode: &str, spec: &Value) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/proxy_py/client.py");
    let out = tokio::process::Command::new(py)
        .arg(script)
        .arg(mode)
        .arg(spec.to_string())
        .env("AIRLOCK_PROXY_URL", h.u("/v1"))
        .env("AIRLOCK_AGENT_TOKEN", &h.agent)
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "client.py {mode} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk_whole_answers_allow_deny_and_errors() {
    let Some(py) = python() else { return };
    let h = start("30s", |_| {}).await;
    let spec = json!({"text": "", "calls": [["bash", "{\"command\":\"ls -la\"}"]]});
    let r = sdk(&py, &h, "whole", &spec).await;
    assert_eq!(r["sdk"], "3.54.0");
    assert_eq!(r["raw"], whole_answer(&spec), "not byte for byte");
    assert_eq!(
        r["tool_calls"],
        json!([["call_0", "bash", "{\"command\":\"ls -la\"}"]])
    );
    assert_eq!(r["x_vendor"], json!({"nested": [1, 2.5, "é"]}));
    // The SDK's extra body field went upstream, and the session header named the session.
    let (_, up) = h.upstream.seen.last();
    let up: Value = serde_json::from_slice(&up).unwrap();
    assert_eq!(up["x_client_field"], json!({"kept": true}));
    let rs = h.receipts().await;
    assert!(
        rs.iter()
            .all(|r| r["session"] == "py-session" && r["principal"] == "agent-1")
    );

    let spec = json!({"text": "Sure.", "calls": [["bash", "{\"command\":\"rm -rf /\"}"]]});
    let r = sdk(&py, &h, "whole", &spec).await;
    assert_eq!(r["tool_calls"], json!([]));
    assert_eq!(r["finish_reason"], "stop");
    assert!(
        r["content"]
            .as_str()
            .unwrap()
            .starts_with("Sure.\n\n[airlock] The tool call `bash` was blocked")
    );

    let r = sdk(&py, &h, "models", &json!({})).await;
    assert_eq!(r["models"], json!(["test-model"]));
    let r = sdk(&py, &h, "error", &json!({"upstream_error": true})).await;
    assert_eq!(r["status"], 429);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk_streams_allow_deny_in_order() {
    let Some(py) = python() else { return };
    let h = start("30s", |_| {}).await;
    let spec = json!({"text": "Looking around.", "calls": [
        ["bash", "{\"command\":\"rm -rf /\"}"],
        ["bash", "{\"command\":\"ls -la\"}"]]});
    let r = sdk(&py, &h, "stream", &spec).await;
    assert_eq!(
        r["tool_calls"],
        json!([["call_1", "bash", "{\"command\":\"ls -la\"}"]])
    );
    assert_eq!(r["finish_reason"], "tool_calls");
    let order: Vec<&str> = r["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(order.first(), Some(&"text"));
    assert_eq!(order.last(), Some(&"finish"));
    assert!(
        r["content"]
            .as_str()
            .unwrap()
            .starts_with("Looking around.\n\n[airlock]")
    );

    let r = sdk(&py, &h, "helper", &spec).await;
    assert_eq!(
        r["tool_calls"],
        json!([["call_1", "bash", "{\"command\":\"ls -la\"}"]])
    );
    let all_blocked = json!({"calls": [["bash", "{\"command\":\"rm -rf /\"}"]]});
    let r = sdk(&py, &h, "helper", &all_blocked).await;
    assert_eq!(r["tool_calls"], json!([]));
    assert_eq!(r["finish_reason"], "stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk_ask_is_held_until_approved_and_silence_denies() {
    let Some(py) = python() else { return };
    let h = start("30s", |_| {}).await;
    let spec = json!({"calls": [["bash", "{\"command\":\"git push --force origin main\"}"]]});
    let answer = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        h.answer_next("approve").await
    };
    let (r, _) = tokio::join!(sdk(&py, &h, "whole", &spec), answer);
    assert_eq!(r["raw"], whole_answer(&spec));
    let answer = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        h.answer_next("approve").await
    };
    let (r, _) = tokio::join!(sdk(&py, &h, "helper", &spec), answer);
    assert_eq!(
        r["tool_calls"],
        json!([[
            "call_0",
            "bash",
            "{\"command\":\"git push --force origin main\"}"
        ]])
    );

    let h = start("1s", |_| {}).await;
    let r = sdk(&py, &h, "stream", &spec).await;
    assert_eq!(r["tool_calls"], json!([]));
    assert!(r["content"].as_str().unwrap().contains("APPROVAL_TIMEOUT"));
    let r = sdk(&py, &h, "whole", &spec).await;
    assert_eq!(r["finish_reason"], "stop");
    assert!(r["content"].as_str().unwrap().contains("APPROVAL_TIMEOUT"));
}
