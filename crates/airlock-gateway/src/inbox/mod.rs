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
        .add(&["GET"], "/inbox/tools", get(pages::tools_page))
        .add(
            &["POST"],
            "/inbox/mcp/{server}/{tool}/approve",
            post(forms::approve_tool),
        )
        .add(&["POST"], "/inbox/crisis/clear", post(forms::clear_crisis))
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
    // Not `no-referrer`: under it browsers send `Origin: null` on form posts, which the
    // origin check must refuse.
    h.insert(REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// Refuses inbox form posts a browser says came from another site (`Sec-Fetch-Site`) or whose
/// `Origin` is not this host: a second line behind SameSite=Strict and the CSRF token, and the
/// only one for the login form, which has no session yet.
pub async fn same_origin(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    if req.method() == axum::http::Method::POST && req.uri().path().starts_with("/inbox/") {
        let h = req.headers();
        let cross_site = h
            .get("sec-fetch-site")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v == "cross-site");
        let host = h
            .get(axum::http::header::HOST)
            .and_then(|v| v.to_str().ok());
        let foreign_origin = match h.get(axum::http::header::ORIGIN) {
            None => false,
            Some(o) => {
                let origin_host = o
                    .to_str()
                    .ok()
                    .and_then(|o| o.split_once("://"))
                    .map(|(_, rest)| rest.trim_end_matches('/'));
                origin_host.is_none() || origin_host != host
            }
        };
        if cross_site || foreign_origin {
            return crate::error::ApiError::csrf().into_response();
        }
    }
    next.run(req).await
}
