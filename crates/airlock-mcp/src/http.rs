//! `airlock mcp proxy`: the gateway over MCP's streamable HTTP transport. The client talks to
//! this server as if it were the upstream; each POSTed message is checked like on stdio
//! (bounded, no duplicate keys, JSON-RPC shape, rmcp's types for what the gateway acts on),
//! `tools/call` is decided before the upstream sees it (a denial is answered here with an error
//! result), and the upstream's answer to a `tools/list`, `tools/call`, `resources/read` or
//! `prompts/get` is filtered or scanned whether it comes as JSON or as an SSE stream. SSE streams
//! (POST answers and GET streams) are read event by event as they arrive: the server's
//! `sampling/createMessage` and `elicitation/create` requests on them are scanned, and one the
//! gateway answers itself is POSTed back to the upstream in the client's session. Everything
//! else (other messages, DELETE, the session headers) passes through unchanged. A call of a tool
//! never listed through the proxy is denied (`MCP_TOOL_UNLISTED`): the proxy does not list on
//! the client's behalf.

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::Value;

use super::core::{Core, denied_result, log};
use super::frame::{self, Message};
use super::gate::{CallRuling, Decider};
use super::methods;
use super::notify::{self, Note};
use super::scan;
use super::sdk;

/// Request and response headers that carry the transport's state.
const PASSED: [&str; 6] = [
    "accept",
    "content-type",
    "mcp-session-id",
    "mcp-protocol-version",
    "authorization",
    "last-event-id",
];

struct Proxy<D: Decider> {
    core: Core<D>,
    upstream: String,
    http: reqwest::Client,
}

/// What the proxy must do to the upstream's answer.
enum Expect {
    Pass,
    List(Value),
    /// A `tools/call` (of the named tool), `resources/read` or `prompts/get` whose answer is
    /// checked and scanned.
    Scan(Value, scan::Kind, Option<String>),
}

/// The proxy's routes: every path and method goes to `upstream`.
pub fn router<D: Decider>(core: Core<D>, upstream: String, http: reqwest::Client) -> Router {
    let p = Arc::new(Proxy {
        core,
        upstream,
        http,
    });
    Router::new().fallback(handle::<D>).with_state(p)
}

fn json_response(status: StatusCode, v: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        v.to_string(),
    )
        .into_response()
}

async fn handle<D: Decider>(
    State(p): State<Arc<Proxy<D>>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if method != Method::POST {
        return forward(&p, method, &headers, body, Expect::Pass).await;
    }
    let max = p.core.gw.config.max_message;
    let msg = match frame::parse(&body, max) {
        Ok(m) => m,
        Err(r) => {
            let status = if r.reason == "MCP_MESSAGE_TOO_LARGE" {
                StatusCode::PAYLOAD_TOO_LARGE
            } else {
                StatusCode::BAD_REQUEST
            };
            return json_response(status, &r.to_response());
        }
    };
    match &msg {
        Message::Request { method, .. } | Message::Notification { method, .. }
            if !methods::known(method) =>
        {
            let why = methods::refusal_message(method);
            log(&p.core.gw.server, &format!("refused a message: {why}"));
            let (status, id) = match &msg {
                Message::Request { id, .. } => (StatusCode::OK, id.clone()),
                _ => (StatusCode::BAD_REQUEST, Value::Null),
            };
            let e = frame::error_response(&id, methods::METHOD_NOT_FOUND, &why, methods::UNKNOWN);
            return json_response(status, &e);
        }
        _ => {}
    }
    let expect = match &msg {
        Message::Request { id, method, msg } if method == "tools/call" => {
            let (name, arguments) = match sdk::call_params(msg.get("params")) {
                Ok(p) => p,
                Err(why) => {
                    log(
                        &p.core.gw.server,
                        &format!("refused a tools/call request: {why}"),
                    );
                    let e = sdk::refused(id, super::relay::INVALID_PARAMS, &why);
                    return json_response(StatusCode::OK, &e);
                }
            };
            match rule(&p.core, &name, arguments).await {
                Ok(()) => Expect::Scan(id.clone(), scan::Kind::Call, Some(name)),
                Err((code, message)) => {
                    log(
                        &p.core.gw.server,
                        &format!("denied a call ({code}: {message})"),
                    );
                    return json_response(StatusCode::OK, &denied_result(id, &code, &message));
                }
            }
        }
        Message::Request { id, method, .. } if method == "tools/list" => Expect::List(id.clone()),
        Message::Request { id, method, .. } => match scan::Kind::of_method(method) {
            Some(kind) => Expect::Scan(id.clone(), kind, None),
            None => Expect::Pass,
        },
        _ => Expect::Pass,
    };
    forward(&p, method, &headers, body, expect).await
}

