//! The HTTP client the channels share. reqwest is built without a default TLS crypto provider
//! (the workspace picks ring) and panics when a client is built without one, so ring's provider
//! is installed first (once per process; one installed by someone else is kept).

use std::time::Duration;

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
