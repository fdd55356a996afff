//! airlock's wire vocabulary: what crosses a process boundary and must read the same on both
//! sides — today the names agents give their shell tools and how a shell tool's command is
//! found in its arguments, shared by the hook, the proxy and the MCP gateway. Serde types and
//! constants only, so the lean hook binary can link it without growing.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod tools;

pub use tools::{SHELL_COMMAND_ARGUMENTS, SHELL_TOOLS, is_shell_tool, shell_command};
