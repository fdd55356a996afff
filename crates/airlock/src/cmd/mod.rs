//! One module per subcommand. Each exposes `Args` (clap) and `run(Args) -> anyhow::Result<u8>`
//! returning the process exit code.

pub mod approvals;
pub mod check;
pub mod crisis;
pub mod grant;
pub mod hook;
pub mod lab;
pub mod ledger;
pub mod mcp;
pub mod policy;
pub mod proxy;
pub mod run;
pub mod scan;
pub mod serve;
pub mod stats;
pub mod token;
pub mod tool;

/// Exit codes shared by `check` and friends (documented in the README).
pub const EXIT_ALLOW: u8 = 0;
pub const EXIT_DENY: u8 = 1;
pub const EXIT_ASK: u8 = 2;
pub const EXIT_ERROR: u8 = 3;

/// Maps a decision to its exit code.
pub fn exit_code(d: airlock_core::Decision) -> u8 {
    match d {
        airlock_core::Decision::Allow => EXIT_ALLOW,
        airlock_core::Decision::Deny => EXIT_DENY,
        airlock_core::Decision::Ask => EXIT_ASK,
    }
}
