//! Answers on the crisis route checked before the person sees them (seeds 001 and 003: never
//! methods, doses, heights or means): the model's text is checked with the reply rules
//! (`airlock_shield::reply`, `rules/text/crisis_reply.toml`). A reply that gives method details
//! is replaced by the crisis response (the safety question and the resources) and recorded
//! (`CRISIS_REPLY_METHOD`, by the reply's hash). A whole answer is checked as it is; a stream is
//! held back until it is whole, the crisis guidance excepted (it goes out at once: resources are
//! never delayed), with a keep-alive comment while it waits.

use std::time::Duration;

use airlock_core::ReasonCode;
use airlock_ledger::canonical::sha256_hex;
use axum::body::{Body, Bytes};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::Proxy;
use super::gate::Who;
use super::sse::{Splitter, data_event};
use airlock_gateway::ApiError;

const CHECKING: &[u8] = b": airlock is checking the answer\n\n";

impl Proxy {
    /// Records a replaced reply.
    async fn note_replaced(&self, who: &Who, text: &str, rule: &str) {
        let event = airlock_confirm::Event::Scan {
            origin: airlock_confirm::Origin {
                agent: who.agent.clone(),
                session: who.session.clone(),
            },
            source: format!("proxy:crisis-reply:{rule}"),
            direction: "assistant".into(),
            text_sha256: sha256_hex(text.as_bytes()),
            verdict: airlock_confirm::ScanVerdict {
                label: "CRISIS_REPLY_METHOD".into(),
                flag: Some(ReasonCode::CrisisReplyMethod),
            },
            handling: "block".into(),
        };
        if let Err(e) = self.broker.record_event(&event).await {
            // The person still gets the safe response; the failure is counted.
            tracing::warn!(error = %e, "a replaced crisis reply could not be recorded");
            self.receipts_failed
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// A whole answer on the crisis route: `body` as it is, or with each choice whose text
    /// gives method details replaced by `safe`.
    pub(crate) async fn check_crisis_whole(
        &self,
        who: &Who,
        body: Bytes,
        safe: &str,
    ) -> Result<Bytes, ApiError> {
        let Ok(mut doc) = serde_json::from_slice::<Value>(&body) else {
            return Ok(body);
        };
        let mut replaced = false;
        for choice in doc
            .get_mut("choices")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            let Some(msg) = choice.get_mut("message") else {
                continue;
            };
            let text = msg.get("content").and_then(Value::as_str).unwrap_or("");
            if let Some(found) = airlock_shield::reply::method_details(text) {
                self.note_replaced(who, text, &found.rule_id).await;
                msg["content"] = Value::String(safe.to_string());
                if let Some(m) = msg.as_object_mut() {
                    m.remove("tool_calls");
                    m.remove("function_call");
                }
                choice["finish_reason"] = json!("stop");
                replaced = true;
            }
        }
        if !replaced {
            return Ok(body);
        }
        serde_json::to_vec(&doc)
            .map(Bytes::from)
            .map_err(ApiError::internal)
    }

    /// A stream on the crisis route (the relayed body), held until whole and checked; the
    /// guidance chunk (`first`, the text it starts with) is sent at once.
    pub(crate) fn hold_crisis_stream(
        self: std::sync::Arc<Self>,
        who: Who,
        relayed: Body,
        first: String,
        safe: String,
    ) -> Body {
        let (tx, rx) = mpsc::channel::<Bytes>(16);
        let keepalive = self.config.keepalive;
        tokio::spawn(async move {
            let mut held: Vec<Bytes> = Vec::new();
            let mut text = String::new();
            let mut envelope = serde_json::Map::new();
            let mut split = Splitter::default();
            let mut sent_first = false;
            let mut body = relayed.into_data_stream();
            let mut tick = tokio::time::interval(keepalive.max(Duration::from_millis(100)));
            tick.tick().await;
            loop {
                let piece = tokio::select! {
                    p = body.next() => p,
                    _ = tick.tick() => {
                        let _ = tx.send(Bytes::from_static(CHECKING)).await;
                        continue;
                    }
                };
                let Some(Ok(bytes)) = piece else { break };
                let Ok(events) = split.push(&bytes) else {
                    break;
                };
                for ev in events {
                    let chunk: Option<Value> = ev
                        .data
                        .as_deref()
                        .and_then(|d| serde_json::from_str(d).ok());
                    let delta = chunk
                        .as_ref()
                        .and_then(|c| c["choices"][0]["delta"]["content"].as_str())
                        .unwrap_or("");
                    if !sent_first && delta.starts_with(&first) {
                        sent_first = true;
                        let _ = tx.send(Bytes::from(ev.raw)).await;
                        continue;
                    }
                    if let Some(Value::Object(c)) = &chunk {
                        if envelope.is_empty() {
                            envelope = c.clone();
                            envelope.remove("choices");
                            envelope.remove("usage");
                        }
                        for ch in c
                            .get("choices")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                        {
                            if let Some(t) = ch["delta"]["content"].as_str() {
                                text.push_str(t);
                            }
                        }
                    }
                    held.push(Bytes::from(ev.raw));
                }
            }
            if let Some(ev) = split.finish() {
                held.push(Bytes::from(ev.raw));
            }
            match airlock_shield::reply::method_details(&text) {
                None => {
                    for b in held {
                        if tx.send(b).await.is_err() {
                            break;
                        }
                    }
                }
                Some(found) => {
                    self.note_replaced(&who, &text, &found.rule_id).await;
                    let chunk = |delta: Value, finish: Value| {
                        let mut c = envelope.clone();
                        c.insert(
                            "choices".into(),
                            json!([{"index": 0, "delta": delta, "finish_reason": finish}]),
                        );
                        Bytes::from(data_event(&Value::Object(c).to_string()))
                    };
                    let out = [
                        chunk(json!({"role": "assistant", "content": safe}), Value::Null),
                        chunk(json!({}), json!("stop")),
                        Bytes::from(data_event("[DONE]")),
                    ];
                    for b in out {
                        if tx.send(b).await.is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let s = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv()
                .await
                .map(|b| (Ok::<_, std::convert::Infallible>(b), rx))
        });
        Body::from_stream(s)
    }
}
