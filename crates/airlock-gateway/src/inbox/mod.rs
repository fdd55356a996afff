//! The web inbox: server-rendered pages for approvers (login, pending approvals, history,
//! grants, receipts), form posts that carry a CSRF token, an SSE stream that tells the page to
//! refresh its pending list, and the small static script and stylesheet.

mod events;
mod forms;
pub mod pages;
mod session;
mod views;

use axum::http::HeaderValue;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};

use crate::routes::Routes;

pub fn register(r: Routes) -> Routes {
    r.add(&["GET"], "/", get(|| async { Redirect::to("/inbox") }))
        .add(&["GET"], "/inbox", get(pages::pending_page))
        .add(&["GET"], "/inbox/pending", get(pages::pending_fragment))
        .add(&["GET"], "/inbox/history", get(pages::history_page))
        .add(&["GET"], "/inbox/grants", get(pages::grants_page))
        .add(&["GET"], "/inbox/receipts/{id}", get(pages::receipt_page))
        .add(
            &["GET", "POST"],
            "/inbox/login",
            get(pages::login_page).post(forms::login),
        )
        .add(&["POST"], "/inbox/logout", post(forms::logout))
        .add(&["POST"], "/inbox/approvals/{id}", post(forms::answer))
        .add(
            &["POST"],
            "/inbox/approvals/{id}/cancel",
            post(forms::cancel),
        )
        .add(&["POST"], "/inbox/grants/{id}/revoke", post(forms::revoke))
        .add(&["GET"], "/inbox/events", get(events::stream))
        .add(&["GET"], "/inbox/static/inbox.js", get(script))
        .add(&["GET"], "/inbox/static/inbox.css", get(style))
}

async fn script() -> Response {
    (
        [(CONTENT_TYPE, "text/javascript; charset=utf-8")],
        include_str!("../../static/inbox.js"),
    )
        .into_response()
}

async fn style() -> Response {
    (
        [(CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("../../static/inbox.css"),
    )
        .into_response()
}

/// Headers every inbox page carries: no inline script, no framing, no caching of decisions.
pub fn harden(mut resp: Response) -> Response {
    let h = resp.headers_mut();
    h.insert(
        CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
             img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    h.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}
