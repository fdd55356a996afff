//! The relay between an MCP client and the server behind the gateway, over two line-delimited
//! JSON-RPC streams. Every message is parsed and checked (size, duplicate keys, JSON-RPC shape)
//! before it goes anywhere; messages are forwarded byte for byte unless the gateway has a reason
//! to change them. These are looked at: `tools/list` answers (hidden and quarantined tools are
//! removed), `tools/call` requests (decided before the server sees them; a denial is answered
//! with an error result), `tools/call`, `resources/read` and `prompts/get` answers (scanned for
//! prompt injection) and the server's `sampling/createMessage` and `elicitation/create` requests
//! (scanned before the client sees them). rmcp's model types judge the shape of each of these.
//!
//! A hand-written relay rather than rmcp's client and server: rmcp types each message into its
//! own model, which drops or rewrites what it does not know (new protocol fields, `_meta`,
//! experimental methods), and its service loop answers requests itself. A firewall in the
//! middle must pass the client's and server's messages through unchanged and see every one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

use super::core::{Core, Gateway, denied_result, lock, log};
use super::frame::{self, Line, Message};
use super::gate::{CallRuling, Decider};
use super::methods;
use super::notify::{self, Note};
use super::scan;
use super::sdk;

/// How long a server may keep talking after the client has left.
const SERVER_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// JSON-RPC "invalid params".
pub const INVALID_PARAMS: i64 = -32602;

/// A request from the client the gateway waits to see answered.
enum Pending {
    List,
    /// A `tools/call` (of the named tool), `resources/read` or `prompts/get` whose answer is
    /// checked and scanned.
    Scan(scan::Kind, Option<String>),
    /// The gateway's own `tools/list`, sent when a call names a tool it has not seen listed.
    Own(oneshot::Sender<Value>),
}

struct Shared<D: Decider> {
    core: Core<D>,
    pending: Mutex<HashMap<String, Pending>>,
    to_client: mpsc::UnboundedSender<Vec<u8>>,
    /// Taken away when the client leaves, which closes the server's input.
    to_server: Mutex<Option<mpsc::UnboundedSender<Vec<u8>>>>,
}

fn key(id: &Value) -> String {
    id.to_string()
}

fn encode(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_else(|_| b"{}".to_vec())
}

/// Relays until the server's output ends (it exited) or the client's input ends and the
/// server's output then ends. Returns when nothing more can flow.
pub async fn relay<D, CI, CO, SI, SO>(
    gw: Gateway<D>,
    client_in: CI,
    client_out: CO,
    server_in: SI,
    server_out: SO,
) -> std::io::Result<()>
where
    D: Decider,
    CI: AsyncRead + Unpin + Send + 'static,
    CO: AsyncWrite + Unpin + Send + 'static,
    SI: AsyncWrite + Unpin + Send + 'static,
    SO: AsyncRead + Unpin + Send + 'static,
{
    let (to_client, client_rx) = mpsc::unbounded_channel();
    let (to_server, server_rx) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        core: Core::new(gw),
        pending: Mutex::new(HashMap::new()),
        to_client,
        to_server: Mutex::new(Some(to_server)),
    });
    let client_writer = tokio::spawn(write_lines(client_out, client_rx));
    let server_writer = tokio::spawn(write_lines(server_in, server_rx));
    let mut from_client = tokio::spawn(pump_client(shared.clone(), client_in));
    let from_server = pump_server(shared.clone(), server_out);
    tokio::pin!(from_server);
    let result = tokio::select! {
        r = &mut from_server => r,
        _ = &mut from_client => {
            // The client left and the server's input is closed: a server that does not exit
            // on that gets a grace period, then the relay ends (and the caller kills it).
            match tokio::time::timeout(SERVER_GRACE, &mut from_server).await {
                Ok(r) => r,
                Err(_) => Ok(()),
            }
        }
    };
    from_client.abort();
    server_writer.abort();
    // Let what is queued for the client go out; calls still waiting for a person hold the
    // queue open, so the wait is bounded.
    drop(shared);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), client_writer).await;
    result
}

async fn write_lines<W: AsyncWrite + Unpin>(
    mut w: W,
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
) -> std::io::Result<()> {
    while let Some(mut line) = rx.recv().await {
        line.push(b'\n');
        w.write_all(&line).await?;
        w.flush().await?;
    }
    w.shutdown().await
}

