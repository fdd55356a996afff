//! Errors of loading a policy. Evaluation never fails: what cannot be decided denies.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{layer} policy {origin}: {message}")]
    Parse {
        layer: &'static str,
        origin: String,
        message: String,
    },
    #[error("{layer} policy {origin}: {message}")]
    Invalid {
        layer: &'static str,
        origin: String,
        message: String,
    },
    #[error("bad pattern {0}")]
    Pattern(String),
}
