//! `POST /v1/privacy`: the secrets in a JSON value bound for a remote model (an MCP server's
//! sampling request) replaced by typed placeholders (`[SECRET:<rule>#n]`), and recorded as a
//! receipt with the rule ids and salted hashes, never the values (`Broker::replace_secrets`,
//! the use-case the proxy's filter records through). What is replaced is the daemon's own
//! finding; the caller (the MCP gateway of `airlock mcp wrap`) sends on the value it gets back.

use airlock_wire::PrivacyRequest;
use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::state::AppState;

pub async fn replace(
    State(st): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<PrivacyRequest>,
) -> Result<Json<Value>, ApiError> {
    for (what, v, max) in [
        ("session", &req.session, 128),
        ("surface", &req.surface, 200),
    ] {
        if !crate::extract::is_label(v, max) {
            return Err(ApiError::bad_request(
                "INVALID_REQUEST",
                format!("{what} must be 1 to {max} printable characters"),
            ));
        }
    }
    let origin = airlock_confirm::Origin {
        agent: caller.name.clone(),
        session: req.session,
    };
    let mut value = req.value;
    // The privacy scanner reads some 500 MiB/s (docs/proxy.md), so a body within the API's
    // size limit is scanned inline, in a few milliseconds at most.
    let replaced = st
        .broker
        .replace_secrets(origin, &req.surface, &mut value)
        .await?;
    Ok(Json(match replaced {
        None => json!({"rules": [], "value": null, "receipt": null}),
        Some(r) => json!({"rules": r.rules, "value": value, "receipt": r.receipt}),
    }))
}
