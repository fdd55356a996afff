//! The proxy with streamed answers (SSE), over reqwest: text deltas arrive before any tool call
//! is decided, allowed calls arrive whole, blocked ones are replaced by an explanation, an ask
//! sends keep-alive comments until the approver answers, silence denies, and every stream is a
//! valid sequence of chunks ending with `data: [DONE]`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod proxy_support;

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use proxy_support::{Harness, client, request, start};
use serde_json::{Value, json};

/// One received event with the time it arrived.
#[derive(Debug)]
enum Ev {
    Comment(String),
    Chunk(Value),
    Done,
}

async fn stream(h: &Harness, spec: Value) -> Vec<(Duration, Ev)> {
    let t = Instant::now();
    let r = client()
        .post(h.u("/v1/chat/completions"))
        .bearer_auth(&h.agent)
        .json(&request(spec, true))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let mut body = r.bytes_stream();
    let mut buf = String::new();
    let mut out = Vec::new();
    while let Some(b) = body.next().await {
        buf.push_str(std::str::from_utf8(&b.unwrap()).unwrap());
        while let Some(end) = buf.find("\n\n") {
            let ev: String = buf.drain(..end + 2).collect();
            let ev = ev.trim_end();
            let at = t.elapsed();
            if let Some(c) = ev.strip_prefix(':') {
                out.push((at, Ev::Comment(c.trim().to_string())));
            } else if let Some(d) = ev.strip_prefix("data: ") {
                if d == "[DONE]" {
                    out.push((at, Ev::Done));
                } else {
                    out.push((at, Ev::Chunk(serde_json::from_str(d).expect(d))));
                }
            } else {
                panic!("not an SSE event: {ev:?}");
            }
        }
    }
    assert!(buf.trim().is_empty(), "trailing bytes {buf:?}");
    assert!(
        matches!(out.last(), Some((_, Ev::Done))),
        "no [DONE]: {out:?}"
    );
    assert_eq!(out.iter().filter(|(_, e)| matches!(e, Ev::Done)).count(), 1);
    out
}

