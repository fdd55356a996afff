//! The store's error type.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    #[error(transparent)]
    Ledger(#[from] airlock_ledger::LedgerError),
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Config(String),
    #[error("the ledger writer has stopped")]
    Closed,
}

impl StoreError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        StoreError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
