//! Token management for admins: create (the secret is in the answer, once), list, revoke.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use crate::GatewayError;
use crate::auth::{Caller, NewToken, Role, TokenInfo};
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::state::AppState;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateRequest {
    pub name: String,
    pub role: Role,
    /// For an agent token: the workspace directories its REST actions may run in (absolute).
    #[serde(default)]
    pub roots: Vec<String>,
}

fn gateway_error(e: GatewayError) -> ApiError {
    match e {
        GatewayError::Invalid(m) => ApiError::invalid("INVALID_REQUEST", m),
        other => ApiError::internal(other),
    }
}

pub async fn create(
    State(st): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<CreateRequest>,
) -> Result<(StatusCode, Json<NewToken>), ApiError> {
    caller.require(&[Role::Admin], "create tokens")?;
    let roots = crate::roots::normalised(&req.roots)
        .map_err(|m| ApiError::invalid("INVALID_REQUEST", m))?;
    if !roots.is_empty() && req.role != Role::Agent {
        return Err(ApiError::invalid(
            "INVALID_REQUEST",
            "only agent tokens have workspace roots",
        ));
    }
    let t = st
        .auth
        .create(&req.name, req.role)
        .await
        .map_err(gateway_error)?;
    if !roots.is_empty() {
        st.auth
            .db()
            .token_roots_add(&t.id, &roots)
            .await
            .map_err(ApiError::internal)?;
    }
    Ok((StatusCode::CREATED, Json(t)))
}

pub async fn list(
    State(st): State<AppState>,
    caller: Caller,
) -> Result<Json<Vec<TokenInfo>>, ApiError> {
    caller.require(&[Role::Admin], "list tokens")?;
    Ok(Json(st.auth.list().await.map_err(gateway_error)?))
}

#[derive(Debug, Serialize)]
pub struct RevokedToken {
    pub id: String,
    pub revoked: bool,
}

pub async fn revoke(
    State(st): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<RevokedToken>, ApiError> {
    caller.require(&[Role::Admin], "revoke tokens")?;
    if st.auth.revoke(&id).await.map_err(gateway_error)? {
        return Ok(Json(RevokedToken { id, revoked: true }));
    }
    match st
        .auth
        .db()
        .token_get(&id)
        .await
        .map_err(ApiError::internal)?
    {
        Some(_) => Err(ApiError::conflict(
            "ALREADY_REVOKED",
            format!("token {id} was already revoked"),
        )),
        None => Err(ApiError::not_found(format!("no token {id}"))),
    }
}
