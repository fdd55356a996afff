//! Approvals, for approvers and admins only: list pending, show one, answer (approve once or
//! for the session, or deny), cancel a time-locked approval, and the recent history. An agent
//! token is refused here before the broker is asked (which refuses it too).

use airlock_confirm::{Answer, AnswerScope, Approval, Broker, Choice};
use axum::Json;
use axum::extract::{Path, Query, State};
use serde::{Deserialize, Serialize};

use super::{DECIDERS, principal};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::{ApiJson, OptionalJson};
use crate::state::AppState;

const MAX_REASON: usize = 1000;

/// An approval as approvers see it, with the tier-4 code they must type.
#[derive(Debug, Serialize)]
pub struct ApprovalBody {
    #[serde(flatten)]
    pub approval: Approval,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

impl ApprovalBody {
    /// The approval with its code (keyed by the broker's secret) when it needs one.
    pub fn new(approval: Approval, broker: &Broker) -> Self {
        let code = approval
            .code_required
            .then(|| broker.deliberate_code(&approval.action_sha256));
        ApprovalBody { approval, code }
    }
}

pub async fn list(
    State(st): State<AppState>,
    caller: Caller,
) -> Result<Json<Vec<ApprovalBody>>, ApiError> {
    caller.require(DECIDERS, "list approvals")?;
    let list = st.broker.pending().await?;
    Ok(Json(
        list.into_iter()
            .map(|a| ApprovalBody::new(a, &st.broker))
            .collect(),
    ))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryQuery {
    limit: Option<u32>,
}

pub async fn history(
    State(st): State<AppState>,
    caller: Caller,
    q: Result<Query<HistoryQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Vec<ApprovalBody>>, ApiError> {
    caller.require(DECIDERS, "read the history")?;
    let Query(q) = q.map_err(|e| ApiError::bad_request("INVALID_REQUEST", e.body_text()))?;
    let list = st.broker.history(q.limit.unwrap_or(100).min(1000)).await?;
    Ok(Json(
        list.into_iter()
            .map(|a| ApprovalBody::new(a, &st.broker))
            .collect(),
    ))
}

pub async fn show(
    State(st): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<ApprovalBody>, ApiError> {
    caller.require(DECIDERS, "read approvals")?;
    Ok(Json(ApprovalBody::new(
        st.broker.approval(&id).await?,
        &st.broker,
    )))
}

/// `POST /v1/approvals/{id}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerRequest {
    pub decision: Choice,
    #[serde(default)]
    pub scope: Option<AnswerScope>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub code: Option<String>,
    /// Binds the answer to the exact action the approver looked at.
    #[serde(default)]
    pub action_sha256: Option<String>,
}

fn check_reason(r: &str) -> Result<(), ApiError> {
    if r.len() > MAX_REASON {
        return Err(ApiError::invalid(
            "INVALID_REQUEST",
            format!("reason is limited to {MAX_REASON} bytes"),
        ));
    }
    Ok(())
}

/// Turns an answer request into the broker's answer (shared by the API and the inbox).
pub fn answer_of(caller: &Caller, req: AnswerRequest) -> Result<Answer, ApiError> {
    let reason = req.reason.unwrap_or_default();
    check_reason(&reason)?;
    Ok(Answer {
        by: principal(caller),
        decision: req.decision,
        scope: req.scope.unwrap_or(AnswerScope::Once),
        reason,
        code: req.code.filter(|c| !c.trim().is_empty()),
        action_sha256: req.action_sha256.filter(|h| !h.is_empty()),
        via: None,
    })
}

pub async fn answer(
    State(st): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<AnswerRequest>,
) -> Result<Json<ApprovalBody>, ApiError> {
    caller.require(DECIDERS, "answer approvals")?;
    let a = answer_of(&caller, req)?;
    Ok(Json(ApprovalBody::new(
        st.broker.answer(&id, a).await?,
        &st.broker,
    )))
}

/// `POST /v1/approvals/{id}/cancel`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CancelRequest {
    #[serde(default)]
    pub reason: Option<String>,
}

pub async fn cancel(
    State(st): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    OptionalJson(req): OptionalJson<CancelRequest>,
) -> Result<Json<ApprovalBody>, ApiError> {
    caller.require(DECIDERS, "cancel approvals")?;
    let reason = req.reason.unwrap_or_default();
    check_reason(&reason)?;
    let a = st.broker.cancel(&id, &principal(&caller), &reason).await?;
    Ok(Json(ApprovalBody::new(a, &st.broker)))
}
