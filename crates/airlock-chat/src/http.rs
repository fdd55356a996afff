//! The HTTP pieces the channels share: the client, the interaction endpoints' replay window and
//! header reading. reqwest is built without a default TLS crypto provider
//! (the workspace picks ring) and panics when a client is built without one, so ring's provider
//! is installed first (once per process; one installed by someone else is kept).

use std::time::Duration;

use axum::http::HeaderMap;

use crate::ChatError;

pub(crate) fn client(timeout: Duration) -> Result<reqwest::Client, ChatError> {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| ChatError::Config(format!("cannot build the HTTP client: {e}")))
}

/// Whether a signed request's timestamp `ts` (unix seconds, as the platform sent it) is within
/// `skew` of `now_s`: outside it a signature is refused, so a captured request cannot be
/// replayed later.
pub(crate) fn within_window(ts: &str, now_s: i64, skew: Duration) -> bool {
    ts.parse::<i64>()
        .is_ok_and(|t| now_s.abs_diff(t) <= skew.as_secs())
}

/// A request header as text; absent or not text reads as empty (and fails the checks after).
pub(crate) fn header<'h>(h: &'h HeaderMap, name: &str) -> &'h str {
    h.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
}
