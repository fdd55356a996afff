//! End-to-end tests of the `airlock` binary, one module per subcommand.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod check;
mod grant;
mod hook;
mod hook_sandbox;
mod hook_shell;
mod lab;
mod lean_hook;
mod ledger;
mod mcp_py;
mod mcp_wrap;
mod output;
mod policy;
mod proxy;
mod run;
mod scan;
mod serve;
mod tool;
