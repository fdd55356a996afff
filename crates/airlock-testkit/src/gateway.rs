//! A real gateway over a real broker (SQLite in a temporary directory, or a fresh PostgreSQL
//! schema), served on 127.0.0.1:0, and a reqwest client: the gateway's own tests use it, and so
//! do the tests of every surface that asks a daemon (the MCP gateway's). Feature `gateway`.

use std::net::SocketAddr;
use std::sync::Arc;

use airlock_confirm::{Broker, BrokerConfig, PolicyProvider};
use airlock_gateway::{AppState, Auth, Role, ServeConfig};
use airlock_grants::{GrantBook, GrantConfig};
use airlock_policy::Policy;
use airlock_store::{Ledger, LedgerConfig, StoreOptions};
use serde_json::Value;

pub use crate::PgSchema;

pub struct Server {
    pub url: String,
    pub addr: SocketAddr,
    pub broker: Broker,
    pub auth: Auth,
    pub agent: String,
    pub approver: String,
    pub admin: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    _dir: Option<tempfile::TempDir>,
    _pg: Option<PgSchema>,
}

pub fn builtin_policy() -> PolicyProvider {
    let p = Arc::new(Policy::builtin().unwrap());
    Arc::new(move |_| Ok(p.clone()))
}

pub async fn start() -> Server {
    start_on(None, DEFAULT_MAX).await
}

pub const DEFAULT_MAX: usize = 1024 * 1024;

/// Starts a gateway; `pg` selects PostgreSQL.
pub async fn start_on(pg: Option<PgSchema>, max_body: usize) -> Server {
    start_with(builtin_policy(), pg, max_body).await
}

/// The built-in policy with a user layer (TOML) on top.
pub fn policy_with(user_toml: &str) -> PolicyProvider {
    let layer =
        airlock_policy::Layer::from_str(airlock_policy::LayerKind::User, "<test>", user_toml, None)
            .unwrap();
    let p = Arc::new(Policy::from_layers(vec![layer]).unwrap());
    Arc::new(move |_| Ok(p.clone()))
}

/// Starts a gateway over `policy`.
pub async fn start_with(policy: PolicyProvider, pg: Option<PgSchema>, max_body: usize) -> Server {
    start_full(policy, BrokerConfig::default(), pg, max_body).await
}

/// Starts a gateway over `policy` and a broker set up with `config` (its public URL is set to
/// the server's address).
pub async fn start_full(
    policy: PolicyProvider,
    mut config: BrokerConfig,
    pg: Option<PgSchema>,
    max_body: usize,
) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    config.public_url = Some(format!("http://{addr}"));
    let dir = tempfile::tempdir().unwrap();
    let opts = StoreOptions::new(dir.path()).with_database(pg.as_ref().map(|p| p.url.clone()));
    launch(listener, policy, config, opts, Some(dir), pg, max_body).await
}

/// Another node on the database `url` (whose schema some other server owns), with the
/// store's files in `data_dir`.
pub async fn start_node(url: &str, data_dir: &std::path::Path, node: &str) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = BrokerConfig {
        node: node.to_string(),
        public_url: Some(format!("http://{addr}")),
        ..BrokerConfig::default()
    };
    let opts = StoreOptions::new(data_dir).with_database(Some(url.to_string()));
    launch(
        listener,
        builtin_policy(),
        config,
        opts,
        None,
        None,
        DEFAULT_MAX,
    )
    .await
}

