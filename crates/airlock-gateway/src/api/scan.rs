//! `POST /v1/scan`: airlock-shield's verdict on a text flowing into an agent (a person's
//! message or a tool's output). Any role may scan.

use airlock_shield::{Direction, ScanResult};
use axum::Json;
use axum::extract::State;
use serde::Deserialize;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::state::AppState;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScanRequest {
    pub text: String,
    /// `user` (a person's message) or `tool` (tool output, documents); default `tool`.
    #[serde(default)]
    pub direction: Option<Direction>,
}

pub async fn scan(
    State(_st): State<AppState>,
    _caller: Caller,
    ApiJson(req): ApiJson<ScanRequest>,
) -> Result<Json<ScanResult>, ApiError> {
    let dir = req.direction.unwrap_or(Direction::Tool);
    // Scanning is CPU work of up to a few milliseconds per KiB: keep it off the I/O threads.
    let result = tokio::task::spawn_blocking(move || airlock_shield::scan(&req.text, dir))
        .await
        .map_err(ApiError::internal)?;
    Ok(Json(result))
}
