//! The ledger's error type. Every variant names what is wrong and, where there is one, which
//! receipt, checkpoint or registry event is at fault, so `airlock ledger verify` can print it.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum LedgerError {
    #[error("malformed {what}: {detail}")]
    Malformed { what: &'static str, detail: String },
    #[error("{what} is not in canonical (RFC 8785) form")]
    NotCanonical { what: &'static str },
    #[error("{what} is larger than the {limit}-byte limit")]
    TooLarge { what: &'static str, limit: usize },
    #[error("receipt {id}: {detail}")]
    BadReceipt { id: String, detail: String },
    #[error("checkpoint at size {size}: {detail}")]
    BadCheckpoint { size: u64, detail: String },
    #[error("registry event {seq}: {detail}")]
    BadRegistryEvent { seq: u64, detail: String },
    #[error("key {key_id}: {detail}")]
    Key { key_id: String, detail: String },
    #[error("proof: {0}")]
    BadProof(String),
    /// The log does not extend a tree head a witness kept: it was cut or rewritten.
    #[error(
        "the log does not extend the tree head witnessed for {size} receipts at {time}: {detail}"
    )]
    Witness {
        size: u64,
        time: String,
        detail: String,
    },
    #[error("evidence pack: {0}")]
    BadPack(String),
    #[error("no randomness available: {0}")]
    Random(String),
}

impl LedgerError {
    pub(crate) fn malformed(what: &'static str, detail: impl ToString) -> Self {
        LedgerError::Malformed {
            what,
            detail: detail.to_string(),
        }
    }

    pub(crate) fn receipt(id: &str, detail: impl Into<String>) -> Self {
        LedgerError::BadReceipt {
            id: id.to_string(),
            detail: detail.into(),
        }
    }
}
