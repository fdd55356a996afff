//! `/healthz`, `/metrics` (Prometheus text, approvers and admins) and `/openapi.json`.

use axum::Json;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::auth::{Caller, Role};
use crate::error::ApiError;
use crate::state::AppState;

pub async fn healthz(State(st): State<AppState>) -> Json<Value> {
    Json(json!({
        "status": "ok",
        "backend": st.broker.ledger().db().backend(),
    }))
}

/// Prometheus text. It names agents and sessions, so it needs an approver or admin token
/// (a scraper sends one as a bearer token).
pub async fn metrics(State(st): State<AppState>, caller: Caller) -> Result<Response, ApiError> {
    caller.require(&[Role::Approver, Role::Admin], "read the metrics")?;
    let mut out = String::new();
    st.metrics.render(&mut out);
    out.push_str(&st.broker.metrics().to_prometheus());
    for source in &st.metric_sources {
        out.push_str(&source());
    }
    Ok((
        [(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        out,
    )
        .into_response())
}

pub async fn openapi() -> Response {
    (
        [(CONTENT_TYPE, "application/json")],
        crate::openapi::DOCUMENT,
    )
        .into_response()
}
