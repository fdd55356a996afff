//! One-time approve/deny links of the webhook channel. Opening a link (GET) only shows a
//! confirmation page, because mail scanners and chat previews open links by themselves; the
//! POST from that page spends it. The link's signed token is its own authority.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::inbox::pages::{done_page, link_page};
use crate::state::AppState;

const MAX_LINK: usize = 2048;

pub async fn page(State(st): State<AppState>, Path(token): Path<String>) -> Response {
    if token.len() > MAX_LINK {
        return ApiError::bad_request("BAD_LINK", "link too long").into_response();
    }
    match st.broker.link_info(&token).await {
        Ok((a, choice)) => link_page(&a, choice),
        Err(e) => {
            let e = ApiError::from(e);
            done_page(e.status, "Link not usable", &e.message)
        }
    }
}

pub async fn spend(State(st): State<AppState>, Path(token): Path<String>) -> Response {
    if token.len() > MAX_LINK {
        return ApiError::bad_request("BAD_LINK", "link too long").into_response();
    }
    match st.broker.answer_link(&token).await {
        Ok(a) => done_page(
            StatusCode::OK,
            "Answer recorded",
            &format!(
                "Approval {} for {} is now {}.",
                a.id,
                a.agent,
                a.status.as_str()
            ),
        ),
        Err(e) => {
            let e = ApiError::from(e);
            done_page(e.status, "Link not used", &e.message)
        }
    }
}
