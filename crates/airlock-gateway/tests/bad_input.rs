//! Bad input never gets an allow: oversized bodies, malformed JSON, unknown fields, non-UTF-8,
//! wrong content types, wrong shapes and invalid actions each get their stable code and status,
//! and afterwards the ledger holds no allow and the broker counted no submission.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_testkit::gateway as common;

use common::{client, start_on};

struct Case {
    name: &'static str,
    content_type: Option<&'static str>,
    body: Vec<u8>,
    status: u16,
    code: &'static str,
}

fn case(name: &'static str, body: &[u8], status: u16, code: &'static str) -> Case {
    Case {
        name,
        content_type: Some("application/json"),
        body: body.to_vec(),
        status,
        code,
    }
}

fn cases(max: usize) -> Vec<Case> {
    // A valid shell action padded past the limit: the size alone must refuse it.
    let mut big = br#"{"kind":"shell","session":"s","command":"ls "#.to_vec();
    big.extend(std::iter::repeat_n(b'a', max + 10));
    big.extend(br#""}"#);
    vec![
        Case {
            name: "oversized",
            content_type: Some("application/json"),
            body: big,
            status: 413,
            code: "BODY_TOO_LARGE",
        },
        case(
            "malformed",
            br#"{"kind":"shell","command":"ls""#,
            400,
            "MALFORMED_JSON",
        ),
        case("not json", b"ls -la", 400, "MALFORMED_JSON"),
        case("empty", b"", 400, "MALFORMED_JSON"),
        case(
            "trailing garbage",
            br#"{"kind":"shell","command":"ls","session":"s"} x"#,
            400,
            "MALFORMED_JSON",
        ),
        case(
            "unknown field",
            br#"{"kind":"shell","command":"ls","session":"s","decision":"allow"}"#,
            400,
            "UNKNOWN_FIELD",
        ),
        case(
            "unknown field in tool",
            br#"{"kind":"tool","tool":"Read","arguments":{},"session":"s","approved":true}"#,
            400,
            "UNKNOWN_FIELD",
        ),
        case(
            "agent field is not accepted",
            br#"{"kind":"shell","command":"ls","session":"s","agent":"root"}"#,
            400,
            "UNKNOWN_FIELD",
        ),
        case(
            "non-utf8",
            b"{\"kind\":\"shell\",\"command\":\"ls \xff\xfe\",\"session\":\"s\"}",
            400,
            "INVALID_UTF8",
        ),
        case("array", br#"[{"kind":"shell"}]"#, 400, "INVALID_REQUEST"),
        case(
            "missing session",
            br#"{"kind":"shell","command":"ls"}"#,
            400,
            "INVALID_REQUEST",
        ),
        case(
            "session not a string",
            br#"{"kind":"shell","command":"ls","session":7}"#,
            400,
            "INVALID_REQUEST",
        ),
        case(
            "missing kind",
            br#"{"command":"ls","session":"s"}"#,
            400,
            "INVALID_REQUEST",
        ),
        case(
            "missing command",
            br#"{"kind":"shell","session":"s"}"#,
            400,
            "INVALID_REQUEST",
        ),
        case(
            "unknown kind",
            br#"{"kind":"teleport","session":"s"}"#,
            422,
            "INVALID_ACTION",
        ),
        case(
            "empty command",
            br#"{"kind":"shell","command":"  ","session":"s"}"#,
            422,
            "INVALID_ACTION",
        ),
        case(
            "empty session",
            br#"{"kind":"shell","command":"ls","session":""}"#,
            422,
            "INVALID_ACTION",
        ),
        case(
            "control characters in session",
            b"{\"kind\":\"shell\",\"command\":\"ls\",\"session\":\"a\\nb\"}",
            422,
            "INVALID_ACTION",
        ),
        Case {
            name: "no content type",
            content_type: None,
            body: br#"{"kind":"shell","command":"ls","session":"s"}"#.to_vec(),
            status: 415,
            code: "UNSUPPORTED_MEDIA_TYPE",
        },
        Case {
            name: "form content type",
            content_type: Some("application/x-www-form-urlencoded"),
            body: b"kind=shell&command=ls&session=s".to_vec(),
            status: 415,
            code: "UNSUPPORTED_MEDIA_TYPE",
        },
        Case {
            name: "text content type",
            content_type: Some("text/plain"),
            body: br#"{"kind":"shell","command":"ls","session":"s"}"#.to_vec(),
            status: 415,
            code: "UNSUPPORTED_MEDIA_TYPE",
        },
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_submission_is_refused_and_nothing_is_allowed() {
    let max = 64 * 1024;
    let s = start_on(None, max).await;
    let c = client();
    for k in cases(max) {
        let mut rb = c
            .post(s.u("/v1/actions"))
            .bearer_auth(&s.agent)
            .body(k.body.clone());
        if let Some(ct) = k.content_type {
            rb = rb.header("content-type", ct);
        }
        let r = rb.send().await.unwrap();
        let status = r.status().as_u16();
        let ct = r
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string());
        let v: serde_json::Value = r.json().await.unwrap();
        assert_eq!(status, k.status, "{}: {v}", k.name);
        assert_eq!(v["error"]["code"], k.code, "{}: {v}", k.name);
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
        assert_eq!(ct.as_deref(), Some("application/json"), "{}", k.name);
    }
    assert!(s.receipts().await.is_empty(), "bad input was recorded");
    let m = s.broker.metrics();
    assert_eq!((m.submitted, m.allowed), (0, 0));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_answers_leave_the_approval_pending() {
    let s = start_on(None, 64 * 1024).await;
    let c = client();
    let (_, out) = common::post(&c, &s.u("/v1/actions"), &s.agent, common::asking("b")).await;
    let id = out["id"].as_str().unwrap().to_string();
    let url = s.u(&format!("/v1/approvals/{id}"));
    let bad: &[(&[u8], u16, &str)] = &[
        (br#"{"decision":"approve","extra":1}"#, 400, "UNKNOWN_FIELD"),
        (br#"{"decision":"yes"}"#, 400, "INVALID_REQUEST"),
        (
            br#"{"decision":"approve","scope":"forever"}"#,
            400,
            "INVALID_REQUEST",
        ),
        (br#"{"decision":"approve""#, 400, "MALFORMED_JSON"),
        (br#"{}"#, 400, "INVALID_REQUEST"),
    ];
    for (body, status, code) in bad {
        let r = c
            .post(&url)
            .bearer_auth(&s.approver)
            .header("content-type", "application/json")
            .body(body.to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), *status);
        let v: serde_json::Value = r.json().await.unwrap();
        assert_eq!(v["error"]["code"], *code, "{v}");
    }
    let reason = "x".repeat(2000);
    let (st, v) = common::post(
        &c,
        &url,
        &s.approver,
        serde_json::json!({"decision": "approve", "reason": reason}),
    )
    .await;
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (422, Some("INVALID_REQUEST"))
    );
    assert_eq!(
        s.broker.approval(&id).await.unwrap().status,
        airlock_confirm::ApprovalStatus::Pending
    );
    assert!(s.receipts().await.iter().all(|r| r["decision"] != "allow"));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_query_fields_and_bad_limits() {
    let s = start_on(None, 64 * 1024).await;
    let c = client();
    let (st, v) = common::get(&c, &s.u("/v1/grants?everything=1"), &s.approver).await;
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (400, Some("INVALID_REQUEST"))
    );
    let (st, v) = common::get(&c, &s.u("/v1/history?limit=-1"), &s.approver).await;
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (400, Some("INVALID_REQUEST"))
    );
    s.stop().await;
}
