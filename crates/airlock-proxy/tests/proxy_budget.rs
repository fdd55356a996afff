//! Budgets per agent token through the proxy: requests per period (exactly the limit admitted
//! under concurrency), tokens from whole and streamed answers' usage, agents counted apart,
//! and over budget is a 429 `BUDGET_EXCEEDED` that never reaches the upstream and is a receipt.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod proxy_support;

use std::time::Duration;

use airlock_gateway::{Auth, Role};
use airlock_proxy::Budget;
use proxy_support::{Harness, client, request, start};
use serde_json::{Value, json};

fn budget(requests: Option<u64>, tokens: Option<u64>) -> Budget {
    Budget {
        period: Duration::from_secs(3600),
        requests,
        tokens,
        cost_micros: None,
        prompt_micros_per_1k: 0,
        completion_micros_per_1k: 0,
    }
}

async fn ask(h: &Harness, token: &str, stream: bool) -> (u16, String) {
    let mut body = request(json!({"text": "hi"}), stream);
    if stream {
        body["stream_options"] = json!({"include_usage": true});
    }
    let r = client()
        .post(h.u("/v1/chat/completions"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let s = r.status().as_u16();
    (s, r.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_per_period_exactly_under_concurrency() {
    let h = start("30s", |c| c.budget = Some(budget(Some(5), None))).await;
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let url = h.u("/v1/chat/completions");
        let token = h.agent.clone();
        tasks.push(tokio::spawn(async move {
            let r = client()
                .post(url)
                .bearer_auth(token)
                .json(&request(json!({"text": "hi"}), false))
                .send()
                .await
                .unwrap();
            let s = r.status().as_u16();
            (s, r.json::<Value>().await.unwrap())
        }));
    }
    let mut ok = 0;
    for t in tasks {
        let (s, body) = t.await.unwrap();
        if s == 200 {
            ok += 1;
        } else {
            assert_eq!(s, 429);
            assert_eq!(body["error"]["code"], "BUDGET_EXCEEDED");
            assert!(
                body["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("requests 5/5")
            );
        }
    }
    assert_eq!(ok, 5);
    assert_eq!(h.upstream.seen.count(), 5);
    // Each refusal is a decision, recorded before it was answered.
    let refusals: Vec<Value> = h
        .receipts()
        .await
        .into_iter()
        .filter(|r| r["tool"] == "airlock.proxy.request")
        .collect();
    assert_eq!(refusals.len(), 11);
    for r in &refusals {
        assert_eq!(r["decision"], "deny");
        assert_eq!(r["reasons"][0]["code"], "BUDGET_EXCEEDED");
    }
    // Another agent has its own budget.
    let other = Auth::new(h.broker.ledger().db().clone())
        .create("agent-2", Role::Agent)
        .await
        .unwrap()
        .secret;
    assert_eq!(ask(&h, &other, false).await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_from_whole_and_streamed_answers() {
    // Each answer uses 18 tokens: admitted at 0 and 18, refused at 36.
    let h = start("30s", |c| c.budget = Some(budget(None, Some(30)))).await;
    assert_eq!(ask(&h, &h.agent, false).await.0, 200);
    assert_eq!(ask(&h, &h.agent, true).await.0, 200);
    let (s, body) = ask(&h, &h.agent, false).await;
    assert_eq!(s, 429, "{body}");
    assert!(body.contains("tokens 36/30"), "{body}");
}