async fn rule<D: Decider>(
    core: &Core<D>,
    name: &str,
    arguments: Value,
) -> Result<(), (String, String)> {
    match core.state(name) {
        None => Err((
            "MCP_TOOL_UNLISTED".into(),
            format!("the tool `{name}` was not listed through airlock: list the tools first"),
        )),
        Some(Err(h)) => Err((h.code, h.message)),
        Some(Ok(())) => match core.decide(name, arguments).await {
            CallRuling::Allow => Ok(()),
            CallRuling::Deny { code, message } => Err((code, message)),
        },
    }
}

async fn forward<D: Decider>(
    p: &Arc<Proxy<D>>,
    method: Method,
    headers: &HeaderMap,
    body: Bytes,
    expect: Expect,
) -> Response {
    let mut req = p.http.request(method, &p.upstream);
    for name in PASSED {
        for v in headers.get_all(name) {
            req = req.header(name, v.as_bytes());
        }
    }
    let resp = match req.body(body).send().await {
        Ok(r) => r,
        Err(e) => {
            let id = match &expect {
                Expect::List(id) | Expect::Scan(id, ..) => id.clone(),
                Expect::Pass => Value::Null,
            };
            let v = frame::error_response(
                &id,
                -32603,
                &format!("the upstream MCP server cannot be reached: {e}"),
                "MCP_UPSTREAM_UNAVAILABLE",
            );
            return json_response(StatusCode::BAD_GATEWAY, &v);
        }
    };
    let status = StatusCode::from_u16(resp.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut out_headers = HeaderMap::new();
    for name in [
        "content-type",
        "mcp-session-id",
        "mcp-protocol-version",
        "cache-control",
    ] {
        for v in resp.headers().get_all(name) {
            if let Ok(v) = HeaderValue::from_bytes(v.as_bytes()) {
                out_headers.append(name, v);
            }
        }
    }
    let content_type = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if content_type.starts_with("text/event-stream") {
        // An event stream may carry the server's requests to the client before the answer
        // (a sampling request while a tool runs): each event is looked at as it arrives.
        let stream = sse_stream(p.clone(), headers.clone(), expect, resp);
        return (status, out_headers, Body::from_stream(stream)).into_response();
    }
    if matches!(expect, Expect::Pass) {
        let stream = resp
            .bytes_stream()
            .map(|r| r.map_err(std::io::Error::other));
        return (status, out_headers, Body::from_stream(stream)).into_response();
    }
    let bytes = match read_bounded(resp, 16 * p.core.gw.config.max_message).await {
        Ok(b) => b,
        Err(why) => {
            let id = match &expect {
                Expect::List(id) | Expect::Scan(id, ..) => id.clone(),
                Expect::Pass => Value::Null,
            };
            let v = frame::error_response(&id, -32603, &why, "MCP_UPSTREAM_INVALID");
            return json_response(StatusCode::BAD_GATEWAY, &v);
        }
    };
    let body = if content_type.starts_with("application/json") {
        match frame::parse(&bytes, 16 * p.core.gw.config.max_message) {
            Ok(Message::Response { msg, .. }) => {
                transform(p, &expect, msg).await.to_string().into_bytes()
            }
            _ => {
                let v = frame::error_response(
                    &Value::Null,
                    -32603,
                    "the upstream MCP server answered with a malformed message",
                    "MCP_UPSTREAM_INVALID",
                );
                return json_response(StatusCode::BAD_GATEWAY, &v);
            }
        }
    } else {
        bytes
    };
    (status, out_headers, body).into_response()
}

async fn read_bounded(resp: reqwest::Response, max: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| format!("reading the upstream's answer: {e}"))?;
        if out.len() + chunk.len() > max {
            return Err(format!("the upstream's answer is larger than {max} bytes"));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// The upstream's answer to the request the proxy is watching, filtered or scanned.
async fn transform<D: Decider>(p: &Proxy<D>, expect: &Expect, msg: Value) -> Value {
    match expect {
        Expect::List(id) if msg.get("id") == Some(id) => p.core.filter_list(msg).await,
        Expect::Scan(id, kind, tool) if msg.get("id") == Some(id) => {
            match scan::result(&p.core, *kind, tool.as_deref(), msg.clone()).await {
                Some(changed) => changed,
                None => msg,
            }
        }
        _ => msg,
    }
}

/// One SSE event (without its blank line) as the client gets it, blank line included; `None`
/// drops it (malformed, or a server request the gateway answered itself).
async fn event<D: Decider>(
    p: &Proxy<D>,
    expect: &Expect,
    headers: &HeaderMap,
    ev: &str,
) -> Option<String> {
    let mut data = Vec::new();
    let mut other = Vec::new();
    for line in ev.lines() {
        match line.strip_prefix("data:") {
            Some(d) => data.push(d.strip_prefix(' ').unwrap_or(d)),
            None => other.push(line),
        }
    }
    let joined = data.join("\n");
    if joined.trim().is_empty() {
        // Comments, retry hints and priming events carry no message.
        return Some(format!("{ev}\n\n"));
    }
    let max = 16 * p.core.gw.config.max_message;
    let rewritten = match frame::parse(joined.as_bytes(), max) {
        // Only the watched answer may change; every other event keeps its bytes.
        Ok(Message::Response { id, msg }) => match expect {
            Expect::List(want) if *want == id => Some(p.core.filter_list(msg).await),
            Expect::Scan(want, kind, tool) if *want == id => {
                scan::result(&p.core, *kind, tool.as_deref(), msg).await
            }
            _ => None,
        },
        Ok(Message::Request { id, method, .. }) if !methods::known(&method) => {
            let why = methods::refusal_message(&method);
            log(
                &p.core.gw.server,
                &format!("refused a request of the upstream: {why}"),
            );
            let e = frame::error_response(&id, methods::METHOD_NOT_FOUND, &why, methods::UNKNOWN);
            answer_upstream(p, headers, e);
            return None;
        }
        Ok(Message::Notification { method, .. }) if !methods::known(&method) => {
            log(
                &p.core.gw.server,
                &format!(
                    "dropped a notification of the upstream: {}",
                    methods::refusal_message(&method)
                ),
            );
            return None;
        }
        Ok(Message::Request { id, method, msg }) => match scan::Ask::of_method(&method) {
            Some(ask) => match scan::request(&p.core, ask, &id, msg).await {
                scan::ScanOutcome::Forward(changed) => changed,
                scan::ScanOutcome::Answer(answer) => {
                    answer_upstream(p, headers, answer);
                    return None;
                }
            },
            None => None,
        },
        Ok(Message::Notification { method, msg }) => {
            match notify::notification(&p.core, &method, &msg).await {
                Note::Pass => None,
                Note::Replace(changed) => Some(changed),
                Note::Drop => return None,
            }
        }
        Err(r) => {
            log(
                &p.core.gw.server,
                &format!(
                    "dropped a malformed SSE event from the upstream ({})",
                    r.reason
                ),
            );
            return None;
        }
    };
    let Some(v) = rewritten else {
        return Some(format!("{ev}\n\n"));
    };
    let mut out = String::new();
    for line in &other {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("data: ");
    out.push_str(&v.to_string());
    out.push_str("\n\n");
    Some(out)
}

/// How long to wait before each retry of an answer the upstream did not take.
const ANSWER_RETRIES: [std::time::Duration; 2] = [
    std::time::Duration::from_millis(100),
    std::time::Duration::from_millis(500),
];

/// Sends the gateway's answer to a server request to the upstream, in the client's session.
/// The server waits for it, so a failure that may pass (no connection, a 5xx, 429) is tried
/// again twice; a refusal (another 4xx) or a third failure is logged.
fn answer_upstream<D: Decider>(p: &Proxy<D>, headers: &HeaderMap, answer: Value) {
    let mut req = p
        .http
        .post(&p.upstream)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for name in ["mcp-session-id", "mcp-protocol-version", "authorization"] {
        for v in headers.get_all(name) {
            req = req.header(name, v.as_bytes());
        }
    }
    let req = req.body(answer.to_string());
    let server = p.core.gw.server.clone();
    tokio::spawn(async move {
        let mut waits = ANSWER_RETRIES.iter();
        loop {
            // A body of bytes can always be cloned; `None` would be a streamed body.
            let Some(attempt) = req.try_clone() else {
                log(
                    &server,
                    "airlock's answer to the upstream's request could not be sent",
                );
                return;
            };
            let problem = match attempt.send().await {
                Ok(r) if r.status().is_success() => return,
                Ok(r) => {
                    let st = r.status();
                    if !(st.is_server_error() || st == reqwest::StatusCode::TOO_MANY_REQUESTS) {
                        log(
                            &server,
                            &format!("the upstream refused airlock's answer to its request ({st})"),
                        );
                        return;
                    }
                    format!("the upstream answered {st}")
                }
                Err(e) => e.to_string(),
            };
            match waits.next() {
                Some(wait) => tokio::time::sleep(*wait).await,
                None => {
                    log(
                        &server,
                        &format!(
                            "airlock's answer to the upstream's request was not delivered after {} tries: {problem}",
                            ANSWER_RETRIES.len() + 1
                        ),
                    );
                    return;
                }
            }
        }
    });
}

/// The upstream's event stream, each event looked at as it completes (carriage returns
/// dropped: a JSON message carries none). An event longer than 16 × `max_message` ends it.
fn sse_stream<D: Decider>(
    p: Arc<Proxy<D>>,
    headers: HeaderMap,
    expect: Expect,
    resp: reqwest::Response,
) -> impl futures_util::Stream<Item = std::io::Result<Bytes>> + Send + 'static {
    struct St<D: Decider> {
        p: Arc<Proxy<D>>,
        headers: HeaderMap,
        expect: Expect,
        upstream: futures_util::stream::BoxStream<'static, reqwest::Result<Bytes>>,
        buf: Vec<u8>,
        done: bool,
    }
    let st = St {
        p,
        headers,
        expect,
        upstream: resp.bytes_stream().boxed(),
        buf: Vec::new(),
        done: false,
    };
    futures_util::stream::unfold(st, |mut st| async move {
        loop {
            if let Some(i) = st.buf.windows(2).position(|w| w == b"\n\n") {
                let ev: Vec<u8> = st.buf.drain(..i + 2).collect();
                let text = String::from_utf8_lossy(&ev[..i]).into_owned();
                if text.trim().is_empty() {
                    continue;
                }
                if let Some(out) = event(&st.p, &st.expect, &st.headers, &text).await {
                    return Some((Ok(Bytes::from(out)), st));
                }
                continue;
            }
            if st.done {
                if st.buf.is_empty() {
                    return None;
                }
                // An unfinished last event is no message: passed as it came.
                let rest = std::mem::take(&mut st.buf);
                return Some((Ok(Bytes::from(rest)), st));
            }
            match st.upstream.next().await {
                Some(Ok(chunk)) => {
                    st.buf.extend(chunk.iter().filter(|b| **b != b'\r'));
                    if st.buf.len() > 16 * st.p.core.gw.config.max_message {
                        log(
                            &st.p.core.gw.server,
                            "ended an upstream event stream: an event is too large",
                        );
                        st.done = true;
                        st.buf.clear();
                    }
                }
                Some(Err(e)) => {
                    st.done = true;
                    st.buf.clear();
                    return Some((Err(std::io::Error::other(e)), st));
                }
                None => st.done = true,
            }
        }
    })
}

/// The proxy's application, as [`router`] builds it.
pub type App = Router;

/// Serves `app` on `listener` until Ctrl-C or SIGTERM.
pub async fn serve(listener: tokio::net::TcpListener, app: App) -> std::io::Result<()> {
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let term = async {
                match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                    Ok(mut s) => {
                        s.recv().await;
                    }
                    Err(_) => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                () = term => {}
            }
        })
        .await
}
