//! The inbox's pages (askama templates) and their GET handlers.

use airlock_confirm::{Approval, Choice};
use airlock_grants::ListFilter;
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;

use super::harden;
use super::session::InboxUser;
use super::views::{ApprovalView, GrantView};
use crate::error::ApiError;
use crate::state::AppState;

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage {
    user: Option<String>,
    csrf: String,
    flash: Option<String>,
}

#[derive(Template)]
#[template(path = "inbox.html")]
struct InboxPage {
    user: Option<String>,
    csrf: String,
    flash: Option<String>,
    approvals: Vec<ApprovalView>,
    /// Sessions in crisis mode: their decision tools wait for a person.
    crisis: Vec<crate::api::crisis::CrisisView>,
}

#[derive(Template)]
#[template(path = "pending.html")]
struct PendingFragment {
    csrf: String,
    approvals: Vec<ApprovalView>,
}

#[derive(Template)]
#[template(path = "history.html")]
struct HistoryPage {
    user: Option<String>,
    csrf: String,
    flash: Option<String>,
    approvals: Vec<ApprovalView>,
}

#[derive(Template)]
#[template(path = "grants.html")]
struct GrantsPage {
    user: Option<String>,
    csrf: String,
    flash: Option<String>,
    grants: Vec<GrantView>,
}

#[derive(Template)]
#[template(path = "tools.html")]
struct ToolsPage {
    user: Option<String>,
    csrf: String,
    flash: Option<String>,
    tools: Vec<ToolView>,
}

/// One pinned MCP tool as the tools page shows it.
struct ToolView {
    server: String,
    tool: String,
    status: String,
    sha256: String,
    pending_sha256: String,
    /// The definition a quarantined tool now presents, pretty-printed (escaped by the template).
    pending: String,
    /// Where its approval form posts (names percent-encoded: tool names come from servers).
    approve_url: String,
}

#[derive(Template)]
#[template(path = "receipt.html")]
struct ReceiptPage {
    user: Option<String>,
    csrf: String,
    flash: Option<String>,
    id: String,
    leaf: u64,
    body: String,
}

#[derive(Template)]
#[template(path = "link.html")]
struct LinkPage {
    user: Option<String>,
    csrf: String,
    flash: Option<String>,
    choice: &'static str,
    a: ApprovalView,
}

#[derive(Template)]
#[template(path = "done.html")]
struct DonePage {
    user: Option<String>,
    csrf: String,
    flash: Option<String>,
    title: String,
    message: String,
}

/// Renders a template with the inbox's headers; a template error is an internal error.
fn render(status: StatusCode, t: &impl Template) -> Response {
    match t.render() {
        Ok(html) => harden((status, Html(html)).into_response()),
        Err(e) => ApiError::internal(e).into_response(),
    }
}

pub fn login_form(status: StatusCode, flash: Option<String>) -> Response {
    render(
        status,
        &LoginPage {
            user: None,
            csrf: String::new(),
            flash,
        },
    )
}

pub async fn login_page() -> Response {
    login_form(StatusCode::OK, None)
}

/// What a one-time link would do, before it is spent.
pub fn link_page(a: &Approval, choice: Choice) -> Response {
    render(
        StatusCode::OK,
        &LinkPage {
            user: None,
            csrf: String::new(),
            flash: None,
            choice: choice.as_str(),
            a: ApprovalView::new(a, None),
        },
    )
}

/// A page with one message (after a webhook link, or a refused form).
pub fn done_page(status: StatusCode, title: &str, message: &str) -> Response {
    render(
        status,
        &DonePage {
            user: None,
            csrf: String::new(),
            flash: None,
            title: title.to_string(),
            message: message.to_string(),
        },
    )
}

/// Fixed notices after a form post (never free text from the URL).
#[derive(Debug, Deserialize)]
pub struct Notice {
    m: Option<String>,
}

fn notice(n: &Notice) -> Option<String> {
    let text = match n.m.as_deref()? {
        "approved" => "Approved.",
        "denied" => "Denied.",
        "cancelled" => "Cancelled.",
        "revoked" => "Grant revoked.",
        "tool-approved" => "Tool re-approved: its new definition is pinned.",
        "crisis-cleared" => "The session is no longer in crisis mode.",
        _ => return None,
    };
    Some(text.to_string())
}

async fn pending_views(st: &AppState) -> Result<Vec<ApprovalView>, ApiError> {
    let list = st.broker.pending().await?;
    Ok(list
        .iter()
        .map(|a| ApprovalView::new(a, Some(&st.broker)))
        .collect())
}

