//! The MCP gateway: airlock between an MCP client and an MCP server. `airlock mcp wrap` runs
//! [`relay`] over its own stdio and a child server's pipes. Tools the policy denies, tools of
//! undeclared servers and tools whose definition changed since it was pinned are hidden from
//! `tools/list` and their calls denied; every other call is decided by a [`Decider`] (the
//! approval broker, in process or in a running daemon) before the server sees it; results are
//! scanned for prompt injection. Malformed, oversized or ambiguous (duplicate-key) messages are
//! answered with JSON-RPC errors and never forwarded.
//!
//! A surface of its own: it decides through `Broker::decide_and_wait`, records scan verdicts
//! through `Broker::record_scan` and a sampling request's secrets through
//! `Broker::replace_secrets` (airlock-confirm), or through a daemon's REST API (the binary's
//! decider); `rmcp` is linked here and nowhere else in airlock.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod config;
pub mod core;
pub mod crisis;
pub mod describe;
pub mod frame;
pub mod gate;
pub mod http;
pub mod methods;
pub mod names;
pub mod notify;
pub mod output;
pub mod relay;
pub mod scan;
pub mod sdk;
mod strict;
pub mod tools;

pub use config::{InjectionMode, McpConfig, ServerConfig};
pub use core::{Core, Gateway, denied_result};
pub use gate::{
    BrokerDecider, Call, CallRuling, Decider, OutputCall, OutputRuling, ScanCall, Scanned,
    SecretsCall, SecretsRuling,
};
pub use relay::relay;
pub use strict::parse as parse_strict;
