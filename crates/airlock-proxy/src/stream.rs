//! Relaying a streamed answer (SSE). Events without tool calls go to the client at once, as the
//! upstream's bytes. Tool-call deltas are taken out of their chunks and buffered per choice and
//! call index; a call's decision starts once the next index begins (it is complete), and when a
//! choice finishes (its `finish_reason`, `[DONE]` or the end of the stream) the rest are decided
//! and all awaited; then the client gets one chunk with the allowed calls (whole,
//! renumbered from 0), one with the explanation of the blocked ones, then the finish. While a
//! person is being asked, an SSE comment keeps the connection alive. The stream always ends
//! with `data: [DONE]`.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use futures_util::StreamExt;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::Proxy;
use super::budget::Admitted;
use super::gate::{Call, CallVerdict, Who};
use super::privacy::{StreamRestore, restore_arguments};
use super::rewrite::explain;
use super::sse::{Splitter, data_event};

/// The buffer key of a choice's legacy `function_call` (after every tool call index).
const LEGACY: u64 = u64::MAX;

const KEEPALIVE: &[u8] = b": airlock is waiting for a decision\n\n";

/// The client's body: the relayed stream.
pub fn relay(
    proxy: Arc<Proxy>,
    who: Who,
    up: reqwest::Response,
    prefix: Option<String>,
    admitted: Option<Admitted>,
    privacy: Option<StreamRestore>,
) -> Body {
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    tokio::spawn(async move {
        let mut r = Relay {
            proxy,
            who,
            tx,
            gone: false,
            pending: BTreeMap::new(),
            envelope: Map::new(),
            done: false,
            prefix,
            admitted,
            privacy,
        };
        r.run(up).await;
    });
    let s = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, Infallible>(b), rx))
    });
    Body::from_stream(s)
}

/// One tool call being assembled from its deltas.
#[derive(Debug, Default)]
struct CallBuf {
    /// The first delta (its unknown fields are kept).
    first: Map<String, Value>,
    id: Option<Value>,
    name: String,
    arguments: String,
    /// The decision, started as soon as the call is complete (a later call index began).
    decision: Option<tokio::task::JoinHandle<CallVerdict>>,
}

struct Relay {
    proxy: Arc<Proxy>,
    who: Who,
    tx: mpsc::Sender<Bytes>,
    /// The client went away: decisions still finish (they are recorded), nothing is sent.
    gone: bool,
    /// Buffered calls per choice index, then per call index.
    pending: BTreeMap<u64, BTreeMap<u64, CallBuf>>,
    /// The last chunk's top-level fields (id, model, created…), for the chunks airlock writes.
    envelope: Map<String, Value>,
    done: bool,
    /// Text the answer must start with (crisis guidance), sent before the first chunk.
    prefix: Option<String>,
    /// The budget period the request counts in (usage chunks are charged to it).
    admitted: Option<Admitted>,
    /// Puts the request's personal data back into the answer (`privacy.rs`).
    privacy: Option<StreamRestore>,
}

