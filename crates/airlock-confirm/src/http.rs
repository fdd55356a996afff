//! The HTTP client for the LLM reviewer and the webhook. reqwest is built without a default TLS
//! crypto provider (the workspace picks ring) and panics when a client is built without one,
//! even for plain HTTP, so ring's provider is installed first (once per process; a provider
//! someone else installed already is kept).

use std::time::Duration;

pub(crate) fn client(timeout: Duration) -> Result<reqwest::Client, String> {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race against another installer is fine: a provider is installed either way.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    reqwest::Client::builder()
        .timeout(timeout)
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}