async fn launch(
    listener: tokio::net::TcpListener,
    policy: PolicyProvider,
    config: BrokerConfig,
    opts: StoreOptions,
    dir: Option<tempfile::TempDir>,
    pg: Option<PgSchema>,
    max_body: usize,
) -> Server {
    let addr = listener.local_addr().unwrap();
    let ledger = Ledger::open(&opts, LedgerConfig::default()).await.unwrap();
    let db = ledger.db().clone();
    let book = GrantBook::new(db.clone(), GrantConfig::default());
    let broker = Broker::start(ledger, book, policy, config).await.unwrap();
    // Live tokens remembered far longer than any test: a revocation through the API must
    // still apply at once (tests/api.rs checks it), as it does in `airlock serve`.
    let auth = Auth::new(db).with_token_cache(std::time::Duration::from_secs(60));
    let agent = auth.create("agent-1", Role::Agent).await.unwrap().secret;
    let approver = auth.create("alice", Role::Approver).await.unwrap().secret;
    let admin = auth.create("root", Role::Admin).await.unwrap().secret;
    let config = ServeConfig {
        listen: addr,
        public_url: Some(format!("http://{addr}")),
        max_body,
    };
    let state = AppState::new(broker.clone(), auth.clone(), config);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        airlock_gateway::serve_with(listener, state, async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    Server {
        url: format!("http://{addr}"),
        addr,
        broker,
        auth,
        agent,
        approver,
        admin,
        stop: Some(stop),
        task: Some(task),
        _dir: dir,
        _pg: pg,
    }
}

impl Server {
    /// Stops the server and waits until it has (long-polls and streams end at once), then
    /// the broker, which closes the ledger once this is its last handle.
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            tokio::time::timeout(std::time::Duration::from_secs(10), t)
                .await
                .expect("the server did not stop within 10 s")
                .unwrap();
        }
        let Server {
            broker, _dir, _pg, ..
        } = self;
        broker.shutdown().await;
        drop((_dir, _pg));
    }

    /// The PostgreSQL URL this server owns, if any.
    pub fn pg_url(&self) -> Option<String> {
        self._pg.as_ref().map(|p| p.url.clone())
    }

    pub fn data_dir(&self) -> Option<&std::path::Path> {
        self._dir.as_ref().map(|d| d.path())
    }

    pub fn u(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    /// Receipts recorded so far, decoded.
    pub async fn receipts(&self) -> Vec<Value> {
        let rows = self
            .broker
            .ledger()
            .db()
            .receipts(0, 100_000)
            .await
            .unwrap();
        rows.iter()
            .map(|r| serde_json::from_str(&r.body).unwrap())
            .collect()
    }
}

pub fn client() -> reqwest::Client {
    // reqwest is built without a TLS provider of its own; these tests speak plain HTTP, but a
    // client cannot be built without one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Sends JSON with a bearer token; returns the status and the body as JSON (Null if empty).
pub async fn call(
    c: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let mut rb = c.request(method, url);
    if let Some(t) = token {
        rb = rb.bearer_auth(t);
    }
    if let Some(b) = body {
        rb = rb
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&b).unwrap());
    }
    let resp = rb.send().await.unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    let v = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    (status, v)
}

pub async fn post(c: &reqwest::Client, url: &str, token: &str, body: Value) -> (u16, Value) {
    call(c, reqwest::Method::POST, url, Some(token), Some(body)).await
}

pub async fn get(c: &reqwest::Client, url: &str, token: &str) -> (u16, Value) {
    call(c, reqwest::Method::GET, url, Some(token), None).await
}

/// A shell action that the built-in policy holds for a person (a force push).
pub fn asking(session: &str) -> Value {
    serde_json::json!({"kind": "shell", "command": "git push --force origin main", "session": session})
}

/// `application/x-www-form-urlencoded` bodies (reqwest is built without its `form` feature).
pub trait FormExt {
    fn form_body(self, pairs: &[(&str, &str)]) -> Self;
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            b' ' => "+".to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl FormExt for reqwest::RequestBuilder {
    fn form_body(self, pairs: &[(&str, &str)]) -> Self {
        let body: Vec<String> = pairs
            .iter()
            .map(|(k, v)| format!("{}={}", urlencode(k), urlencode(v)))
            .collect();
        self.header("content-type", "application/x-www-form-urlencoded")
            .body(body.join("&"))
    }
}
