//! Talking to the upstream: which of the client's headers travel on (not airlock's token, not
//! hop-by-hop headers, not `Accept-Encoding`, since the proxy must read the answer), the
//! upstream's own key, and which of its response headers come back.

use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use reqwest::Client;

use super::Proxy;
use airlock_gateway::ApiError;

/// The header a client names its session with (default session: `proxy`).
pub const SESSION_HEADER: &str = "x-airlock-session";

/// Headers that describe one hop, or that the proxy sets itself.
fn hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "host"
            | "authorization"
            | "content-length"
            | "transfer-encoding"
            | "connection"
            | "keep-alive"
            | "proxy-authorization"
            | "proxy-connection"
            | "te"
            | "trailer"
            | "upgrade"
            | "accept-encoding"
            | "cookie"
            | SESSION_HEADER
    )
}

/// The client's headers as they go upstream, with the upstream key when one is configured.
pub fn request_headers(client: &HeaderMap, key: Option<&str>) -> Result<HeaderMap, ApiError> {
    let mut out = HeaderMap::new();
    for (k, v) in client {
        if !hop(k) {
            out.append(k.clone(), v.clone());
        }
    }
    if let Some(key) = key {
        let v = HeaderValue::from_str(&format!("Bearer {key}"))
            .map_err(|_| ApiError::internal("the upstream key is not a valid header value"))?;
        out.insert(header::AUTHORIZATION, v);
    }
    Ok(out)
}

/// The upstream's response headers as they go back to the client (the body's length is the
/// proxy's to set).
pub fn response_headers(up: &reqwest::header::HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::new();
    for (k, v) in up {
        if !hop(k) && k != header::CONTENT_ENCODING {
            out.append(k.clone(), v.clone());
        }
    }
    out
}

/// The HTTP client the proxy uses for the upstream.
pub fn client(p: &super::ProxyConfig) -> Result<Client, String> {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race against another installer is fine: a provider is installed either way.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .read_timeout(p.timeout)
        .pool_max_idle_per_host(64)
        .build()
        .map_err(|e| format!("cannot build the upstream HTTP client: {e}"))
}

impl Proxy {
    /// `{upstream}{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.config.upstream)
    }
}

/// The upstream could not be reached or failed mid-answer.
pub fn unreachable(e: reqwest::Error) -> ApiError {
    tracing::warn!(error = %e, "the upstream failed");
    ApiError::new(
        axum::http::StatusCode::BAD_GATEWAY,
        "UPSTREAM_UNREACHABLE",
        "the upstream model API could not be reached or failed; nothing was forwarded to the agent",
    )
}
