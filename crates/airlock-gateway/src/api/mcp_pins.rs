//! The MCP gateway's tool pins for people: `GET /v1/mcp/pins` lists them, with the definition a
//! quarantined tool now presents (so the person reads what changed, not a hash), and
//! `POST /v1/mcp/pins/{server}/{tool}/approve` re-approves one. The approval names the hash the
//! person reviewed: a definition that changed again meanwhile is not approved (409). It is a
//! receipt naming the person, written before the pin moves. Approvers and admins only.

use airlock_store::PinRow;
use axum::Json;
use axum::extract::{Path, Query, State};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::auth::{Caller, Role};
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::mcp::pins::{self, NotApprovable};
use crate::state::AppState;

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
    let db = st.broker.ledger().db();
    let row = db
        .mcp_pin_get(server, tool)
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| ApiError::not_found(format!("no pin for {tool} ({server})")))?;
    match pins::approvable(&row, Some(sha256)) {
        Ok(_) => {}
        Err(NotApprovable::NotQuarantined) => {
            return Err(ApiError::conflict(
                "NOT_QUARANTINED",
                format!("{tool} ({server}) is not quarantined"),
            ));
        }
        Err(NotApprovable::Changed { .. }) => {
            return Err(ApiError::conflict(
                "PIN_CHANGED",
                format!(
                    "{tool} ({server}) now presents another definition than the one you reviewed; read it again"
                ),
            ));
        }
    }
    let (action, assessment) = pins::approval(server, tool, sha256, &row.sha256, &caller.name);
    let receipt = crate::proxy::record::record_by(
        &st.broker,
        &caller.name,
        pins::SESSION,
        &action,
        &assessment,
        "mcp-pin-approval",
        vec![caller.name.clone()],
    )
    .await
    .map_err(ApiError::internal)?;
    let moved = db
        .mcp_pin_approve(server, tool, sha256, airlock_grants::system_now_ms())
        .await
        .map_err(ApiError::internal)?;
    if !moved {
        return Err(ApiError::conflict(
            "PIN_CHANGED",
            format!(
                "{tool} ({server}) changed while it was approved; read it again (receipt {receipt} records your approval of the definition you reviewed)"
            ),
        ));
    }
    Ok(receipt)
}
