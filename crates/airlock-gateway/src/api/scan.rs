//! `POST /v1/scan`: airlock-shield's verdict on a text flowing into an agent (a person's
//! message or a tool's output). Any role may scan. With `record`, the daemon also appends the
//! verdict it found (never one the caller claims) as a receipt, by the text's hash, and returns
//! its id: the MCP gateway records what it scanned this way. A crisis verdict with `record`
//! also puts the session in crisis mode (`session_crisis: true` in the answer), whichever the
//! direction: a text recorded here reaches the model or the person (a person's message, an MCP
//! server's answer or sampling request), and crisis mode only puts decisions to a person.
//!
//! The answer also carries the policy's `[text]` handling (`text_handling`: `jailbreak` is
//! `annotate` or `block`, `injection` `annotate` or `withhold`), so a client that acts on the
//! verdict itself (the Hermes Agent plugin) acts as the hooks do; the strictest when the policy
//! does not load.

use airlock_shield::{Direction, ScanResult};
use airlock_wire::{ScanDirection, ScanRequest};
use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::state::AppState;

fn printable(what: &str, v: &str, max: usize) -> Result<(), ApiError> {
    if !crate::extract::is_label(v, max) {
        return Err(ApiError::bad_request(
            "INVALID_REQUEST",
            format!("record.{what} must be 1 to {max} printable characters"),
        ));
    }
    Ok(())
}

pub async fn scan(
    State(st): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<ScanRequest>,
) -> Result<Json<Value>, ApiError> {
    let dir = match req.direction {
        Some(ScanDirection::User) => Direction::User,
        Some(ScanDirection::Tool) | None => Direction::Tool,
    };
    let handling = match &req.record {
        None => None,
        Some(r) => {
            printable("session", &r.session, 128)?;
            printable("source", &r.source, 200)?;
            let h = r.handling.as_deref().unwrap_or("pass");
            if !matches!(h, "pass" | "annotate" | "block") {
                return Err(ApiError::bad_request(
                    "INVALID_REQUEST",
                    "record.handling must be pass, annotate or block",
                ));
            }
            Some(h.to_string())
        }
    };
    let text = req.text;
    // Scanning is CPU work of up to a few milliseconds per KiB: keep it off the I/O threads.
    let (result, text): (ScanResult, String) = tokio::task::spawn_blocking(move || {
        let r = airlock_shield::scan(&text, dir);
        (r, text)
    })
    .await
    .map_err(ApiError::internal)?;
    let mut out = serde_json::to_value(&result).map_err(ApiError::internal)?;
    out["text_handling"] = match st.broker.policy_for(None) {
        Ok(p) => {
            json!({"jailbreak": p.settings.text.jailbreak, "injection": p.settings.text.injection})
        }
        Err(_) => json!({"jailbreak": "block", "injection": "withhold"}),
    };
    if let (Some(spec), Some(handling)) = (&req.record, handling) {
        let origin = airlock_confirm::Origin {
            agent: caller.name.clone(),
            session: spec.session.clone(),
        };
        let recorded = st
            .broker
            .record_scan(origin, &spec.source, dir, &text, &result, &handling)
            .await?;
        if recorded.session_crisis {
            out["session_crisis"] = Value::Bool(true);
        }
        out["receipt"] = Value::String(recorded.receipt);
    }
    Ok(Json(out))
}
