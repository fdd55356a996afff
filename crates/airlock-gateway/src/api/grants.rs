//! Grants: list (approvers and admins) and revoke (cascading to what was forwarded from them,
//! and recorded as a grant event naming the person).

use airlock_grants::{Grant, GrantError, ListFilter};
use axum::Json;
use axum::extract::{Path, Query, State};
use serde::{Deserialize, Serialize};

use super::DECIDERS;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::OptionalJson;
use crate::state::AppState;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantQuery {
    agent: Option<String>,
    session: Option<String>,
    /// Also revoked, expired and used-up grants.
    #[serde(default)]
    all: bool,
}

pub fn grant_error(e: GrantError) -> ApiError {
    match e {
        GrantError::NotFound(id) => ApiError::not_found(format!("no grant {id}")),
        other => ApiError::internal(other),
    }
}

pub async fn list(
    State(st): State<AppState>,
    caller: Caller,
    q: Result<Query<GrantQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Vec<Grant>>, ApiError> {
    caller.require(DECIDERS, "list grants")?;
    let Query(q) = q.map_err(|e| ApiError::bad_request("INVALID_REQUEST", e.body_text()))?;
    let f = ListFilter {
        agent: q.agent,
        session: q.session,
        all: q.all,
    };
    Ok(Json(st.broker.book().list(&f).await.map_err(grant_error)?))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RevokeRequest {
    #[serde(default)]
    pub reason: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Revoked {
    pub id: String,
    /// This grant and every grant derived from it that this call revoked.
    pub revoked: u64,
}

/// Revokes `id` for `caller`; 409 when it was already revoked.
pub async fn revoke_grant(
    st: &AppState,
    caller: &Caller,
    id: &str,
    reason: Option<String>,
) -> Result<Revoked, ApiError> {
    caller.require(DECIDERS, "revoke grants")?;
    let reason = reason
        .filter(|r| !r.trim().is_empty())
        .unwrap_or_else(|| format!("revoked by {}", caller.name));
    if reason.len() > 1000 {
        return Err(ApiError::invalid(
            "INVALID_REQUEST",
            "reason is limited to 1000 bytes",
        ));
    }
    // revoked and recorded as one use-case, as `airlock grant revoke` does
    let n = airlock_confirm::grant_log::revoke(
        st.broker.book(),
        st.broker.ledger(),
        id,
        &reason,
        &caller.name,
    )
    .await
    .map_err(|e| match e {
        airlock_confirm::ConfirmError::Grant(g) => grant_error(g),
        other => ApiError::internal(other),
    })?;
    if n == 0 {
        return Err(ApiError::conflict(
            "ALREADY_REVOKED",
            format!("grant {id} was already revoked"),
        ));
    }
    Ok(Revoked {
        id: id.to_string(),
        revoked: n,
    })
}

pub async fn revoke(
    State(st): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    OptionalJson(req): OptionalJson<RevokeRequest>,
) -> Result<Json<Revoked>, ApiError> {
    Ok(Json(revoke_grant(&st, &caller, &id, req.reason).await?))
}
