//! The OpenAPI document and the router agree: the same set of (method, path), and every
//! documented operation is answered by a real route on a running server (not the fallback).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_testkit::gateway as common;

use std::collections::BTreeSet;

use serde_json::Value;

fn documented() -> BTreeSet<(String, String)> {
    let doc: Value = serde_json::from_str(airlock_gateway::openapi::DOCUMENT).unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    let mut set = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            set.insert((method.to_uppercase(), path.clone()));
        }
    }
    set
}

#[test]
fn document_and_router_have_the_same_routes() {
    let routed: BTreeSet<(String, String)> = airlock_gateway::routes()
        .into_iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    let doc = documented();
    let missing: Vec<_> = routed.difference(&doc).collect();
    let extra: Vec<_> = doc.difference(&routed).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "routes not documented: {missing:?}; documented but not routed: {extra:?}"
    );
}

#[test]
fn every_reference_resolves() {
    let doc: Value = serde_json::from_str(airlock_gateway::openapi::DOCUMENT).unwrap();
    let text = airlock_gateway::openapi::DOCUMENT;
    for piece in text.split("\"$ref\": \"#/").skip(1) {
        let path = &piece[..piece.find('"').unwrap()];
        let mut node = &doc;
        for part in path.split('/') {
            node = &node[part];
        }
        assert!(!node.is_null(), "dangling $ref #/{path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_documented_operation_reaches_a_route() {
    let s = common::start().await;
    let c = common::client();
    let served: Value = c
        .get(s.u("/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        served,
        serde_json::from_str::<Value>(airlock_gateway::openapi::DOCUMENT).unwrap()
    );
    for (method, path) in documented() {
        let url = s.u(&path.replace("{id}", "x").replace("{token}", "x"));
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let r = c.request(m, &url).send().await.unwrap();
        let status = r.status().as_u16();
        let body = r.text().await.unwrap_or_default();
        assert_ne!(status, 405, "{method} {path}: method not routed");
        assert!(
            !body.contains(r#""code":"NO_ROUTE""#),
            "{method} {path}: answered by the fallback"
        );
    }
    s.stop().await;
}
