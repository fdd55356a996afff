//! The MCP gateway's tool pins for people: `GET /v1/mcp/pins` lists them, with the definition a
//! quarantined tool now presents (so the person reads what changed, not a hash), and
//! `POST /v1/mcp/pins/{server}/{tool}/approve` re-approves one. The approval names the hash the
//! person reviewed: a definition that changed again meanwhile is not approved (409). It is a
//! receipt naming the person, written before the pin moves (`airlock_confirm::approve_pin`, the
//! use-case the inbox and the CLI share). Approvers and admins only.

use airlock_store::PinRow;
use axum::Json;
use axum::extract::{Path, Query, State};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::auth::{Caller, Role};
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::state::AppState;
use airlock_confirm::PinApprovalError;
use airlock_confirm::pins;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    pub server: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct PinView {
    pub server: String,
    pub tool: String,
    /// `approved` or `quarantined`.
    pub status: String,
    pub sha256: String,
    pub pending_sha256: Option<String>,
    /// What the quarantined tool now presents: `{"description", "inputSchema"}`.
    pub pending_definition: Option<Value>,
    pub first_seen_ms: i64,
    pub updated_ms: i64,
}

pub(crate) fn view(p: PinRow) -> PinView {
    PinView {
        pending_definition: p
            .pending_definition
            .as_deref()
            .and_then(|d| serde_json::from_str(d).ok()),
        server: p.server,
        tool: p.tool,
        status: p.status,
        sha256: p.sha256,
        pending_sha256: p.pending_sha256,
        first_seen_ms: p.first_seen_ms,
        updated_ms: p.updated_ms,
    }
}

pub async fn list(
    State(st): State<AppState>,
    caller: Caller,
    q: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Vec<PinView>>, ApiError> {
    caller.require(&[Role::Approver, Role::Admin], "read the MCP tool pins")?;
    let Query(q) = q.map_err(|e| ApiError::bad_request("INVALID_REQUEST", e.body_text()))?;
    let rows = st
        .broker
        .ledger()
        .db()
        .mcp_pin_list(q.server.as_deref())
        .await
        .map_err(ApiError::internal)?;
    Ok(Json(rows.into_iter().map(view).collect()))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApproveRequest {
    /// The hash of the definition the person reviewed (`pending_sha256` of the listing).
    pub sha256: String,
}

pub async fn approve(
    State(st): State<AppState>,
    caller: Caller,
    Path((server, tool)): Path<(String, String)>,
    ApiJson(req): ApiJson<ApproveRequest>,
) -> Result<Json<Value>, ApiError> {
    let receipt = approve_pin(&st, &caller, &server, &tool, &req.sha256).await?;
    Ok(Json(json!({
        "server": server,
        "tool": tool,
        "sha256": req.sha256,
        "status": "approved",
        "receipt": receipt,
    })))
}

/// A person approves definition `sha256` of a quarantined tool (REST and inbox); returns the
/// approval's receipt id.
pub(crate) async fn approve_pin(
    st: &AppState,
    caller: &Caller,
    server: &str,
    tool: &str,
    sha256: &str,
) -> Result<String, ApiError> {
    caller.require(&[Role::Approver, Role::Admin], "re-approve MCP tools")?;
    if !pins::is_sha256(sha256) {
        return Err(ApiError::bad_request(
            "INVALID_REQUEST",
            "sha256 must be 64 lowercase hex digits (the pending_sha256 you reviewed)",
        ));
    }
    let ledger = st.broker.ledger();
    match pins::approve_pin(ledger, server, tool, Some(sha256), &caller.name).await {
        Ok(done) => Ok(done.receipt),
        Err(e @ PinApprovalError::NoPin { .. }) => Err(ApiError::not_found(e.to_string())),
        Err(e @ PinApprovalError::BadHash) => {
            Err(ApiError::bad_request("INVALID_REQUEST", e.to_string()))
        }
        Err(e @ PinApprovalError::NotQuarantined { .. }) => {
            Err(ApiError::conflict("NOT_QUARANTINED", e.to_string()))
        }
        Err(e @ (PinApprovalError::Changed { .. } | PinApprovalError::ChangedMeanwhile { .. })) => {
            Err(ApiError::conflict("PIN_CHANGED", e.to_string()))
        }
        Err(PinApprovalError::Failed(e)) => Err(ApiError::internal(e)),
    }
}
