//! `airlock-lab bench` (also run as `airlock bench`): whole-process and end-to-end measurements (in-process speed lives in
//! `cargo bench`).

use airlock_store::StoreOptions;
use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(clap::Subcommand)]
enum What {
    /// Whole-process latency of `airlock hook` against spawning /bin/true.
    Hook(hook::Args),
    /// Approve → waiting agent released, on one node and across two (PostgreSQL).
    Approvals(approvals::Args),
    /// Durable ledger appends/s, verifications/s, and inclusion-proof time in a 1M log.
    Ledger(ledger::Args),
    /// The OpenAI-compatible proxy: median added latency and throughput against the upstream.
    Proxy(proxy::Args),
}

pub mod approvals;
pub mod hook;
pub mod ledger;
pub mod proxy;

pub fn run(args: Args, store: &StoreOptions) -> Result<u8> {
    match args.what {
        What::Hook(a) => hook::run(a),
        What::Approvals(a) => approvals::run(a, store),
        What::Ledger(a) => ledger::run(a, store),
        What::Proxy(a) => proxy::run(a),
    }
}
