//! airlock's wire vocabulary: what crosses a process boundary and must read the same on both
//! sides — what clients send ([`ActionRequest`], [`ScanRequest`], [`OutputRequest`],
//! [`PrivacyRequest`]) and the daemon's answers
//! ([`ActionAnswer`], [`ErrorBody`]), which the server and the hook, the CLI and the tests
//! share; the names agents give their shell tools and how a
//! shell tool's command is found in its arguments, shared by the hook, the proxy and the MCP
//! gateway. Serde types and constants only (over airlock-core's vocabulary, itself serde
//! only), so the lean hook binary can link it without growing.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod answer;
pub mod request;
pub mod tools;

pub use answer::{ActionAnswer, ActionStatus, ErrorBody, ErrorDetail};
pub use request::{
    ACTION_KINDS, ActionRequest, OutputRequest, PrivacyRequest, RequestError, ScanDirection,
    ScanRecord, ScanRequest,
};
pub use tools::{SHELL_COMMAND_ARGUMENTS, SHELL_TOOLS, is_shell_tool, shell_command};
