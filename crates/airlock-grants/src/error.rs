//! Errors, each with a stable reason code.

use airlock_core::ReasonCode;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum GrantError {
    /// The scope is over-broad and the caller did not pass `allow_broad`.
    #[error("{0} (GRANT_SCOPE_TOO_BROAD; only the admin policy layer can allow it)")]
    TooBroad(String),
    /// A forwarded grant would be wider than its parent.
    #[error("{0} (DELEGATION_SCOPE_VIOLATION)")]
    Delegation(String),
    /// The grant exists but is proposed, revoked, expired or used up (or an ancestor is).
    #[error("grant {id} cannot be used: {why} (GRANT_NOT_USABLE)")]
    NotUsable { id: String, why: String },
    #[error("no grant {0} (GRANT_NOT_FOUND)")]
    NotFound(String),
    /// A malformed request or stored grant.
    #[error("{0} (GRANT_INVALID)")]
    Invalid(String),
    #[error("{0}")]
    Internal(String),
    #[cfg(feature = "store")]
    #[error(transparent)]
    Store(#[from] airlock_store::StoreError),
}

impl GrantError {
    /// The stable reason code.
    pub fn code(&self) -> ReasonCode {
        match self {
            GrantError::TooBroad(_) => ReasonCode::GrantScopeTooBroad,
            GrantError::Delegation(_) => ReasonCode::DelegationScopeViolation,
            GrantError::NotUsable { .. } => ReasonCode::GrantNotUsable,
            GrantError::NotFound(_) => ReasonCode::GrantNotFound,
            GrantError::Invalid(_) => ReasonCode::GrantInvalid,
            GrantError::Internal(_) => ReasonCode::InternalError,
            #[cfg(feature = "store")]
            GrantError::Store(_) => ReasonCode::InternalError,
        }
    }
}
