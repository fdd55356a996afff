//! `POST /v1/outputs`: a tool's output checked against the output schema the daemon's policy
//! declares for the tool, and recorded as a receipt carrying the output's SHA-256 (seed 004
//! T3). The drift found is the daemon's own, never one the caller claims; the caller (the MCP
//! gateway of `airlock mcp wrap`) withholds or flags the output as the answer says.

use airlock_wire::OutputRequest;
use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::state::AppState;

pub async fn check(
    State(st): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<OutputRequest>,
) -> Result<Json<Value>, ApiError> {
    for (what, v, max) in [("session", &req.session, 128), ("tool", &req.tool, 200)] {
        if !crate::extract::is_label(v, max) {
            return Err(ApiError::bad_request(
                "INVALID_REQUEST",
                format!("{what} must be 1 to {max} printable characters"),
            ));
        }
    }
    let origin = airlock_confirm::Origin {
        agent: caller.name.clone(),
        session: req.session.clone(),
    };
    let checked = st
        .broker
        .check_output(
            origin,
            &req.tool,
            req.cwd.as_deref().map(std::path::Path::new),
            &req.output,
        )
        .await
        .map_err(ApiError::internal)?;
    Ok(Json(json!({
        "output_sha256": checked.output_sha256,
        "declared": checked.declared,
        "drift": checked.drift,
        "receipt": checked.receipt,
    })))
}
