//! Talking to a running `airlock serve` from one-shot commands (the hook, `airlock pending`,
//! `approve`, `deny`, `watch`). Where the daemon is: `--url`/`AIRLOCK_URL`, else the
//! `serve.json` that `airlock serve` writes into the data directory while it runs. Which token:
//! `--token`/`AIRLOCK_TOKEN`, else (agents only) the `agent.token` file the daemon writes beside
//! it, so hooks on the same machine work without setup. An approver's token is never written to
//! disk by airlock: the person passes it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The file `airlock serve` writes into the data directory while it runs.
pub const SERVE_FILE: &str = "serve.json";
/// The agent token of this machine's hooks (owner-only permissions).
pub const AGENT_TOKEN_FILE: &str = "agent.token";

/// What `serve.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServeInfo {
    pub url: String,
    pub pid: u32,
    pub node: String,
}

/// A daemon's address and the token to present.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub url: String,
    pub token: Option<String>,
}

impl Endpoint {
    /// The daemon for this data directory: explicit values first, then the environment, then
    /// the files the daemon wrote. `agent` also reads the machine's agent token file.
    pub fn discover(
        data_dir: &Path,
        url: Option<String>,
        token: Option<String>,
        agent: bool,
    ) -> Option<Endpoint> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let url = url.or_else(|| env("AIRLOCK_URL")).or_else(|| {
            let text = std::fs::read_to_string(data_dir.join(SERVE_FILE)).ok()?;
            serde_json::from_str::<ServeInfo>(&text).ok().map(|i| i.url)
        })?;
        let token = token.or_else(|| env("AIRLOCK_TOKEN")).or_else(|| {
            agent
                .then(|| std::fs::read_to_string(data_dir.join(AGENT_TOKEN_FILE)).ok())
                .flatten()
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
        });
        Some(Endpoint {
            url: url.trim_end_matches('/').to_string(),
            token,
        })
    }
}

/// Installs ring as rustls's crypto provider once (the daemon may sit behind TLS).
pub fn init_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// An error the daemon answered with: its HTTP status, stable code and message.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: u16,
    pub code: String,
    pub message: String,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.status, self.message)
    }
}

impl std::error::Error for ApiError {}

/// A thin JSON client for the REST API (cheap to clone: the connection pool is shared).
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    ep: Endpoint,
}

impl Client {
    pub fn new(ep: Endpoint) -> Result<Client> {
        init_tls();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(3))
            .build()
            .context("building the HTTP client")?;
        Ok(Client { http, ep })
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

    async fn send(&self, req: reqwest::RequestBuilder, timeout: Duration) -> Result<Value> {
        let req = match &self.ep.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        };
        let resp = req
            .timeout(timeout)
            .send()
            .await
            .with_context(|| format!("cannot reach the airlock daemon at {}", self.ep.url))?;
        let status = resp.status().as_u16();
        let bytes = resp.bytes().await.context("reading the daemon's answer")?;
        let value: Value = serde_json::from_slice(&bytes).map_err(|_| {
            anyhow!(
                "the daemon at {} answered HTTP {status} with something that is not JSON",
                self.ep.url
            )
        })?;
        if (200..300).contains(&status) {
            return Ok(value);
        }
        let err = &value["error"];
        Err(ApiError {
            status,
            code: err["code"].as_str().unwrap_or("HTTP_ERROR").to_string(),
            message: err["message"].as_str().unwrap_or("").to_string(),
        }
        .into())
    }
}

/// The data directory the global options select.
pub fn data_dir() -> PathBuf {
    crate::record::store_options().data_dir
}

/// The endpoint for a person's command: a URL and a token are both needed.
pub fn person_endpoint(url: Option<String>, token: Option<String>) -> Result<Endpoint> {
    let Some(ep) = Endpoint::discover(&data_dir(), url, token, false) else {
        bail!(
            "no airlock daemon found: start one with `airlock serve`, or pass --url (or set AIRLOCK_URL)"
        );
    };
    if ep.token.is_none() {
        bail!(
            "an approver token is needed: pass --token or set AIRLOCK_TOKEN (create one with `airlock token create --role approver`)"
        );
    }
    Ok(ep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_reads_the_files_the_daemon_wrote() {
        if std::env::var_os("AIRLOCK_URL").is_some() || std::env::var_os("AIRLOCK_TOKEN").is_some()
        {
            return; // the environment wins over the files; nothing to check here
        }
        let dir = tempfile::tempdir().unwrap();
        assert!(Endpoint::discover(dir.path(), None, None, true).is_none());
        let info = ServeInfo {
            url: "http://127.0.0.1:7373/".into(),
            pid: 1,
            node: "n".into(),
        };
        let info = serde_json::to_string(&info).unwrap();
        std::fs::write(dir.path().join(SERVE_FILE), info).unwrap();
        std::fs::write(dir.path().join(AGENT_TOKEN_FILE), "alk_secret\n").unwrap();
        let ep = Endpoint::discover(dir.path(), None, None, true).unwrap();
        assert_eq!(ep.url, "http://127.0.0.1:7373");
        assert_eq!(ep.token.as_deref(), Some("alk_secret"));
        let person = Endpoint::discover(dir.path(), None, None, false).unwrap();
        assert_eq!(
            person.token, None,
            "a person's command never picks up the agent token"
        );
        let explicit = Endpoint::discover(
            dir.path(),
            Some("http://h:1".into()),
            Some("t".into()),
            true,
        );
        let explicit = explicit.unwrap();
        assert_eq!(explicit.url, "http://h:1");
        assert_eq!(explicit.token.as_deref(), Some("t"));
    }
}
