//! Sessions in crisis mode: `POST /v1/crisis` marks a session after a crisis verdict a caller
//! saw (the hook's prompt scan reports here; any role, named as the caller), `GET /v1/crisis`
//! lists the sessions in crisis mode and `POST /v1/crisis/clear` ends one (approvers and admins
//! only). The state lives in the store, so every node agrees; marks and clearings are receipts
//! (`airlock_confirm::crisis`, the use-case the CLI shares).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::api::{DECIDERS, principal};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::{ApiJson, is_label};
use crate::state::AppState;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkRequest {
    pub session: String,
    /// The surface that saw the crisis (`hook:claude`, …).
    pub source: String,
    /// The scanner's first crisis rule, or the verdict.
    #[serde(default)]
    pub rule: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClearRequest {
    pub session: String,
}

/// One session in crisis mode.
#[derive(Debug, Serialize)]
pub struct CrisisView {
    pub session: String,
    pub since_ms: i64,
    pub source: String,
    pub rule: String,
    pub agent: String,
}

pub(crate) fn view(r: airlock_store::CrisisRow) -> CrisisView {
    CrisisView {
        session: r.session,
        since_ms: r.since_ms,
        source: r.source,
        rule: r.rule,
        agent: r.agent,
    }
}

fn label(what: &str, v: &str, max: usize) -> Result<(), ApiError> {
    if !is_label(v, max) {
        return Err(ApiError::bad_request(
            "INVALID_REQUEST",
            format!("{what} must be 1 to {max} printable characters"),
        ));
    }
    Ok(())
}

pub async fn mark(
    State(st): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<MarkRequest>,
) -> Result<Json<Value>, ApiError> {
    label("session", &req.session, 200)?;
    label("source", &req.source, 200)?;
    let rule = req.rule.unwrap_or_else(|| "CRISIS_DETECTED".into());
    label("rule", &rule, 200)?;
    let origin = airlock_confirm::Origin {
        agent: caller.name.clone(),
        session: req.session.clone(),
    };
    let receipt = st.broker.mark_crisis(&origin, &req.source, &rule).await?;
    Ok(Json(json!({
        "session": req.session,
        "marked": receipt.is_some(),
        "receipt": receipt,
    })))
}

pub async fn list(State(st): State<AppState>, caller: Caller) -> Result<Json<Value>, ApiError> {
    caller.require(DECIDERS, "list the sessions in crisis mode")?;
    let rows = st.broker.crisis_sessions().await?;
    Ok(Json(json!(rows.into_iter().map(view).collect::<Vec<_>>())))
}

pub async fn clear(
    State(st): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<ClearRequest>,
) -> Result<Json<Value>, ApiError> {
    clear_session(&st, &caller, &req.session).await.map(Json)
}

/// An approver ends `session`'s crisis mode in the store and in this machine's data directory;
/// the REST API and the inbox both come here.
pub(crate) async fn clear_session(
    st: &AppState,
    caller: &Caller,
    session: &str,
) -> Result<Value, ApiError> {
    caller.require(DECIDERS, "end a session's crisis mode")?;
    label("session", session, 200)?;
    let cleared = st.broker.clear_crisis(&principal(caller), session).await?;
    // the hooks of this machine keep their own mark: it ends with the store's
    let local = match &st.data_dir {
        Some(dir) => airlock_hook::crisis::clear(dir, session).map_err(ApiError::internal)?,
        None => false,
    };
    match cleared {
        Some((row, receipt)) => Ok(json!({"cleared": view(row), "receipt": receipt})),
        None if local => {
            // known to this machine's hooks only (marked while no daemon ran): recorded now
            let event = airlock_confirm::Event::Crisis {
                session: session.to_string(),
                who: caller.name.clone(),
                change: airlock_confirm::CrisisChange::Clear,
                source: "hook".into(),
                rule: "data directory mark".into(),
            };
            let receipt = st.broker.record_event(&event).await?;
            Ok(json!({
                "cleared": {"session": session, "since_ms": 0, "source": "hook",
                            "rule": "data directory mark", "agent": ""},
                "receipt": receipt,
            }))
        }
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "NOT_IN_CRISIS",
            format!("session {session} is not in crisis mode"),
        )),
    }
}
