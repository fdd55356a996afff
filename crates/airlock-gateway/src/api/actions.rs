//! `POST /v1/actions` (an agent submits an action), `GET /v1/actions/{id}` and the long-poll
//! `GET /v1/actions/{id}/wait?timeout=S`. The submitting agent is the token's name, never a
//! field of the body.

use std::time::Duration;

use airlock_confirm::{ConfirmError, Submission};
use airlock_core::Action;
use airlock_ledger::canonical::{hash_value, sha256_hex};
use airlock_ledger::receipt::receipt_id;
use airlock_policy::Channel;
use airlock_wire::{ActionAnswer, ActionRequest, RequestError};
use axum::Json;
use axum::extract::{Path, Query, State};
use serde::Deserialize;
use serde_json::Value;

use super::DECIDERS;
use crate::auth::{Caller, Role};
use crate::error::ApiError;
use crate::extract::{ApiJson, json_error};
use crate::state::AppState;

/// The longest a wait may hold a request.
pub const MAX_WAIT_SECS: f64 = 120.0;
const DEFAULT_WAIT_SECS: f64 = 30.0;
const MAX_ID: usize = 128;
const MAX_COMMAND: usize = 64 * 1024;

fn check_id(what: &str, v: &str) -> Result<(), ApiError> {
    if !crate::extract::is_label(v, MAX_ID) {
        return Err(ApiError::invalid(
            "INVALID_ACTION",
            format!("{what} must be 1 to {MAX_ID} characters without control characters"),
        ));
    }
    Ok(())
}

/// Reads the body as the wire's `ActionRequest`, strictly: the action's own fields are checked
/// by `Action`'s deserializer, which refuses unknown ones.
fn submission(caller: &Caller, body: Value) -> Result<Submission, ApiError> {
    let ActionRequest {
        action,
        session,
        request_id,
    } = ActionRequest::parse_with(body, check_id).map_err(|e| match e {
        RequestError::NotObject | RequestError::NotString(_) | RequestError::MissingSession => {
            ApiError::bad_request("INVALID_REQUEST", e.to_string())
        }
        RequestError::Label(e) => e,
        RequestError::UnknownKind => ApiError::invalid("INVALID_ACTION", e.to_string()),
        RequestError::Action(e) => json_error(e),
    })?;
    let cwd = match &action {
        Action::Shell { command, cwd } => {
            if command.trim().is_empty() || command.len() > MAX_COMMAND {
                return Err(ApiError::invalid(
                    "INVALID_ACTION",
                    format!("command must be non-empty and at most {MAX_COMMAND} bytes"),
                ));
            }
            cwd.clone()
        }
        Action::Tool { tool, .. } if tool.trim().is_empty() || tool.len() > 256 => {
            return Err(ApiError::invalid(
                "INVALID_ACTION",
                "tool must be a non-empty name of at most 256 bytes",
            ));
        }
        _ => None,
    };
    let request_id = request_id
        .map(|r| scoped_request_id(&caller.name, &session, &r, &action))
        .transpose()?;
    Ok(Submission {
        request_id,
        agent: caller.name.clone(),
        session,
        action,
        cwd,
        channel: Channel::Api,
    })
}

/// The broker's request id for a client's: bound to the agent, the session and the exact
/// action, so a request id replays only the same action's outcome, never another agent's
/// decision or a decision about a different action.
fn scoped_request_id(
    agent: &str,
    session: &str,
    client: &str,
    action: &Action,
) -> Result<String, ApiError> {
    let action_sha = hash_value(action).map_err(ApiError::internal)?;
    let input =
        format!("airlock.gateway.request-id.v1\0{agent}\0{session}\0{client}\0{action_sha}");
    Ok(format!("rq-{}", &sha256_hex(input.as_bytes())[..32]))
}

pub async fn submit(
    State(st): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<ActionAnswer>, ApiError> {
    caller.require(&[Role::Agent], "submit actions (use an agent token)")?;
    let mut s = submission(&caller, body)?;
    crate::roots::confine(&st, &caller, &mut s).await?;
    Ok(Json(st.broker.submit(s).await?.into()))
}

/// Agents see only their own actions: an approval's agent, or for an immediate decision the
/// principal of its receipt, must be the caller.
async fn visible(st: &AppState, caller: &Caller, id: &str) -> Result<(), ApiError> {
    if DECIDERS.contains(&caller.role) {
        return Ok(());
    }
    let hidden = || ApiError::not_found(format!("no action {id}"));
    match st.broker.approval(id).await {
        Ok(a) if a.agent == caller.name => Ok(()),
        Ok(_) => Err(hidden()),
        Err(ConfirmError::NotFound(_)) => {
            let stored = st
                .broker
                .ledger()
                .db()
                .receipt_by_id(&receipt_id(id))
                .await
                .map_err(ApiError::internal)?;
            let Some(stored) = stored else {
                return Err(hidden());
            };
            let r: Value = serde_json::from_str(&stored.body).map_err(ApiError::internal)?;
            if r["principal"].as_str() == Some(caller.name.as_str()) {
                Ok(())
            } else {
                Err(hidden())
            }
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn outcome(
    State(st): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<ActionAnswer>, ApiError> {
    visible(&st, &caller, &id).await?;
    Ok(Json(st.broker.outcome(&id).await?.into()))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitQuery {
    timeout: Option<String>,
}

fn wait_timeout(q: &WaitQuery) -> Result<Duration, ApiError> {
    let secs = match q.timeout.as_deref() {
        None => DEFAULT_WAIT_SECS,
        Some(t) => t
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| {
                ApiError::bad_request(
                    "INVALID_TIMEOUT",
                    "timeout must be a number of seconds, at least 0",
                )
            })?,
    };
    Ok(Duration::from_secs_f64(secs.min(MAX_WAIT_SECS)))
}

pub async fn wait(
    State(st): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    q: Result<Query<WaitQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<ActionAnswer>, ApiError> {
    let Query(q) = q.map_err(|e| ApiError::bad_request("INVALID_REQUEST", e.body_text()))?;
    let timeout = wait_timeout(&q)?;
    visible(&st, &caller, &id).await?;
    let outcome = tokio::select! {
        o = st.broker.wait(&id, timeout) => o?,
        // On shutdown the agent gets the current state (still pending) and may wait again
        // on another node or after the restart.
        () = st.shutting_down() => st.broker.outcome(&id).await?,
    };
    Ok(Json(outcome.into()))
}
