//! The proxy's HTTP handlers. `POST /v1/chat/completions`: the caller must hold an agent
//! token; the request goes upstream as sent (re-serialised only when inbound text was changed);
//! a whole answer with tool calls is decided and, if any call is blocked, rewritten, otherwise
//! returned as the upstream's bytes; a streamed answer goes through `stream.rs`. The status does
//! not matter: a 4xx or 5xx answer carrying tool calls is gated exactly like a 200.
//! `GET /v1/models` passes through.

use axum::body::{Body, Bytes};
use axum::extract::{Extension, FromRequest, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::budget::Admitted;
use super::gate::Who;
use super::upstream::{self, SESSION_HEADER};
use std::sync::Arc;

use super::{Proxy, privacy, request, rewrite, stream};
use airlock_gateway::ApiError;
use airlock_gateway::AppState;
use airlock_gateway::auth::{Caller, Role};

const MAX_SESSION: usize = 128;

/// The session the client names (header `X-Airlock-Session`), default `proxy`.
fn session(headers: &HeaderMap) -> Result<String, ApiError> {
    let Some(v) = headers.get(SESSION_HEADER) else {
        return Ok("proxy".into());
    };
    match v.to_str() {
        Ok(s) if airlock_gateway::extract::is_label(s, MAX_SESSION) => Ok(s.to_string()),
        _ => Err(ApiError::bad_request(
            "INVALID_REQUEST",
            format!("{SESSION_HEADER} must be 1 to {MAX_SESSION} printable characters"),
        )),
    }
}

async fn read_body(req: Request, st: &AppState, limit: usize) -> Result<Bytes, ApiError> {
    Bytes::from_request(req, st).await.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "BODY_TOO_LARGE",
                format!("the body is larger than {limit} bytes"),
            )
        } else {
            ApiError::bad_request("BAD_BODY", format!("reading the body: {e}"))
        }
    })
}

pub async fn chat_completions(
    State(st): State<AppState>,
    Extension(proxy): Extension<Arc<Proxy>>,
    caller: Caller,
    headers: HeaderMap,
    req: Request,
) -> Result<Response, ApiError> {
    caller.require(&[Role::Agent], "use the model proxy")?;
    let mut who = Who {
        agent: caller.name.clone(),
        session: session(&headers)?,
        crisis: false,
    };
    let raw = read_body(req, &st, proxy.config.max_body).await?;
    let chat = request::parse(&raw)?;
    let streamed = chat.streamed();
    let screened = match proxy.check_outputs(&who, &raw).await? {
        None => proxy.screen(&who, &raw, &chat).await?,
        Some(checked) => {
            let chat = request::parse(&checked)?;
            let mut s = proxy.screen(&who, &checked, &chat).await?;
            s.body = s.body.or(Some(checked.clone()));
            s
        }
    };
    // A person in crisis is never turned away or held: support bypasses budgets, and the
    // policy's crisis mode decides the answer's calls (support tools never gated).
    who.crisis = screened.prefix.is_some();
    let admitted = if who.crisis {
        None
    } else {
        proxy.admit(&who.agent, &who.session).await?
    };
    let raw = screened.body.unwrap_or(raw);
    let private = proxy.filter_private(&who, &raw).await?;
    let raw = private.body.unwrap_or(raw);
    let up = proxy
        .http
        .post(proxy.url("/chat/completions"))
        .headers(upstream::request_headers(
            &headers,
            proxy.config.upstream_key.as_deref(),
        )?)
        .body(raw)
        .send()
        .await
        .map_err(upstream::unreachable)?;
    let status = up.status();
    let out_headers = upstream::response_headers(up.headers());
    let is_sse = up
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    // Every status is gated alike: a client that reads tool calls out of an error answer (or
    // an upstream that puts them there) must not get them unchecked.
    // On the crisis route the model's text is checked for method details before the person
    // sees it (`crisis_reply.rs`); the guidance itself goes out at once.
    let crisis = screened.prefix.clone();
    if streamed && is_sse {
        let restore = private.restorer.map(privacy::StreamRestore::new);
        let body = stream::relay(
            proxy.clone(),
            who.clone(),
            up,
            screened.prefix,
            admitted,
            restore,
        );
        let body = match crisis {
            Some(safe) => proxy.hold_crisis_stream(who, body, safe.clone(), safe),
            None => body,
        };
        return Ok((status, out_headers, body).into_response());
    }
    let body = tokio::time::timeout(proxy.config.timeout, up.bytes())
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::GATEWAY_TIMEOUT,
                "UPSTREAM_TIMEOUT",
                "the upstream did not finish its answer in time",
            )
        })?
        .map_err(upstream::unreachable)?;
    if !status.is_success() && unreadable_error(&body) {
        // The upstream's error as it sent it (the SDK reads its shape): text that is not JSON
        // and names no tool call cannot carry one.
        return Ok((status, out_headers, body).into_response());
    }
    let body = privacy::restore_whole(private.restorer.as_ref(), body);
    let body = gate_whole(&proxy, &who, body, screened.prefix.as_deref(), admitted).await?;
    let body = match &crisis {
        Some(safe) => proxy.check_crisis_whole(&who, body, safe).await?,
        None => body,
    };
    Ok((status, out_headers, Body::from(body)).into_response())
}

