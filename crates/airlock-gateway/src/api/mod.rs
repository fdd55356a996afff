//! The REST API under `/v1`, plus `/healthz`, `/metrics` and `/openapi.json`. Handlers check
//! the caller's role first, then parse strictly, then call the broker; broker errors map onto
//! statuses here, in one place.

mod actions;
pub(crate) mod approvals;
pub(crate) mod crisis;
pub(crate) mod grants;
mod ledger;
mod links;
pub(crate) mod mcp_pins;
mod meta;
mod output;
mod privacy;
mod scan;
mod tokens;

use airlock_confirm::{ConfirmError, Principal};
use axum::http::StatusCode;
use axum::routing::{get, post};

use crate::auth::{Caller, Role};
use crate::error::ApiError;
use crate::routes::Routes;

pub fn register(r: Routes) -> Routes {
    r.add(&["POST"], "/v1/actions", post(actions::submit))
        .add(&["GET"], "/v1/actions/{id}", get(actions::outcome))
        .add(&["GET"], "/v1/actions/{id}/wait", get(actions::wait))
        .add(&["GET"], "/v1/approvals", get(approvals::list))
        .add(
            &["GET", "POST"],
            "/v1/approvals/{id}",
            get(approvals::show).post(approvals::answer),
        )
        .add(
            &["POST"],
            "/v1/approvals/{id}/cancel",
            post(approvals::cancel),
        )
        .add(&["GET"], "/v1/history", get(approvals::history))
        .add(&["GET"], "/v1/grants", get(grants::list))
        .add(&["POST"], "/v1/grants/{id}/revoke", post(grants::revoke))
        .add(&["POST"], "/v1/scan", post(scan::scan))
        .add(&["POST"], "/v1/outputs", post(output::check))
        .add(&["POST"], "/v1/privacy", post(privacy::replace))
        .add(
            &["GET", "POST"],
            "/v1/crisis",
            get(crisis::list).post(crisis::mark),
        )
        .add(&["POST"], "/v1/crisis/clear", post(crisis::clear))
        .add(&["GET"], "/v1/mcp/pins", get(mcp_pins::list))
        .add(
            &["POST"],
            "/v1/mcp/pins/{server}/{tool}/approve",
            post(mcp_pins::approve),
        )
        .add(&["GET"], "/v1/ledger/verify", get(ledger::verify))
        .add(&["POST"], "/v1/ledger/export", post(ledger::export))
        .add(&["GET"], "/v1/receipts/{id}", get(ledger::receipt))
        .add(
            &["GET", "POST"],
            "/v1/tokens",
            get(tokens::list).post(tokens::create),
        )
        .add(&["POST"], "/v1/tokens/{id}/revoke", post(tokens::revoke))
        .add(
            &["GET", "POST"],
            "/v1/links/{token}",
            get(links::page).post(links::spend),
        )
        .add(&["GET"], "/healthz", get(meta::healthz))
        .add(&["GET"], "/metrics", get(meta::metrics))
        .add(&["GET"], "/openapi.json", get(meta::openapi))
}

/// Any path no route matches.
pub async fn no_route() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "NO_ROUTE",
        "no such endpoint: see /openapi.json",
    )
}

/// The broker's view of a caller.
pub fn principal(c: &Caller) -> Principal {
    let role = match c.role {
        Role::Agent => airlock_confirm::Role::Agent,
        Role::Approver => airlock_confirm::Role::Approver,
        Role::Admin => airlock_confirm::Role::Admin,
    };
    Principal::new(c.name.clone(), role)
}

/// Approvers and admins.
pub const DECIDERS: &[Role] = &[Role::Approver, Role::Admin];

impl From<ConfirmError> for ApiError {
    fn from(e: ConfirmError) -> ApiError {
        let code = e.code();
        let msg = e.to_string();
        match e {
            ConfirmError::Forbidden(_) | ConfirmError::CodeLockout(_) => {
                ApiError::new(StatusCode::FORBIDDEN, code, msg)
            }
            ConfirmError::NotFound(_) => ApiError::new(StatusCode::NOT_FOUND, code, msg),
            ConfirmError::AlreadyDecided { .. } | ConfirmError::ActionMismatch { .. } => {
                ApiError::new(StatusCode::CONFLICT, code, msg)
            }
            ConfirmError::BadCode(_) | ConfirmError::Invalid(_) => {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, code, msg)
            }
            ConfirmError::BadLink(_) => ApiError::new(StatusCode::GONE, code, msg),
            other => ApiError::internal(other),
        }
    }
}
