//! airlock's WASM tools. A tool is a WebAssembly module run by an interpreter (`wasmi`, no JIT)
//! inside limits airlock enforces: fuel (about one unit per instruction), a cap on linear
//! memory and tables, a wall-clock limit, a cap on output and on bytes written to files. Its
//! only view of the host is a minimal WASI preview 1 written here ([`wasi`]): arguments, an
//! environment that is empty unless given, clocks, random bytes, standard streams, and files
//! under the directories it was given, read-only unless a write was granted. Paths are
//! resolved by the kernel beneath each directory (`openat2` with `RESOLVE_BENEATH`), so no
//! spelling of a path (`..`, absolute, a symbolic link) leaves it.
//!
//! Every way a run ends is an [`Ending`]: the module's exit code, or a stop with a
//! [`airlock_core::ReasonCode`] (`WASM_OUT_OF_FUEL`, `WASM_MEMORY_LIMIT`, `WASM_TIMEOUT`,
//! `WASM_OUTPUT_LIMIT`, `WASM_TRAP`). A module refused before it runs is a [`WasmError`]
//! (`WASM_INVALID_MODULE`, `WASM_UNKNOWN_IMPORT`). [`toolbox`] and [`mcp`] expose a directory of
//! such tools as an MCP server.
//!
//! This crate does not know about grants or protected paths: the caller (the `airlock tool`
//! command) decides which directories a run gets and whether it may write there.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod error;
mod limits;
pub mod mcp;
mod module;
mod run;
pub mod toolbox;
pub mod wasi;

pub use error::WasmError;
pub use limits::Limits;
pub use module::{Entry, Loaded, load};
pub use run::{Ending, Invocation, Outcome, Output};
pub use wasi::fds::Preopen;

/// Loads and runs `bytes` in one step; the load counts against the time limit.
pub fn run(bytes: &[u8], inv: Invocation, limits: &Limits) -> Result<Outcome, WasmError> {
    let started = std::time::Instant::now();
    load(bytes, limits)?.run(inv, limits, started)
}