/// Decides the tool calls of a whole answer; the upstream's bytes unless a call is blocked.
/// The answer is read once, as a tree (the reading clients share: a key given twice counts as
/// the last), and that tree is what a blocked call is rewritten in.
async fn gate_whole(
    proxy: &Proxy,
    who: &Who,
    body: Bytes,
    prefix: Option<&str>,
    admitted: Option<Admitted>,
) -> Result<Bytes, ApiError> {
    let mut doc = answer_tree(&body)?;
    let calls: Vec<_> = rewrite::calls(&doc).into_iter().map(|(_, c)| c).collect();
    if let (Some(at), Some(usage)) = (admitted, doc.get("usage")) {
        proxy.charge(&who.agent, at, usage).await;
    }
    let verdicts = proxy.decide_all(who, &calls).await;
    if verdicts.iter().all(|v| v.allowed()) && prefix.is_none() {
        return Ok(body);
    }
    rewrite::apply(&mut doc, &verdicts, &proxy.config.deny_template);
    if let Some(p) = prefix {
        rewrite::prepend(&mut doc, p);
    }
    serde_json::to_vec(&doc)
        .map(Bytes::from)
        .map_err(ApiError::internal)
}

/// An error answer that is not JSON and does not mention a tool or function call: passed on as
/// it is. Anything else is gated like a success.
fn unreadable_error(body: &[u8]) -> bool {
    let mentions = |needle: &[u8]| body.windows(needle.len()).any(|w| w == needle);
    serde_json::from_slice::<serde::de::IgnoredAny>(body).is_err()
        && !mentions(b"tool_calls")
        && !mentions(b"function_call")
}

/// The answer as a tree; an answer the proxy cannot read might hide tool calls, so it never
/// reaches the agent.
fn answer_tree(body: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice::<Value>(body).map_err(|_| {
        ApiError::new(
            StatusCode::BAD_GATEWAY,
            "UPSTREAM_MALFORMED",
            "the upstream's answer is not JSON; it was not forwarded",
        )
    })
}

pub async fn models(
    Extension(proxy): Extension<Arc<Proxy>>,
    caller: Caller,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    caller.require(&[Role::Agent], "use the model proxy")?;
    let up = proxy
        .http
        .get(proxy.url("/models"))
        .headers(upstream::request_headers(
            &headers,
            proxy.config.upstream_key.as_deref(),
        )?)
        .timeout(proxy.config.timeout)
        .send()
        .await
        .map_err(upstream::unreachable)?;
    let status = up.status();
    let h = upstream::response_headers(up.headers());
    let body = up.bytes().await.map_err(upstream::unreachable)?;
    Ok((status, h, body).into_response())
}
