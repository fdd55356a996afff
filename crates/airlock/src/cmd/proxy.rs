//! `airlock proxy --listen ADDR:PORT --upstream URL [--config FILE]`: the OpenAI-compatible
//! proxy on its own port, without taking over the daemon's `serve.json`. It runs the same
//! broker over the data directory's store as `airlock serve` (so approvals, grants, tokens and
//! the ledger are shared), with the REST API and inbox beside it for approvers.

use std::path::PathBuf;

use anyhow::Result;

use super::serve::config::ConfigFile;

/// The proxy's default address (the daemon's port plus one).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7374";

#[derive(clap::Args)]
pub struct Args {
    /// ADDRESS:PORT to listen on (default 127.0.0.1:7374).
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Option<String>,
    /// The model API's base URL, such as https://api.openai.com/v1 (default: proxy.upstream).
    #[arg(long, value_name = "URL")]
    upstream: Option<String>,
    /// The configuration file (TOML, as for `airlock serve`; its [proxy] section applies).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Allow listening on an address that is not loopback.
    #[arg(long)]
    allow_remote: bool,
}

pub fn run(args: Args, store: &airlock_store::StoreOptions) -> Result<u8> {
    let file = match &args.config {
        Some(p) => ConfigFile::load(p)?,
        None => ConfigFile::default(),
    };
    let listen = args.listen.as_deref().unwrap_or(DEFAULT_LISTEN);
    let addr = file.listen(Some(listen), args.allow_remote)?;
    let Some(proxy) = file.proxy(args.upstream.as_deref())? else {
        anyhow::bail!("airlock proxy needs --upstream URL (or proxy.upstream in --config)");
    };
    let node = file
        .serve
        .node
        .clone()
        .unwrap_or_else(super::serve::hostname);
    super::serve::run_node(store, &file, addr, node, Some(proxy), false)
}
