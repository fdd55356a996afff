//! The outbound privacy filter end to end, over a real loopback upstream that records what it
//! received: secrets reach it as typed placeholders (or the request is refused), personal data
//! as placeholders that come back restored in the answer, whole and streamed (the upstream cuts
//! its text into 4-byte deltas, so placeholders arrive split), tool-call arguments included;
//! the receipts hold rule ids and salted hashes, and no file of the ledger holds a secret (nor
//! personal data, except in the arguments of a tool call the agent is allowed to make).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod proxy_support;

use airlock_proxy::privacy::{PersonalAction, SecretAction};
use futures_util::StreamExt;
use proxy_support::{Harness, client, request, start};
use serde_json::{Value, json};

const KEY: &str = "AKIAQYLPMN5HHHFPZAM2";
const GH: &str = "ghp_Zx9vJ2mQ4tR8yL1pK6nB3cW7hF0dS5gA2eU8";
const EMAIL: &str = "jane.doe@acme-corp.com";
const PHONE: &str = "+44 20 7946 0958";

async fn with_personal() -> Harness {
    start("2s", |c| c.privacy.personal = PersonalAction::Placeholder).await
}

async fn post(h: &Harness, body: &Value) -> reqwest::Response {
    client()
        .post(h.u("/v1/chat/completions"))
        .bearer_auth(&h.agent)
        .json(body)
        .send()
        .await
        .unwrap()
}

/// Every byte of every file under the ledger's directory.
fn ledger_bytes(h: &Harness) -> Vec<u8> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(h.data_dir()).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            out.extend(std::fs::read(&p).unwrap());
        }
    }
    assert!(!out.is_empty());
    out
}