/// The text, the tool calls (assembled by index as an SDK does) and the finish reason.
fn assemble(evs: &[(Duration, Ev)]) -> (String, Vec<(String, String, String)>, String) {
    let mut text = String::new();
    let mut calls: Vec<(String, String, String)> = Vec::new();
    let mut finish = String::new();
    for (_, e) in evs {
        let Ev::Chunk(c) = e else { continue };
        assert_eq!(c["object"], "chat.completion.chunk");
        for ch in c["choices"].as_array().unwrap() {
            if let Some(t) = ch["delta"]["content"].as_str() {
                text.push_str(t);
            }
            for tc in ch["delta"]["tool_calls"].as_array().into_iter().flatten() {
                let i = tc["index"].as_u64().unwrap() as usize;
                if calls.len() <= i {
                    assert_eq!(calls.len(), i, "tool call indexes must be contiguous");
                    calls.push(Default::default());
                }
                let slot = &mut calls[i];
                if let Some(id) = tc["id"].as_str() {
                    slot.0 = id.to_string();
                }
                slot.1
                    .push_str(tc["function"]["name"].as_str().unwrap_or(""));
                slot.2
                    .push_str(tc["function"]["arguments"].as_str().unwrap_or(""));
            }
            if let Some(f) = ch["finish_reason"].as_str() {
                finish = f.to_string();
            }
        }
    }
    (text, calls, finish)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_only_streams_pass_through() {
    let h = start("30s", |_| {}).await;
    let evs = stream(&h, json!({"text": "Hello there, streaming world."})).await;
    let (text, calls, finish) = assemble(&evs);
    assert_eq!(text, "Hello there, streaming world.");
    assert!(calls.is_empty());
    assert_eq!(finish, "stop");
    assert!(
        evs.iter()
            .any(|(_, e)| matches!(e, Ev::Comment(c) if c == "upstream ping"))
    );
    // The usage chunk (no choices) is relayed too.
    assert!(
        evs.iter()
            .any(|(_, e)| matches!(e, Ev::Chunk(c) if c["usage"]["total_tokens"] == 18))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_calls_arrive_whole_and_blocked_ones_are_explained() {
    let h = start("30s", |_| {}).await;
    let evs = stream(
        &h,
        json!({"text": "Let me look.", "calls": [
            ["terminal", "{\"command\":\"rm -rf /\"}"],
            ["bash", "{\"command\":\"ls -la /tmp\"}"],
            ["get_weather", "{\"city\":\"Oslo\"}"]]}),
    )
    .await;
    let (text, calls, finish) = assemble(&evs);
    assert!(
        text.starts_with("Let me look.\n\n[airlock] The tool call `terminal` was blocked"),
        "{text}"
    );
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[0],
        (
            "call_1".into(),
            "bash".into(),
            "{\"command\":\"ls -la /tmp\"}".into()
        )
    );
    assert_eq!(
        calls[1],
        (
            "call_2".into(),
            "get_weather".into(),
            "{\"city\":\"Oslo\"}".into()
        )
    );
    assert_eq!(finish, "tool_calls");
    // Chunks airlock writes keep the stream's envelope.
    for (_, e) in &evs {
        if let Ev::Chunk(c) = e {
            assert_eq!(c["id"], "chatcmpl-s");
            assert_eq!(c["model"], "test-model");
        }
    }
    assert_eq!(h.receipts().await.len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_blocked_stream_finishes_with_stop() {
    let h = start("30s", |_| {}).await;
    let evs = stream(
        &h,
        json!({"calls": [["bash", "{\"command\":\"rm -rf /\"}"]]}),
    )
    .await;
    let (text, calls, finish) = assemble(&evs);
    assert!(calls.is_empty());
    assert!(text.contains("`bash` was blocked"));
    assert_eq!(finish, "stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_keeps_the_stream_alive_until_approved() {
    let h = start("30s", |_| {}).await;
    let answer = async {
        tokio::time::sleep(Duration::from_millis(700)).await;
        h.answer_next("approve").await
    };
    let spec = json!({"text": "Pushing now.", "calls": [["bash", "{\"command\":\"git push --force origin main\"}"]]});
    let (evs, _) = tokio::join!(stream(&h, spec), answer);
    let (text, calls, finish) = assemble(&evs);
    assert_eq!(text, "Pushing now.");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].2, "{\"command\":\"git push --force origin main\"}");
    assert_eq!(finish, "tool_calls");
    // The text came at once, keep-alives while a person was asked, the call only after.
    let first_text = evs
        .iter()
        .find(|(_, e)| matches!(e, Ev::Chunk(c) if c["choices"][0]["delta"]["content"].as_str().is_some_and(|t| !t.is_empty())))
        .unwrap()
        .0;
    let call_at = evs
        .iter()
        .find(|(_, e)| matches!(e, Ev::Chunk(c) if c["choices"][0]["delta"].get("tool_calls").is_some()))
        .unwrap()
        .0;
    assert!(
        first_text < Duration::from_millis(500),
        "text was held: {first_text:?}"
    );
    assert!(
        call_at >= Duration::from_millis(700),
        "call released early: {call_at:?}"
    );
    let alive = evs
        .iter()
        .filter(|(_, e)| matches!(e, Ev::Comment(c) if c.contains("waiting for a decision")))
        .count();
    assert!(alive >= 2, "keep-alives: {alive}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silence_denies_in_a_stream() {
    let h = start("1s", |_| {}).await;
    let evs = stream(
        &h,
        json!({"calls": [["bash", "{\"command\":\"git push --force origin main\"}"]]}),
    )
    .await;
    let (text, calls, finish) = assemble(&evs);
    assert!(calls.is_empty());
    assert!(text.contains("APPROVAL_TIMEOUT"), "{text}");
    assert_eq!(finish, "stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_function_call_deltas_are_gated() {
    let h = start("30s", |_| {}).await;
    let fc = |evs: &[(Duration, Ev)]| {
        let mut name = String::new();
        let mut args = String::new();
        for (_, e) in evs {
            if let Ev::Chunk(c) = e
                && let Some(f) = c["choices"][0]["delta"].get("function_call")
            {
                name.push_str(f["name"].as_str().unwrap_or(""));
                args.push_str(f["arguments"].as_str().unwrap_or(""));
            }
        }
        (name, args)
    };
    let evs = stream(
        &h,
        json!({"legacy": true, "calls": [["bash", "{\"command\":\"ls -la\"}"]]}),
    )
    .await;
    assert_eq!(fc(&evs), ("bash".into(), "{\"command\":\"ls -la\"}".into()));
    assert_eq!(assemble(&evs).2, "function_call");
    let evs = stream(
        &h,
        json!({"legacy": true, "calls": [["bash", "{\"command\":\"rm -rf /\"}"]]}),
    )
    .await;
    assert_eq!(fc(&evs), (String::new(), String::new()));
    let (text, _, finish) = assemble(&evs);
    assert!(text.contains("`bash` was blocked"));
    assert_eq!(finish, "stop");
}

/// A streamed answer with a 4xx status is relayed through the same gate: a blocked call is
/// replaced by its explanation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_error_status_with_calls_is_gated() {
    let h = start("30s", |_| {}).await;
    let r = client()
        .post(h.u("/v1/chat/completions"))
        .bearer_auth(&h.agent)
        .json(&request(
            json!({"status": 400, "calls": [["bash", "{\"command\":\"rm -rf /\"}"]]}),
            true,
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body = String::from_utf8(r.bytes().await.unwrap().to_vec()).unwrap();
    assert!(!body.contains("tool_calls"), "{body}");
    assert!(body.contains("was blocked"), "{body}");
    assert!(body.trim_end().ends_with("data: [DONE]"), "{body}");
}
