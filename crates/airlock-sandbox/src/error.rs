//! Why a confinement could not be set up. Every error means "do not run the command".

use thiserror::Error;

#[derive(Debug, Error)]
pub enum SandboxError {
    /// The kernel offers no Landlock (or not the part a grant needs): refuse, never run
    /// unconfined.
    #[error("the kernel cannot confine the command: {0} (SANDBOX_UNAVAILABLE)")]
    Unavailable(String),
    /// A bad profile, path, limit or command.
    #[error("{0}")]
    Invalid(String),
    /// Setting up a restriction failed.
    #[error("{what}: {source}")]
    Setup {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

impl SandboxError {
    pub(crate) fn setup(what: impl Into<String>, source: impl Into<std::io::Error>) -> Self {
        SandboxError::Setup {
            what: what.into(),
            source: source.into(),
        }
    }
}