fn holds(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

async fn privacy_receipts(h: &Harness) -> Vec<Value> {
    h.all_receipts()
        .await
        .into_iter()
        .filter(|r| r["tool"] == "airlock.privacy")
        .collect()
}

#[tokio::test]
async fn a_whole_answer_gets_personal_data_back_and_secrets_never_leave() {
    let h = with_personal().await;
    let text = format!("key {KEY} token {GH} mail {EMAIL} call {PHONE} again {EMAIL}");
    let spec =
        json!({"text": text, "calls": [["get_weather", json!({"city": EMAIL}).to_string()]]});
    let r = post(&h, &request(spec, false)).await;
    assert_eq!(r.status(), 200);
    let answer: Value = r.json().await.unwrap();
    // What the upstream received: placeholders only.
    let (_, seen) = h.upstream.seen.last();
    for v in [KEY, GH, EMAIL, PHONE] {
        assert!(!holds(&seen, v), "the upstream saw {v}");
    }
    let seen = String::from_utf8(seen.to_vec()).unwrap();
    for p in [
        "[SECRET:aws_access_key#1]",
        "[SECRET:github_token#1]",
        "[PII:email#1]",
        "[PII:phone#1]",
    ] {
        assert!(seen.contains(p), "{p} not in {seen}");
    }
    // The answer (the upstream echoes its placeholders): personal data restored, secrets not.
    let content = answer["choices"][0]["message"]["content"].as_str().unwrap();
    assert_eq!(
        content,
        format!(
            "key [SECRET:aws_access_key#1] token [SECRET:github_token#1] mail {EMAIL} call {PHONE} again {EMAIL}"
        )
    );
    let args = answer["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap();
    assert_eq!(serde_json::from_str::<Value>(args).unwrap()["city"], EMAIL);
    // The receipt: rule ids and salted hashes, never a value.
    let rs = privacy_receipts(&h).await;
    assert_eq!(rs.len(), 1, "{rs:?}");
    assert_eq!(rs[0]["decision"], "allow");
    assert_eq!(rs[0]["reasons"][0]["code"], "PRIVACY_SECRET");
    // No secret in the ledger, nor personal data outside the action the agent takes (the
    // allowed call's arguments, with the address restored, are its receipt's action).
    let bytes = ledger_bytes(&h);
    for v in [KEY, GH, PHONE] {
        assert!(!holds(&bytes, v), "the ledger holds {v}");
    }
    let payload = h
        .broker
        .ledger()
        .db()
        .receipts(0, 1000)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|r| r.payload)
        .find(|p| p.contains("salted_sha256"))
        .expect("the privacy receipt's payload");
    let payload: Value = serde_json::from_str(&payload).unwrap();
    let found = payload["arguments"]["found"].as_array().unwrap();
    let rules: Vec<&str> = found.iter().map(|f| f["rule"].as_str().unwrap()).collect();
    // In the order first met in the body (the call's arguments come first in the spec).
    assert_eq!(rules, ["email", "aws_access_key", "github_token", "phone"]);
    assert!(
        found
            .iter()
            .all(|f| f["salted_sha256"].as_str().unwrap().len() == 64)
    );
    // Unsalted hashes of the values are not there either.
    let plain = airlock_ledger::canonical::sha256_hex(KEY.as_bytes());
    assert!(!holds(&bytes, &plain));
}

#[tokio::test]
async fn a_streamed_answer_gets_split_placeholders_restored() {
    let h = with_personal().await;
    let text = format!("mail {EMAIL}, phone {PHONE}; key {KEY} and {EMAIL}.");
    let spec =
        json!({"text": text, "calls": [["get_weather", json!({"city": EMAIL}).to_string()]]});
    let r = post(&h, &request(spec, true)).await;
    assert_eq!(r.status(), 200);
    let mut body = r.bytes_stream();
    let mut raw = String::new();
    while let Some(b) = body.next().await {
        raw.push_str(std::str::from_utf8(&b.unwrap()).unwrap());
    }
    let mut content = String::new();
    let mut args = String::new();
    let mut done = false;
    for ev in raw.split("\n\n").filter(|e| e.starts_with("data: ")) {
        let d = &ev[6..];
        if d == "[DONE]" {
            done = true;
            continue;
        }
        let c: Value = serde_json::from_str(d).unwrap();
        for ch in c["choices"].as_array().unwrap() {
            if let Some(t) = ch["delta"]["content"].as_str() {
                content.push_str(t);
            }
            if let Some(tcs) = ch["delta"]["tool_calls"].as_array() {
                for tc in tcs {
                    args.push_str(tc["function"]["arguments"].as_str().unwrap_or(""));
                }
            }
        }
    }
    assert!(done);
    assert_eq!(
        content,
        format!("mail {EMAIL}, phone {PHONE}; key [SECRET:aws_access_key#1] and {EMAIL}.")
    );
    assert_eq!(serde_json::from_str::<Value>(&args).unwrap()["city"], EMAIL);
    let (_, seen) = h.upstream.seen.last();
    for v in [KEY, EMAIL, PHONE] {
        assert!(!holds(&seen, v), "the upstream saw {v}");
    }
    let bytes = ledger_bytes(&h);
    for v in [KEY, PHONE] {
        assert!(!holds(&bytes, v), "the ledger holds {v}");
    }
}

#[tokio::test]
async fn secrets_are_on_by_default_and_personal_data_is_not() {
    let h = start("2s", |_| {}).await;
    let text = format!("key {KEY} mail {EMAIL}");
    let r = post(&h, &request(json!({ "text": text }), false)).await;
    assert_eq!(r.status(), 200);
    let (_, seen) = h.upstream.seen.last();
    assert!(!holds(&seen, KEY));
    assert!(holds(&seen, EMAIL));
    let answer: Value = r.json().await.unwrap();
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        format!("key [SECRET:aws_access_key#1] mail {EMAIL}")
    );
}

#[tokio::test]
async fn a_request_with_a_secret_is_refused_when_configured() {
    let h = start("2s", |c| c.privacy.secrets = SecretAction::Refuse).await;
    let text = format!("deploy with {GH}");
    let r = post(&h, &request(json!({ "text": text }), true)).await;
    assert_eq!(r.status(), 400);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"]["code"], "SECRET_IN_REQUEST", "{e}");
    assert!(!e.to_string().contains(GH));
    assert_eq!(h.upstream.seen.count(), 0, "nothing went upstream");
    let rs = privacy_receipts(&h).await;
    assert_eq!(rs.len(), 1);
    assert_eq!(rs[0]["decision"], "deny");
    assert!(!holds(&ledger_bytes(&h), GH));
}

#[tokio::test]
async fn a_request_without_findings_goes_upstream_byte_for_byte() {
    let h = with_personal().await;
    let body = request(
        json!({"text": "commit 3f786850e387550fdab836ed7e6dc881de23001b, id 123e4567-e89b-12d3-a456-426614174000"}),
        false,
    );
    let sent = serde_json::to_vec(&body).unwrap();
    let r = client()
        .post(h.u("/v1/chat/completions"))
        .bearer_auth(&h.agent)
        .header("content-type", "application/json")
        .body(sent.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(h.upstream.seen.last().1.as_ref(), sent.as_slice());
    assert!(privacy_receipts(&h).await.is_empty());
}
