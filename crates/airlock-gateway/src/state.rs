//! What every handler shares: the broker, token auth, settings, HTTP counters (and other
//! surfaces' counters for `/metrics`), and a shutdown
//! signal that ends long-polls and event streams so a graceful shutdown does not hang on them.

use std::net::SocketAddr;
use std::sync::Arc;

use airlock_confirm::Broker;
use tokio::sync::watch;

use crate::auth::Auth;
use crate::metrics::HttpMetrics;

/// The default port suggestion (browsers refuse some ports, 6000 among them).
pub const DEFAULT_PORT: u16 = 7373;
/// The default request body limit.
pub const DEFAULT_MAX_BODY: usize = 1024 * 1024;

/// Settings of the HTTP layer.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub listen: SocketAddr,
    /// The URL people reach the daemon at; `https://…` makes the login cookie `Secure`.
    pub public_url: Option<String>,
    /// Requests with a larger body are refused with 413 BODY_TOO_LARGE.
    pub max_body: usize,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)),
            public_url: None,
            max_body: DEFAULT_MAX_BODY,
        }
    }
}

impl ServeConfig {
    /// Whether the login cookie must be `Secure`.
    pub fn secure_cookie(&self) -> bool {
        self.public_url
            .as_deref()
            .is_some_and(|u| u.to_ascii_lowercase().starts_with("https://"))
    }
}

/// Prometheus text from a surface mounted beside the gateway.
pub type MetricSource = Arc<dyn Fn() -> String + Send + Sync>;

/// The handlers' shared state.
#[derive(Clone)]
pub struct AppState {
    pub broker: Broker,
    pub auth: Auth,
    pub config: Arc<ServeConfig>,
    pub metrics: Arc<HttpMetrics>,
    /// Prometheus lines of the surfaces mounted beside the gateway (the proxy's counters),
    /// appended to `/metrics`.
    pub metric_sources: Vec<MetricSource>,
    /// The key answers are proved with (`daemon.key`), when this gateway has one.
    pub answer_key: Option<Arc<airlock_hook::proof::DaemonKey>>,
    /// This machine's data directory, whose crisis marks (`airlock_hook::crisis`, kept by the
    /// hooks) an approver's clearing also removes.
    pub data_dir: Option<Arc<std::path::PathBuf>>,
    shutdown_tx: Arc<watch::Sender<bool>>,
    pub shutdown: watch::Receiver<bool>,
}

impl AppState {
    pub fn new(broker: Broker, auth: Auth, config: ServeConfig) -> AppState {
        let (tx, rx) = watch::channel(false);
        AppState {
            broker,
            auth,
            config: Arc::new(config),
            metrics: Arc::new(HttpMetrics::default()),
            metric_sources: Vec::new(),
            answer_key: None,
            data_dir: None,
            shutdown_tx: Arc::new(tx),
            shutdown: rx,
        }
    }

    /// Appends another surface's Prometheus lines to `/metrics`.
    pub fn with_metrics(mut self, source: MetricSource) -> AppState {
        self.metric_sources.push(source);
        self
    }

    /// Proves every answer to a request that carries a nonce with `key` (see `proof`).
    pub fn with_answer_key(mut self, key: airlock_hook::proof::DaemonKey) -> AppState {
        self.answer_key = Some(Arc::new(key));
        self
    }

    /// The data directory of this machine's hooks (see `data_dir`).
    pub fn with_data_dir(mut self, dir: std::path::PathBuf) -> AppState {
        self.data_dir = Some(Arc::new(dir));
        self
    }

    /// Ends long-polls and event streams (called when the server shuts down).
    pub fn begin_shutdown(&self) {
        self.shutdown_tx.send_replace(true);
    }

    /// Resolves once shutdown has begun.
    pub async fn shutting_down(&self) {
        let mut rx = self.shutdown.clone();
        // An error means the sender is gone, which also means shutting down.
        let _ = rx.wait_for(|v| *v).await;
    }
}
