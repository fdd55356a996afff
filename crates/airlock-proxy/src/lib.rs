//! The OpenAI-compatible proxy: `POST /v1/chat/completions` (streamed and not) and
//! `GET /v1/models`, forwarded to a configured upstream. The tool calls in the model's answers
//! are decided by the approval broker before the agent sees them: allowed calls pass unchanged,
//! blocked ones are removed and explained in the assistant's text, asks hold the answer until a
//! person (or the timeout) decides. Fields the proxy does not know pass byte for byte: an
//! answer without a blocked call is the upstream's bytes.
//!
//! The client authenticates with an airlock agent token (`Authorization: Bearer alk_…`, which
//! is what an OpenAI SDK sends as its API key); the upstream's key comes from the proxy's
//! configuration and never from the client.
//!
//! The proxy is a surface of its own: it decides through `Broker::decide_and_wait` and records
//! its events through `Broker::record_event` (airlock-confirm), authenticates with the
//! gateway's tokens, and [`routes`] are mounted beside the gateway's by the binary
//! (`airlock_gateway::router_with`); the gateway does not know it.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod budget;
mod clean;
pub mod config;
mod contract;
pub mod crisis;
mod crisis_reply;
mod gate;
mod handler;
mod inbound;
mod object;
pub mod privacy;
pub mod record;
pub mod request;
pub mod rewrite;
mod sse;
mod stream;
pub mod toolmap;
mod upstream;

use std::sync::Arc;

use airlock_confirm::Broker;
use airlock_gateway::{AppState, MetricSource};
use axum::Router;
use axum::extract::{DefaultBodyLimit, Extension};
use axum::routing::{get, post};

pub use config::{Budget, ProxyConfig, ProxySettings, TextAction};
pub use gate::{Call, CallVerdict, Who};
pub use upstream::SESSION_HEADER;

/// The proxy: its settings, the broker that decides, and the upstream client.
pub struct Proxy {
    pub config: ProxyConfig,
    pub(crate) broker: Broker,
    pub(crate) http: reqwest::Client,
    /// Background receipt appends that failed (clean inbound verdicts), for `/metrics`.
    pub(crate) receipts_failed: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Where clean inbound verdicts wait to be recorded together.
    pub(crate) clean: clean::CleanLog,
    /// The outbound privacy filter (`None`: turned off).
    pub(crate) privacy: Option<Arc<privacy::Filter>>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("upstream", &self.config.upstream)
            .finish()
    }
}

impl Proxy {
    pub fn new(broker: Broker, config: ProxyConfig) -> Result<Proxy, String> {
        let http = upstream::client(&config)?;
        let privacy = privacy::Filter::new(&config.privacy)?.map(Arc::new);
        let receipts_failed: Arc<std::sync::atomic::AtomicU64> = Default::default();
        let clean =
            clean::CleanLog::new(broker.clone(), config.clean_window, receipts_failed.clone());
        Ok(Proxy {
            config,
            broker,
            http,
            receipts_failed,
            clean,
            privacy,
        })
    }

    /// Records every clean inbound verdict still waiting for its window, and returns when they
    /// are in the ledger (or failed); for a daemon that stops.
    pub async fn flush(&self) {
        self.clean.flush().await;
    }

    /// Prometheus lines for the proxy's own counters.
    pub fn to_prometheus(&self) -> String {
        format!(
            "# HELP airlock_proxy_receipts_failed_total Background receipt appends of the proxy that failed.\n# TYPE airlock_proxy_receipts_failed_total counter\nairlock_proxy_receipts_failed_total {}\n",
            self.receipts_failed
                .load(std::sync::atomic::Ordering::Relaxed)
        )
    }
}

/// The proxy's routes, as (method, path).
pub const ROUTES: &[(&str, &str)] = &[("POST", "/v1/chat/completions"), ("GET", "/v1/models")];

/// The proxy's routes (with its own body limit), to mount beside the gateway's.
pub fn routes(proxy: Arc<Proxy>) -> Router<AppState> {
    let limit = DefaultBodyLimit::max(proxy.config.max_body);
    Router::new()
        .route(
            "/v1/chat/completions",
            post(handler::chat_completions).layer(limit),
        )
        .route("/v1/models", get(handler::models))
        .layer(Extension(proxy))
}

/// The proxy's counters as a source for the gateway's `/metrics`.
pub fn metrics(proxy: Arc<Proxy>) -> MetricSource {
    Arc::new(move || proxy.to_prometheus())
}

/// Serves the gateway with the proxy mounted beside it (its routes and its counters in
/// `/metrics`) on `listener` until `shutdown` resolves: what `airlock serve` composes, for
/// tests and benchmarks.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    proxy: Arc<Proxy>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), airlock_gateway::GatewayError> {
    let state = state.with_metrics(metrics(proxy.clone()));
    airlock_gateway::serve_with_routes(listener, state, routes(proxy), shutdown).await
}
