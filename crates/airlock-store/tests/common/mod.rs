//! Helpers: sample requests and a throw-away PostgreSQL schema.

use airlock_core::{ActionKind, Decision};
use airlock_ledger::canonical::{hash_value, sha256_hex};
use airlock_ledger::{NewReceipt, ReasonRef};
use airlock_store::AppendRequest;

pub fn request(request_id: &str, session: &str) -> AppendRequest {
    let payload = serde_json::json!({"kind": "shell", "command": format!("echo {request_id}")});
    AppendRequest {
        receipt: NewReceipt {
            request_id: request_id.into(),
            session: session.into(),
            principal: "agent:test".into(),
            action: ActionKind::Shell,
            tool: None,
            args_sha256: hash_value(&payload).unwrap(),
            decision: Decision::Allow,
            reasons: vec![ReasonRef {
                rule: "readonly".into(),
                code: "READ_ONLY".into(),
            }],
            grant: None,
            approvers: vec![],
            policy_sha256: sha256_hex(b"test policy"),
            output_sha256: None,
            event: None,
        },
        payload: Some(serde_json::to_string(&payload).unwrap()),
    }
}

pub use airlock_testkit::PgSchema;
