//! The inbox's form posts: login, logout, answer, cancel, revoke, re-approve an MCP tool. Every post from a logged-in
//! page must carry the session's CSRF token (403 CSRF_INVALID otherwise); login has no session
//! yet, and is protected by needing the token itself.

use axum::Form;
use axum::extract::rejection::FormRejection;
use axum::extract::{Path, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::harden;
use super::pages::{done_page, login_form};
use super::session::{InboxUser, clear_cookie, set_cookie};
use crate::api::approvals::{AnswerRequest, answer_of};
use crate::api::grants::revoke_grant;
use crate::api::principal;
use crate::auth::SESSION_TTL_MS;
use crate::error::ApiError;
use crate::state::AppState;
use airlock_confirm::{AnswerScope, Choice};

fn form<T>(f: Result<Form<T>, FormRejection>) -> Result<T, ApiError> {
    match f {
        Ok(Form(t)) => Ok(t),
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "BODY_TOO_LARGE",
            "the form is too large",
        )),
        Err(e) => Err(ApiError::bad_request("INVALID_FORM", e.body_text())),
    }
}

/// A refused form post, shown as a page (the person is in a browser).
fn refused(e: ApiError) -> Response {
    if e.code == "CSRF_INVALID" {
        return e.into_response();
    }
    let mut resp = done_page(e.status, "Not done", &e.message);
    if let Ok(v) = HeaderValue::from_str(e.code) {
        resp.headers_mut().insert("x-airlock-error", v);
    }
    resp
}

#[derive(Debug, Deserialize)]
pub struct LoginForm {
    #[serde(default)]
    token: String,
}

pub async fn login(
    State(st): State<AppState>,
    f: Result<Form<LoginForm>, FormRejection>,
) -> Response {
    let f = match form(f) {
        Ok(f) => f,
        Err(e) => return e.into_response(),
    };
    match st.auth.login(f.token.trim()).await {
        Ok(Some(l)) => {
            let cookie = set_cookie(
                &l.session_id,
                SESSION_TTL_MS / 1000,
                st.config.secure_cookie(),
            );
            let mut resp = harden(Redirect::to("/inbox").into_response());
            match HeaderValue::from_str(&cookie) {
                Ok(v) => {
                    resp.headers_mut().insert(SET_COOKIE, v);
                    resp
                }
                Err(e) => ApiError::internal(e).into_response(),
            }
        }
        Ok(None) => login_form(
            StatusCode::UNAUTHORIZED,
            Some("That token is unknown, revoked, or not an approver's or admin's.".into()),
        ),
        Err(e) => ApiError::internal(e).into_response(),
    }
}

#[derive(Debug, Deserialize)]
pub struct CsrfForm {
    csrf: Option<String>,
    #[serde(default)]
    reason: Option<String>,
}

pub async fn logout(
    State(st): State<AppState>,
    user: InboxUser,
    f: Result<Form<CsrfForm>, FormRejection>,
) -> Response {
    let f = match form(f).and_then(|f| user.check_csrf(f.csrf.as_deref()).map(|()| f)) {
        Ok(f) => f,
        Err(e) => return e.into_response(),
    };
    drop(f);
    if let Err(e) = st.auth.logout(&user.session_id).await {
        return ApiError::internal(e).into_response();
    }
    let mut resp = harden(Redirect::to("/inbox/login").into_response());
    if let Ok(v) = HeaderValue::from_str(&clear_cookie(st.config.secure_cookie())) {
        resp.headers_mut().insert(SET_COOKIE, v);
    }
    resp
}

#[derive(Debug, Deserialize)]
pub struct AnswerForm {
    csrf: Option<String>,
    /// once | session | deny
    choice: Option<String>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    action_sha256: Option<String>,
}

pub async fn answer(
    State(st): State<AppState>,
    user: InboxUser,
    Path(id): Path<String>,
    f: Result<Form<AnswerForm>, FormRejection>,
) -> Response {
    let result = async {
        let f = form(f)?;
        user.check_csrf(f.csrf.as_deref())?;
        let (decision, scope) = match f.choice.as_deref() {
            Some("once") => (Choice::Approve, AnswerScope::Once),
            Some("session") => (Choice::Approve, AnswerScope::Session),
            Some("deny") => (Choice::Deny, AnswerScope::Once),
            _ => {
                return Err(ApiError::bad_request(
                    "INVALID_FORM",
                    "choose approve once, approve for the session, or deny",
                ));
            }
        };
        let req = AnswerRequest {
            decision,
            scope: Some(scope),
            reason: f.reason,
            code: f.code,
            action_sha256: f.action_sha256,
        };
        let a = answer_of(user.caller(), req)?;
        st.broker.answer(&id, a).await?;
        Ok(match decision {
            Choice::Approve => "approved",
            Choice::Deny => "denied",
        })
    }
    .await;
    match result {
        Ok(m) => Redirect::to(&format!("/inbox?m={m}")).into_response(),
        Err(e) => refused(e),
    }
}

pub async fn cancel(
    State(st): State<AppState>,
    user: InboxUser,
    Path(id): Path<String>,
    f: Result<Form<CsrfForm>, FormRejection>,
) -> Response {
    let result = async {
        let f = form(f)?;
        user.check_csrf(f.csrf.as_deref())?;
        let reason = f.reason.unwrap_or_default();
        st.broker
            .cancel(&id, &principal(user.caller()), &reason)
            .await?;
        Ok::<_, ApiError>(())
    }
    .await;
    match result {
        Ok(()) => Redirect::to("/inbox?m=cancelled").into_response(),
        Err(e) => refused(e),
    }
}

pub async fn revoke(
    State(st): State<AppState>,
    user: InboxUser,
    Path(id): Path<String>,
    f: Result<Form<CsrfForm>, FormRejection>,
) -> Response {
    let result = async {
        let f = form(f)?;
        user.check_csrf(f.csrf.as_deref())?;
        revoke_grant(&st, user.caller(), &id, f.reason).await
    }
    .await;
    match result {
        Ok(_) => Redirect::to("/inbox/grants?m=revoked").into_response(),
        Err(e) => refused(e),
    }
}

#[derive(Debug, Deserialize)]
pub struct CrisisForm {
    csrf: Option<String>,
    #[serde(default)]
    session: String,
}

/// An approver ends a session's crisis mode from the pending page.
pub async fn clear_crisis(
    State(st): State<AppState>,
    user: InboxUser,
    f: Result<Form<CrisisForm>, FormRejection>,
) -> Response {
    let result = async {
        let f = form(f)?;
        user.check_csrf(f.csrf.as_deref())?;
        crate::api::crisis::clear_session(&st, user.caller(), &f.session).await
    }
    .await;
    match result {
        Ok(_) => Redirect::to("/inbox?m=crisis-cleared").into_response(),
        Err(e) => refused(e),
    }
}

#[derive(Debug, Deserialize)]
pub struct ToolForm {
    csrf: Option<String>,
    /// The pending definition's hash shown on the page the person read.
    #[serde(default)]
    sha256: String,
}

pub async fn approve_tool(
    State(st): State<AppState>,
    user: InboxUser,
    Path((server, tool)): Path<(String, String)>,
    f: Result<Form<ToolForm>, FormRejection>,
) -> Response {
    let result = async {
        let f = form(f)?;
        user.check_csrf(f.csrf.as_deref())?;
        crate::api::mcp_pins::approve_pin(&st, user.caller(), &server, &tool, &f.sha256).await
    }
    .await;
    match result {
        Ok(_) => Redirect::to("/inbox/tools?m=tool-approved").into_response(),
        Err(e) => refused(e),
    }
}
