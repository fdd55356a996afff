//! Tier 4 through the API and the inbox: the approver sees the deliberate code and must type
//! it (a missing or wrong code is refused and changes nothing), an approval under a time lock is
//! "locked" with a cancel button until it takes effect, cancelling denies, and an uncancelled
//! approval releases the agent only after the lock.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_testkit::gateway as common;

use std::time::{Duration, Instant};

use airlock_confirm::ApprovalStatus;
use common::{FormExt, client, get, post};
use serde_json::json;

const POLICY: &str = r#"
[[rules]]
id = "deploy-prod"
shell = "deploy-prod *"
decision = "ask"
tier = 4
message = "Deploying to production needs a person."

[tiers.4]
confirm = "human"
timeout = "30s"
deliberate = true
time_lock = "2s"
"#;

async fn login(c: &reqwest::Client, s: &common::Server) -> String {
    let r = c
        .post(s.u("/inbox/login"))
        .form_body(&[("token", s.approver.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let set = r.headers()["set-cookie"].to_str().unwrap();
    set.split(';').next().unwrap().to_string()
}

fn csrf_of(html: &str) -> String {
    let key = r#"name="csrf" value=""#;
    let at = html.find(key).unwrap() + key.len();
    html[at..at + html[at..].find('"').unwrap()].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliberate_code_time_lock_and_cancel() {
    let s = common::start_with(common::policy_with(POLICY), None, common::DEFAULT_MAX).await;
    let c = client();
    let submit = json!({"kind": "shell", "command": "deploy-prod --now", "session": "t4"});
    let (_, out) = post(&c, &s.u("/v1/actions"), &s.agent, submit.clone()).await;
    assert_eq!(
        (out["status"].as_str(), out["tier"].as_u64()),
        (Some("pending"), Some(4)),
        "{out}"
    );
    let id = out["id"].as_str().unwrap().to_string();
    // The agent never sees the code.
    let (_, seen_by_agent) = get(&c, &s.u(&format!("/v1/actions/{id}")), &s.agent).await;
    let (_, a) = get(&c, &s.u(&format!("/v1/approvals/{id}")), &s.approver).await;
    assert_eq!(a["code_required"], true, "{a}");
    let code = a["code"].as_str().unwrap().to_string();
    assert!(!seen_by_agent.to_string().contains(&code));

    let url = s.u(&format!("/v1/approvals/{id}"));
    for bad in [
        json!({"decision": "approve"}),
        json!({"decision": "approve", "code": "AAAAAA"}),
    ] {
        let (st, v) = post(&c, &url, &s.approver, bad).await;
        assert_eq!(
            (st, v["error"]["code"].as_str()),
            (422, Some("BAD_CODE")),
            "{v}"
        );
    }
    assert_eq!(
        s.broker.approval(&id).await.unwrap().status,
        ApprovalStatus::Pending
    );

    // In the inbox: the code is shown with an input for it, and no session approval.
    let cookie = login(&c, &s).await;
    let html = c
        .get(s.u("/inbox"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        html.contains(&format!(r#"id="code-{id}">{code}<"#)),
        "{html}"
    );
    assert!(html.contains(&format!("code-input-{id}")));
    assert!(!html.contains(&format!("approve-session-{id}")));
    let csrf = csrf_of(&html);

    // Approve with the code, typed loosely: locked, cancellable.
    let typed = format!("{}-{}", &code[..3], code[3..].to_lowercase());
    let r = c
        .post(s.u(&format!("/inbox/approvals/{id}")))
        .header("cookie", &cookie)
        .form_body(&[
            ("csrf", csrf.as_str()),
            ("choice", "once"),
            ("code", typed.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303, "{}", r.text().await.unwrap());
    assert_eq!(
        s.broker.approval(&id).await.unwrap().status,
        ApprovalStatus::Locked
    );
    let html = c
        .get(s.u("/inbox"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains(&format!("cancel-{id}")), "{html}");
    let r = c
        .post(s.u(&format!("/inbox/approvals/{id}/cancel")))
        .header("cookie", &cookie)
        .form_body(&[("csrf", csrf.as_str()), ("reason", "wrong build")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let (_, v) = get(
        &c,
        &s.u(&format!("/v1/actions/{id}/wait?timeout=5")),
        &s.agent,
    )
    .await;
    assert_eq!(v["status"], "denied", "{v}");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(
        s.broker.approval(&id).await.unwrap().status,
        ApprovalStatus::Cancelled
    );

    // Without a cancel, the agent is released once the lock has run.
    let (_, out) = post(
        &c,
        &s.u("/v1/actions"),
        &s.agent,
        json!({"kind": "shell", "command": "deploy-prod --later", "session": "t4"}),
    )
    .await;
    let id2 = out["id"].as_str().unwrap().to_string();
    let (_, a) = get(&c, &s.u(&format!("/v1/approvals/{id2}")), &s.approver).await;
    let t = Instant::now();
    let (st, v) = post(
        &c,
        &s.u(&format!("/v1/approvals/{id2}")),
        &s.approver,
        json!({"decision": "approve", "code": a["code"], "action_sha256": a["action_sha256"]}),
    )
    .await;
    assert_eq!((st, v["status"].as_str()), (200, Some("locked")), "{v}");
    let (_, v) = get(
        &c,
        &s.u(&format!("/v1/actions/{id2}/wait?timeout=15")),
        &s.agent,
    )
    .await;
    assert_eq!(v["status"], "allowed", "{v}");
    assert!(
        t.elapsed() >= Duration::from_millis(1900),
        "released before the lock ran"
    );
    // A locked approval cannot be cancelled once effective.
    let (st, _) = post(
        &c,
        &s.u(&format!("/v1/approvals/{id2}/cancel")),
        &s.approver,
        json!({}),
    )
    .await;
    assert_eq!(st, 409);
    s.stop().await;
}
