//! What can go wrong before a module runs, each with the reason code it is reported under.

use airlock_core::ReasonCode;

/// An error before the module's code ran: the module, its imports, the entry point, the
/// directories. A module that ran and stopped is an [`crate::Ending`], not an error.
#[derive(Debug, thiserror::Error)]
pub enum WasmError {
    /// Not a WebAssembly module airlock runs: malformed, failing validation, too large, or
    /// using a feature airlock turns off.
    #[error("not a valid WebAssembly module: {0}")]
    InvalidModule(String),
    /// The module imports something airlock does not provide.
    #[error("{0}")]
    Import(String),
    /// The export to call is missing or not callable as asked.
    #[error("{0}")]
    Entry(String),
    /// A directory to preopen cannot be opened.
    #[error("the directory {path}: {source}")]
    Dir {
        path: String,
        source: std::io::Error,
    },
    /// A limit that makes no sense (zero fuel, zero memory, no time).
    #[error("{0}")]
    Limits(String),
    /// A bug in airlock (the interpreter refused what airlock set up).
    #[error("internal error: {0}")]
    Internal(String),
}

impl WasmError {
    /// The reason code this error is reported under; `None` for a usage error (bad limits)
    /// or a bug.
    pub fn reason(&self) -> Option<ReasonCode> {
        match self {
            WasmError::InvalidModule(_) | WasmError::Entry(_) => {
                Some(ReasonCode::WasmInvalidModule)
            }
            WasmError::Import(_) => Some(ReasonCode::WasmUnknownImport),
            WasmError::Dir { .. } => Some(ReasonCode::WasmCapabilityDenied),
            WasmError::Limits(_) | WasmError::Internal(_) => None,
        }
    }
}
