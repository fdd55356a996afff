//! The client of a running `airlock serve`'s REST API, for one-shot commands (`airlock pending`,
//! `approve`, `deny`, `watch`, `airlock mcp`, the hook when the daemon is not plain HTTP on
//! loopback) and for `airlock-lab bench approvals`. Where the daemon is: `--url`/`AIRLOCK_URL`,
//! else the `serve.json` that `airlock serve` writes into the data directory while it runs
//! (`Endpoint::discover`). Which token: `--token`/`AIRLOCK_TOKEN`, else (agents only) the
//! `agent.token` file the daemon writes beside it, so hooks on the same machine work without
//! setup. An approver's token is never written to disk by airlock: the person passes it.
//!
//! Who answers: over plain HTTP, only a daemon that proves the data directory's `daemon.key`
//! (`airlock_hook::proof`): a first `/healthz` without any token must carry the proof before
//! a token is sent, and every answer after it must carry the proof of its own nonce. Over
//! HTTPS the server's certificate is the proof.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;

// Where the daemon is (`serve.json`, the agent token, the environment) is shared with the hook,
// which lives in the lean `airlock-hook` crate.
pub use airlock_hook::endpoint::{AGENT_TOKEN_FILE, Endpoint, SERVE_FILE, ServeInfo};
use airlock_hook::proof::{
    DAEMON_KEY_FILE, DaemonKey, HELLO_PATH, NONCE_HEADER, PROOF_HEADER, fresh_nonce,
};

/// Installs ring as rustls's crypto provider once (the daemon may sit behind TLS).
pub fn init_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// An error the daemon answered with: its HTTP status, stable code and message.
#[derive(Debug, Clone)]
pub struct DaemonRefusal {
    pub status: u16,
    pub code: String,
    pub message: String,
}

impl std::fmt::Display for DaemonRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.status, self.message)
    }
}

impl std::error::Error for DaemonRefusal {}

/// A thin JSON client for the REST API (cheap to clone: the connection pool is shared).
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    ep: Endpoint,
    /// The data directory the daemon's key was looked for in (named in errors).
    data_dir: PathBuf,
}

impl Client {
    /// A client of the daemon at `ep`, whose key was looked for in `data_dir`.
    pub fn new(ep: Endpoint, data_dir: &Path) -> Result<Client> {
        init_tls();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(3))
            .build()
            .context("building the HTTP client")?;
        Ok(Client {
            http,
            ep,
            data_dir: data_dir.to_path_buf(),
        })
    }

    pub fn url(&self) -> &str {
        &self.ep.url
    }

    pub async fn get(&self, path: &str, timeout: Duration) -> Result<Value> {
        self.send(self.http.get(self.at(path)), timeout).await
    }

    pub async fn post(&self, path: &str, body: &Value, timeout: Duration) -> Result<Value> {
        self.send(self.http.post(self.at(path)).json(body), timeout)
            .await
    }

    fn at(&self, path: &str) -> String {
        format!("{}{path}", self.ep.url)
    }

    /// The key answers must prove, `None` over HTTPS; an error for plain HTTP without one.
    fn key(&self) -> Result<Option<&DaemonKey>> {
        if self
            .ep
            .url
            .get(..8)
            .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
        {
            return Ok(None);
        }
        match &self.ep.key {
            Some(k) => Ok(Some(k)),
            None => bail!(
                "the daemon at {} cannot be verified: no {DAEMON_KEY_FILE} in {} (point --data-dir at the daemon's data directory, or use https)",
                self.ep.url,
                self.data_dir.display()
            ),
        }
    }

    /// Sends `req` (with a nonce when `key` is set) and returns the status and body, checking
    /// the proof.
    async fn exchange(
        &self,
        req: reqwest::RequestBuilder,
        key: Option<&DaemonKey>,
        timeout: Duration,
    ) -> Result<(u16, Vec<u8>)> {
        let nonce = match key {
            Some(_) => Some(fresh_nonce().map_err(|e| anyhow!("drawing a nonce: {e}"))?),
            None => None,
        };
        let req = match &nonce {
            Some(n) => req.header(NONCE_HEADER, n.as_str()),
            None => req,
        };
        let resp = req
            .timeout(timeout)
            .send()
            .await
            .with_context(|| format!("cannot reach the airlock daemon at {}", self.ep.url))?;
        let status = resp.status().as_u16();
        let proof = resp
            .headers()
            .get(PROOF_HEADER)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let bytes = resp.bytes().await.context("reading the daemon's answer")?;
        if let (Some(k), Some(n)) = (key, &nonce)
            && !k.check(n, status, &bytes, &proof)
        {
            bail!(
                "whatever answers at {} is not the airlock daemon of {}: its answer carries no valid proof of {DAEMON_KEY_FILE} (a serve.json left by a daemon that stopped, or another program on the port)",
                self.ep.url,
                self.data_dir.display()
            );
        }
        Ok((status, bytes.to_vec()))
    }

    async fn send(&self, req: reqwest::RequestBuilder, timeout: Duration) -> Result<Value> {
        let key = self.key()?;
        if let (Some(_), Some(_)) = (key, &self.ep.token) {
            // Nobody gets the token before proving the key on an answer that needed none. The
            // request follows at once, on the connection the pool just had back (each answer
            // after it is proved again).
            self.exchange(self.http.get(self.at(HELLO_PATH)), key, timeout)
                .await?;
        }
        let req = match &self.ep.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        };
        let (status, bytes) = self.exchange(req, key, timeout).await?;
        let value: Value = serde_json::from_slice(&bytes).map_err(|_| {
            anyhow!(
                "the daemon at {} answered HTTP {status} with something that is not JSON",
                self.ep.url
            )
        })?;
        if (200..300).contains(&status) {
            return Ok(value);
        }
        // the daemon's errors are `airlock_wire::ErrorBody`; anything else is a bare HTTP error
        let (code, message) = match serde_json::from_value::<airlock_wire::ErrorBody>(value) {
            Ok(b) => (b.error.code, b.error.message),
            Err(_) => ("HTTP_ERROR".to_string(), String::new()),
        };
        Err(DaemonRefusal {
            status,
            code,
            message,
        }
        .into())
    }
}

/// The hook's transport for a daemon its loopback client does not reach (TLS, another host):
/// this client, driven by a current-thread runtime per call.
pub struct BlockingClient {
    client: Client,
    rt: tokio::runtime::Runtime,
}

impl BlockingClient {
    pub fn new(ep: &Endpoint, data_dir: &Path) -> Result<BlockingClient> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(BlockingClient {
            client: Client::new(ep.clone(), data_dir)?,
            rt,
        })
    }
}

impl airlock_hook::http::Transport for BlockingClient {
    fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        timeout: Duration,
    ) -> Result<Value> {
        self.rt.block_on(async {
            match (method, body) {
                ("GET", None) => self.client.get(path, timeout).await,
                ("POST", Some(b)) => self.client.post(path, b, timeout).await,
                _ => bail!("unsupported request {method} {path}"),
            }
        })
    }
}
