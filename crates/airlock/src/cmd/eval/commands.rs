//! `airlock eval commands`: the shell-command corpora (being written).

use anyhow::{Result, bail};

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> Result<u8> {
    bail!("airlock eval commands is not built yet")
}
