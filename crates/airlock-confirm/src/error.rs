//! The broker's errors, each with a stable code the gateway maps to an HTTP status.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum ConfirmError {
    /// The principal may not do this (an agent token, the approval's own agent).
    #[error("forbidden: {0}")]
    Forbidden(String),
    #[error("no approval {0}")]
    NotFound(String),
    /// The approval was already decided (or is decided by someone else at the same time).
    #[error("approval {id} is already {status}")]
    AlreadyDecided { id: String, status: String },
    /// The answer names another action than the approval's.
    #[error("the answer is for action {given}, but approval {id} is for {expected}")]
    ActionMismatch {
        id: String,
        expected: String,
        given: String,
    },
    /// A tier-4 approval needs the deliberate code shown to approvers.
    #[error("approval {0} needs its confirmation code, and the code given is missing or wrong")]
    BadCode(String),
    /// Too many wrong codes: the approval is locked out (denied) and no code opens it.
    #[error(
        "approval {0} is locked out after {max} wrong confirmation codes: the action is denied",
        max = crate::code::MAX_CODE_ATTEMPTS
    )]
    CodeLockout(String),
    /// A link that is unknown, forged, expired or already used.
    #[error("the link is not valid: {0}")]
    BadLink(String),
    #[error("invalid request: {0}")]
    Invalid(String),
    #[error("store: {0}")]
    Store(#[from] airlock_store::StoreError),
    #[error("grant: {0}")]
    Grant(#[from] airlock_grants::GrantError),
    #[error("ledger: {0}")]
    Ledger(#[from] airlock_ledger::LedgerError),
    #[error("internal error: {0}")]
    Internal(String),
}

impl ConfirmError {
    /// Stable reason code (the gateway's `error.code`).
    pub fn code(&self) -> &'static str {
        match self {
            ConfirmError::Forbidden(_) => "FORBIDDEN",
            ConfirmError::NotFound(_) => "NOT_FOUND",
            ConfirmError::AlreadyDecided { .. } => "ALREADY_DECIDED",
            ConfirmError::ActionMismatch { .. } => "ACTION_MISMATCH",
            ConfirmError::BadCode(_) => "BAD_CODE",
            ConfirmError::CodeLockout(_) => "CODE_LOCKOUT",
            ConfirmError::BadLink(_) => "BAD_LINK",
            ConfirmError::Invalid(_) => "INVALID_REQUEST",
            ConfirmError::Store(_) => "STORE_ERROR",
            ConfirmError::Grant(_) => "GRANT_ERROR",
            ConfirmError::Ledger(_) => "LEDGER_ERROR",
            ConfirmError::Internal(_) => "INTERNAL_ERROR",
        }
    }
}