impl Relay {
    async fn run(&mut self, up: reqwest::Response) {
        let mut split = Splitter::default();
        let mut body = up.bytes_stream();
        while let Some(piece) = body.next().await {
            let events = match piece {
                Ok(b) => split.push(&b),
                Err(e) => Err(e.to_string()),
            };
            match events {
                Ok(evs) => {
                    for ev in evs {
                        self.event(ev.raw, ev.data).await;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the upstream stream failed");
                    break;
                }
            }
        }
        if let Some(ev) = split.finish() {
            self.event(ev.raw, ev.data).await;
        }
        if !self.done {
            self.flush_private().await;
            self.flush_all().await;
            self.send(data_event("[DONE]")).await;
        }
    }

    async fn send(&mut self, b: Vec<u8>) {
        if !self.gone && self.tx.send(Bytes::from(b)).await.is_err() {
            self.gone = true;
        }
    }

    async fn event(&mut self, raw: Vec<u8>, data: Option<String>) {
        if self.done {
            return;
        }
        let Some(data) = data else {
            return self.send(raw).await;
        };
        if data.trim() == "[DONE]" {
            self.flush_private().await;
            self.flush_all().await;
            self.done = true;
            return self.send(raw).await;
        }
        let Ok(Value::Object(mut chunk)) = serde_json::from_str::<Value>(&data) else {
            // An event the proxy cannot read might hide a tool call: it is not relayed.
            tracing::warn!("dropped an unreadable event from the upstream stream");
            return self
                .send(b": airlock dropped an unreadable event\n\n".to_vec())
                .await;
        };
        if let (Some(at), Some(usage)) = (self.admitted, chunk.get("usage"))
            && usage.is_object()
        {
            self.proxy.charge(&self.who.agent, at, usage).await;
        }
        let mut envelope = chunk.clone();
        envelope.remove("choices");
        envelope.remove("usage");
        self.envelope = envelope;
        if let Some(p) = self.prefix.take() {
            let c = self.chunk(
                0,
                json!({"role": "assistant", "content": format!("{p}\n\n")}),
                Value::Null,
            );
            self.send(c).await;
        }
        let mut changed = self.privacy.as_mut().is_some_and(|p| p.chunk(&mut chunk));
        let mut finishing = Vec::new();
        if let Some(Value::Array(choices)) = chunk.get_mut("choices") {
            for (pos, choice) in choices.iter_mut().enumerate() {
                let idx = choice
                    .get("index")
                    .and_then(Value::as_u64)
                    .unwrap_or(pos as u64);
                if let Some(tcs) = choice
                    .get_mut("delta")
                    .and_then(Value::as_object_mut)
                    .and_then(|d| d.remove("tool_calls"))
                {
                    changed = true;
                    self.buffer(idx, tcs);
                }
                if let Some(fc) = choice
                    .get_mut("delta")
                    .and_then(Value::as_object_mut)
                    .and_then(|d| d.remove("function_call"))
                {
                    changed = true;
                    self.buffer_legacy(idx, fc);
                }
                let finished = choice.get("finish_reason").is_some_and(|f| !f.is_null());
                if finished && self.pending.contains_key(&idx) {
                    let fr = choice
                        .get_mut("finish_reason")
                        .map(Value::take)
                        .unwrap_or(Value::Null);
                    changed = true;
                    finishing.push((idx, fr));
                }
            }
        }
        if !changed {
            return self.send(raw).await;
        }
        if meaningful(&chunk) {
            let text = Value::Object(chunk).to_string();
            self.send(data_event(&text)).await;
        }
        for (idx, fr) in finishing {
            self.finish_choice(idx, fr).await;
        }
    }

    fn buffer(&mut self, choice: u64, tcs: Value) {
        let Value::Array(tcs) = tcs else { return };
        let calls = self.pending.entry(choice).or_default();
        for (pos, tc) in tcs.into_iter().enumerate() {
            let Value::Object(tc) = tc else { continue };
            let i = tc
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(pos as u64);
            // Calls arrive one after another: a later index means the earlier ones are whole,
            // so their decisions start now, while the model keeps streaming.
            for (_, done) in calls.range_mut(..i) {
                if done.decision.is_none() {
                    restore_arguments(
                        self.privacy.as_ref().map(StreamRestore::restorer),
                        &mut done.arguments,
                    );
                    let proxy = self.proxy.clone();
                    let who = self.who.clone();
                    let call = Call {
                        name: done.name.clone(),
                        arguments: done.arguments.clone(),
                    };
                    done.decision =
                        Some(tokio::spawn(async move { proxy.decide(&who, &call).await }));
                }
            }
            let b = calls.entry(i).or_default();
            if b.first.is_empty() {
                b.first = tc.clone();
            }
            if let Some(id) = tc.get("id").filter(|v| !v.is_null()) {
                b.id.get_or_insert_with(|| id.clone());
            }
            if let Some(f) = tc.get("function") {
                if let Some(n) = f.get("name").and_then(Value::as_str) {
                    b.name.push_str(n);
                }
                if let Some(a) = f.get("arguments").and_then(Value::as_str) {
                    b.arguments.push_str(a);
                }
            }
        }
    }

    /// A legacy `function_call` delta, buffered as the choice's call [`LEGACY`].
    fn buffer_legacy(&mut self, choice: u64, fc: Value) {
        let b = self
            .pending
            .entry(choice)
            .or_default()
            .entry(LEGACY)
            .or_default();
        if let Some(n) = fc.get("name").and_then(Value::as_str) {
            b.name.push_str(n);
        }
        if let Some(a) = fc.get("arguments").and_then(Value::as_str) {
            b.arguments.push_str(a);
        }
    }

    /// Text held back for a placeholder cut at the end of the stream, sent as it is.
    async fn flush_private(&mut self) {
        let rest = self.privacy.as_mut().map(StreamRestore::rest);
        for (idx, text) in rest.unwrap_or_default() {
            let c = self.chunk(idx, json!({ "content": text }), Value::Null);
            self.send(c).await;
        }
    }

    async fn flush_all(&mut self) {
        let open: Vec<u64> = self.pending.keys().copied().collect();
        for idx in open {
            self.finish_choice(idx, Value::String("tool_calls".into()))
                .await;
        }
    }

    /// Decides a choice's calls and emits what the agent may see, then the finish.
    async fn finish_choice(&mut self, idx: u64, finish_reason: Value) {
        let Some(bufs) = self.pending.remove(&idx) else {
            return;
        };
        let mut bufs: Vec<(u64, CallBuf)> = bufs.into_iter().collect();
        for (_, b) in bufs.iter_mut().filter(|(_, b)| b.decision.is_none()) {
            restore_arguments(
                self.privacy.as_ref().map(StreamRestore::restorer),
                &mut b.arguments,
            );
        }
        let started: Vec<_> = bufs.iter_mut().map(|(_, b)| b.decision.take()).collect();
        let verdicts = self.decide_with_keepalive(&bufs, started).await;
        let mut allowed = Vec::new();
        let mut legacy = None;
        let mut notes = Vec::new();
        for ((key, b), v) in bufs.into_iter().zip(&verdicts) {
            match v {
                CallVerdict::Allow if key == LEGACY => {
                    legacy = Some(json!({"name": b.name, "arguments": b.arguments}));
                }
                CallVerdict::Allow => allowed.push(whole_call(b, allowed.len())),
                CallVerdict::Block { code, reason } => notes.push(explain(
                    &self.proxy.config.deny_template,
                    &b.name,
                    code,
                    reason,
                )),
            }
        }
        let all_blocked = allowed.is_empty() && legacy.is_none();
        if !allowed.is_empty() {
            let c = self.chunk(idx, json!({ "tool_calls": allowed }), Value::Null);
            self.send(c).await;
        }
        if let Some(fc) = legacy {
            let c = self.chunk(idx, json!({ "function_call": fc }), Value::Null);
            self.send(c).await;
        }
        if !notes.is_empty() {
            let text = format!("\n\n{}", notes.join("\n"));
            let c = self.chunk(idx, json!({ "content": text }), Value::Null);
            self.send(c).await;
        }
        let fr = if all_blocked
            && matches!(finish_reason.as_str(), Some("tool_calls" | "function_call"))
        {
            Value::String("stop".into())
        } else {
            finish_reason
        };
        let c = self.chunk(idx, json!({}), fr);
        self.send(c).await;
    }

    /// Every call's verdict (the started decisions awaited, the others decided now, all
    /// concurrently), with keep-alive comments while they take.
    async fn decide_with_keepalive(
        &mut self,
        bufs: &[(u64, CallBuf)],
        started: Vec<Option<tokio::task::JoinHandle<CallVerdict>>>,
    ) -> Vec<CallVerdict> {
        let proxy = self.proxy.clone();
        let who = self.who.clone();
        let decide = futures_util::future::join_all(bufs.iter().zip(started).map(|((_, b), h)| {
            let (proxy, who) = (proxy.clone(), who.clone());
            let call = Call {
                name: b.name.clone(),
                arguments: b.arguments.clone(),
            };
            async move {
                match h {
                    Some(h) => h.await.unwrap_or_else(|e| {
                        tracing::error!(error = %e, "a tool-call decision task failed");
                        CallVerdict::Block {
                            code: "INTERNAL_ERROR".into(),
                            reason: "airlock could not decide this call, so it is denied.".into(),
                        }
                    }),
                    None => proxy.decide(&who, &call).await,
                }
            }
        }));
        tokio::pin!(decide);
        let every = self
            .proxy
            .config
            .keepalive
            .max(std::time::Duration::from_millis(10));
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        loop {
            tokio::select! {
                v = &mut decide => return v,
                _ = tick.tick() => self.send(KEEPALIVE.to_vec()).await,
            }
        }
    }

    /// A chunk airlock writes for choice `idx`, in the stream's envelope.
    fn chunk(&self, idx: u64, delta: Value, finish_reason: Value) -> Vec<u8> {
        let mut c = self.envelope.clone();
        c.insert(
            "choices".into(),
            json!([{ "index": idx, "delta": delta, "finish_reason": finish_reason }]),
        );
        data_event(&Value::Object(c).to_string())
    }
}

/// The whole call, as one delta at position `n`.
fn whole_call(b: CallBuf, n: usize) -> Value {
    let mut tc = b.first;
    tc.insert("index".into(), json!(n));
    if let Some(id) = b.id {
        tc.insert("id".into(), id);
    }
    tc.entry("type").or_insert_with(|| json!("function"));
    let mut f = match tc.remove("function") {
        Some(Value::Object(f)) => f,
        _ => Map::new(),
    };
    f.insert("name".into(), Value::String(b.name));
    f.insert("arguments".into(), Value::String(b.arguments));
    tc.insert("function".into(), Value::Object(f));
    Value::Object(tc)
}

/// Whether a chunk whose tool calls were taken out still says something.
fn meaningful(chunk: &Map<String, Value>) -> bool {
    if chunk.get("usage").is_some_and(|u| !u.is_null()) {
        return true;
    }
    let Some(Value::Array(choices)) = chunk.get("choices") else {
        return true;
    };
    choices.iter().any(|c| {
        c.get("finish_reason").is_some_and(|f| !f.is_null())
            || c.get("delta")
                .and_then(Value::as_object)
                .is_some_and(|d| d.iter().any(|(_, v)| !v.is_null()))
    })
}
