//! `GET /inbox/events`: Server-Sent Events telling the page that an approval opened or was
//! decided (on this node or, through the broker, on another). The page re-fetches its list;
//! an event carries only the approval id, never its content.

use std::convert::Infallible;
use std::time::Duration;

use airlock_confirm::ApprovalEvent;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use tokio::sync::broadcast::error::RecvError;

use super::harden;
use super::session::InboxUser;
use crate::state::AppState;

fn to_sse(e: &ApprovalEvent) -> SseEvent {
    let (kind, id) = match e {
        ApprovalEvent::Opened(id) => ("opened", id),
        ApprovalEvent::Decided(id) => ("decided", id),
    };
    SseEvent::default()
        .event("approval")
        .data(serde_json::json!({"event": kind, "id": id}).to_string())
}

fn events(st: AppState) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    let rx = st.broker.subscribe();
    stream::unfold((rx, st), |(mut rx, st)| async move {
        let ev = tokio::select! {
            r = rx.recv() => match r {
                Ok(e) => to_sse(&e),
                // Missed events: tell the page to refresh, which catches up with all of them.
                Err(RecvError::Lagged(_)) => SseEvent::default()
                    .event("approval")
                    .data(r#"{"event":"lagged"}"#),
                Err(RecvError::Closed) => return None,
            },
            () = st.shutting_down() => return None,
        };
        Some((Ok(ev), (rx, st)))
    })
}

pub async fn stream(State(st): State<AppState>, _user: InboxUser) -> impl IntoResponse {
    let sse = Sse::new(events(st)).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)));
    harden(sse.into_response())
}