async fn pump_client<D: Decider>(s: Arc<Shared<D>>, input: impl AsyncRead + Unpin) {
    let max = s.core.gw.config.max_message;
    let mut r = BufReader::new(input);
    loop {
        let line = match frame::read_line(&mut r, max).await {
            Ok(Some(Line::Text(b))) => b,
            Ok(Some(Line::TooLong)) => {
                let _ = s
                    .to_client
                    .send(encode(&frame::too_large(max).to_response()));
                continue;
            }
            Ok(None) | Err(_) => break,
        };
        let msg = match frame::parse(&line, max) {
            Ok(m) => m,
            Err(refusal) => {
                let _ = s.to_client.send(encode(&refusal.to_response()));
                continue;
            }
        };
        match msg {
            Message::Request { id, method, .. } if !methods::known(&method) => {
                log(
                    &s.core.gw.server,
                    &format!("refused a request: {}", methods::refusal_message(&method)),
                );
                let e = frame::error_response(
                    &id,
                    methods::METHOD_NOT_FOUND,
                    &methods::refusal_message(&method),
                    methods::UNKNOWN,
                );
                let _ = s.to_client.send(encode(&e));
            }
            Message::Notification { method, .. } if !methods::known(&method) => {
                log(
                    &s.core.gw.server,
                    &format!(
                        "dropped a notification: {}",
                        methods::refusal_message(&method)
                    ),
                );
            }
            Message::Request { id, method, msg } if method == "tools/call" => {
                let s = s.clone();
                tokio::spawn(async move { gate_call(s, id, msg, line).await });
            }
            Message::Request { id, method, .. } => {
                if method == "tools/list" {
                    lock(&s.pending).insert(key(&id), Pending::List);
                } else if let Some(kind) = scan::Kind::of_method(&method) {
                    lock(&s.pending).insert(key(&id), Pending::Scan(kind, None));
                }
                let _ = s.send_server(line);
            }
            Message::Notification { .. } | Message::Response { .. } => {
                let _ = s.send_server(line);
            }
        }
    }
    // The client is gone: closing the server's input lets it exit.
    lock(&s.to_server).take();
}

impl<D: Decider> Shared<D> {
    /// Queues a line for the server; `false` once the client has left.
    fn send_server(&self, line: Vec<u8>) -> bool {
        lock(&self.to_server)
            .as_ref()
            .is_some_and(|tx| tx.send(line).is_ok())
    }
}

async fn pump_server<D: Decider>(
    s: Arc<Shared<D>>,
    output: impl AsyncRead + Unpin,
) -> std::io::Result<()> {
    let max = s.core.gw.config.max_message;
    let server = s.core.gw.server.clone();
    let mut r = BufReader::new(output);
    loop {
        let line = match frame::read_line(&mut r, max).await? {
            Some(Line::Text(b)) => b,
            Some(Line::TooLong) => {
                log(
                    &server,
                    &format!("dropped a message from the server larger than {max} bytes"),
                );
                continue;
            }
            None => return Ok(()),
        };
        let msg = match frame::parse(&line, max) {
            Ok(m) => m,
            Err(refusal) => {
                log(
                    &server,
                    &format!(
                        "dropped a malformed message from the server ({}: {})",
                        refusal.reason, refusal.message
                    ),
                );
                // A request of the client's that this was meant to answer gets an error
                // rather than silence.
                if !refusal.id.is_null() && lock(&s.pending).remove(&key(&refusal.id)).is_some() {
                    let e = frame::error_response(
                        &refusal.id,
                        -32603,
                        "the MCP server answered with a malformed message",
                        refusal.reason,
                    );
                    let _ = s.to_client.send(encode(&e));
                }
                continue;
            }
        };
        let (id, msg) = match msg {
            Message::Response { id, msg } => (id, msg),
            Message::Request { id, method, .. } if !methods::known(&method) => {
                log(
                    &server,
                    &format!(
                        "refused a request of the server: {}",
                        methods::refusal_message(&method)
                    ),
                );
                let e = frame::error_response(
                    &id,
                    methods::METHOD_NOT_FOUND,
                    &methods::refusal_message(&method),
                    methods::UNKNOWN,
                );
                let _ = s.send_server(encode(&e));
                continue;
            }
            Message::Notification { method, .. } if !methods::known(&method) => {
                log(
                    &server,
                    &format!(
                        "dropped a notification of the server: {}",
                        methods::refusal_message(&method)
                    ),
                );
                continue;
            }
            Message::Request { id, method, msg } => {
                // The server asks the client's model or user something: scanned first.
                match scan::Ask::of_method(&method) {
                    Some(ask) => match scan::request(&s.core, ask, &id, msg).await {
                        scan::ScanOutcome::Forward(None) => {
                            let _ = s.to_client.send(line);
                        }
                        scan::ScanOutcome::Forward(Some(changed)) => {
                            let _ = s.to_client.send(encode(&changed));
                        }
                        scan::ScanOutcome::Answer(answer) => {
                            let _ = s.send_server(encode(&answer));
                        }
                    },
                    None => {
                        let _ = s.to_client.send(line);
                    }
                }
                continue;
            }
            Message::Notification { method, msg } => {
                match notify::notification(&s.core, &method, &msg).await {
                    Note::Pass => {
                        let _ = s.to_client.send(line);
                    }
                    Note::Replace(changed) => {
                        let _ = s.to_client.send(encode(&changed));
                    }
                    Note::Drop => {}
                }
                continue;
            }
        };
        let pending = lock(&s.pending).remove(&key(&id));
        match pending {
            None => {
                let _ = s.to_client.send(line);
            }
            Some(Pending::Own(tx)) => {
                let _ = tx.send(msg);
            }
            Some(Pending::List) => {
                let out = s.core.filter_list(msg).await;
                let _ = s.to_client.send(encode(&out));
            }
            Some(Pending::Scan(kind, tool)) => {
                match scan::result(&s.core, kind, tool.as_deref(), msg).await {
                    Some(changed) => {
                        let _ = s.to_client.send(encode(&changed));
                    }
                    None => {
                        let _ = s.to_client.send(line);
                    }
                }
            }
        }
    }
}