pub async fn pending_page(
    State(st): State<AppState>,
    user: InboxUser,
    Query(n): Query<Notice>,
) -> Response {
    let crisis = match st.broker.crisis_sessions().await {
        Ok(rows) => rows.into_iter().map(crate::api::crisis::view).collect(),
        Err(e) => return ApiError::from(e).into_response(),
    };
    match pending_views(&st).await {
        Ok(approvals) => render(
            StatusCode::OK,
            &InboxPage {
                user: Some(user.caller().name.clone()),
                csrf: user.csrf().to_string(),
                flash: notice(&n),
                approvals,
                crisis,
            },
        ),
        Err(e) => e.into_response(),
    }
}

/// The pending list alone, fetched by the page's script when an event arrives.
pub async fn pending_fragment(State(st): State<AppState>, user: InboxUser) -> Response {
    match pending_views(&st).await {
        Ok(approvals) => render(
            StatusCode::OK,
            &PendingFragment {
                csrf: user.csrf().to_string(),
                approvals,
            },
        ),
        Err(e) => e.into_response(),
    }
}

pub async fn history_page(State(st): State<AppState>, user: InboxUser) -> Response {
    match st.broker.history(200).await {
        Ok(list) => render(
            StatusCode::OK,
            &HistoryPage {
                user: Some(user.caller().name.clone()),
                csrf: user.csrf().to_string(),
                flash: None,
                approvals: list
                    .iter()
                    .map(|a| ApprovalView::new(a, Some(&st.broker)))
                    .collect(),
            },
        ),
        Err(e) => ApiError::from(e).into_response(),
    }
}

pub async fn grants_page(
    State(st): State<AppState>,
    user: InboxUser,
    Query(n): Query<Notice>,
) -> Response {
    let book = st.broker.book();
    let f = ListFilter {
        all: true,
        ..ListFilter::default()
    };
    match book.list(&f).await {
        Ok(list) => {
            let now = book.now();
            render(
                StatusCode::OK,
                &GrantsPage {
                    user: Some(user.caller().name.clone()),
                    csrf: user.csrf().to_string(),
                    flash: notice(&n),
                    grants: list.iter().map(|g| GrantView::new(g, now)).collect(),
                },
            )
        }
        Err(e) => ApiError::internal(e).into_response(),
    }
}

/// The MCP gateway's pinned tools; quarantined ones first, with what they now present.
pub async fn tools_page(
    State(st): State<AppState>,
    user: InboxUser,
    Query(n): Query<Notice>,
) -> Response {
    let rows = match st.broker.ledger().db().mcp_pin_list(None).await {
        Ok(rows) => rows,
        Err(e) => return ApiError::internal(e).into_response(),
    };
    let mut tools: Vec<ToolView> = rows
        .into_iter()
        .map(crate::api::mcp_pins::view)
        .map(|p| ToolView {
            approve_url: format!(
                "/inbox/mcp/{}/{}/approve",
                crate::url::segment(&p.server),
                crate::url::segment(&p.tool)
            ),
            pending: p
                .pending_definition
                .as_ref()
                .and_then(|v| serde_json::to_string_pretty(v).ok())
                .unwrap_or_default(),
            server: p.server,
            tool: p.tool,
            status: p.status,
            sha256: p.sha256,
            pending_sha256: p.pending_sha256.unwrap_or_default(),
        })
        .collect();
    tools.sort_by_key(|t| t.status != "quarantined");
    render(
        StatusCode::OK,
        &ToolsPage {
            user: Some(user.caller().name.clone()),
            csrf: user.csrf().to_string(),
            flash: notice(&n),
            tools,
        },
    )
}

pub async fn receipt_page(
    State(st): State<AppState>,
    user: InboxUser,
    Path(id): Path<String>,
) -> Response {
    let r = match st.broker.ledger().db().receipt_by_id(&id).await {
        Ok(Some(r)) => r,
        Ok(None) => return done_page(StatusCode::NOT_FOUND, "No such receipt", &id),
        Err(e) => return ApiError::internal(e).into_response(),
    };
    let body = serde_json::from_str::<serde_json::Value>(&r.body)
        .and_then(|v| serde_json::to_string_pretty(&v))
        .unwrap_or(r.body);
    render(
        StatusCode::OK,
        &ReceiptPage {
            user: Some(user.caller().name.clone()),
            csrf: user.csrf().to_string(),
            flash: None,
            id,
            leaf: r.leaf,
            body,
        },
    )
}
