//! `airlock bench hook` (being written).

use anyhow::{Result, bail};

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> Result<u8> {
    bail!("airlock bench hook is not built yet")
}