async fn gate_call<D: Decider>(s: Arc<Shared<D>>, id: Value, msg: Value, line: Vec<u8>) {
    let (name, arguments) = match sdk::call_params(msg.get("params")) {
        Ok(p) => p,
        Err(why) => {
            log(
                &s.core.gw.server,
                &format!("refused a tools/call request: {why}"),
            );
            let _ = s
                .to_client
                .send(encode(&sdk::refused(&id, INVALID_PARAMS, &why)));
            return;
        }
    };
    let ruling = rule(&s, &name, arguments).await;
    match ruling {
        CallRuling::Allow => {
            lock(&s.pending).insert(key(&id), Pending::Scan(scan::Kind::Call, Some(name)));
            let _ = s.send_server(line);
        }
        CallRuling::Deny { code, message } => {
            log(
                &s.core.gw.server,
                &format!("denied a call of `{name}` ({code}: {message})"),
            );
            let _ = s
                .to_client
                .send(encode(&denied_result(&id, &code, &message)));
        }
    }
}

/// The tool's state, then the decider's ruling on the call.
async fn rule<D: Decider>(s: &Arc<Shared<D>>, name: &str, arguments: Value) -> CallRuling {
    let mut state = s.core.state(name);
    if state.is_none() {
        refresh(s).await;
        state = s.core.state(name);
    }
    match state {
        None => {
            return CallRuling::deny(
                "MCP_TOOL_UNLISTED",
                format!("the server does not list a tool named `{name}`"),
            );
        }
        Some(Err(h)) => {
            return CallRuling::Deny {
                code: h.code,
                message: h.message,
            };
        }
        Some(Ok(())) => {}
    }
    s.core.decide(name, arguments).await
}

/// Lists the server's tools itself (every page), so a call of a tool the client never listed
/// is still checked against its pin and the policy.
async fn refresh<D: Decider>(s: &Arc<Shared<D>>) {
    let mut cursor: Option<Value> = None;
    for _ in 0..100 {
        let n = s.core.next_seq();
        // Unlikely to be an id the client uses, so its answer is not taken for the client's.
        let id = json!(format!(
            "airlock-list-{}-{}-{n}",
            std::process::id(),
            nonce()
        ));
        let (tx, rx) = oneshot::channel();
        lock(&s.pending).insert(key(&id), Pending::Own(tx));
        let mut req = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}});
        if let Some(c) = &cursor {
            req["params"]["cursor"] = c.clone();
        }
        if !s.send_server(encode(&req)) {
            return;
        }
        let answer = match tokio::time::timeout(std::time::Duration::from_secs(30), rx).await {
            Ok(Ok(v)) => v,
            _ => {
                lock(&s.pending).remove(&key(&id));
                return;
            }
        };
        let answer = s.core.filter_list(answer).await;
        cursor = answer
            .get("result")
            .and_then(|r| r.get("nextCursor"))
            .filter(|c| !c.is_null())
            .cloned();
        if cursor.is_none() {
            return;
        }
    }
}

/// A random value per process (0 if the system has no randomness: the pid and sequence remain).
fn nonce() -> u64 {
    use std::sync::OnceLock;
    static NONCE: OnceLock<u64> = OnceLock::new();
    *NONCE.get_or_init(|| {
        let mut b = [0u8; 8];
        let _ = getrandom::fill(&mut b);
        u64::from_le_bytes(b)
    })
}
