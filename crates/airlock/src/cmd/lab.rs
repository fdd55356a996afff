//! `airlock eval` and `airlock bench`: the lab's commands live in the `airlock-lab` binary, kept
//! out of the product binary with their dependencies (the corpora readers, YAML). Like git's and
//! cargo's external subcommands, `airlock` runs `airlock-lab` found beside its own executable,
//! with the arguments as given; without it, an error names the command that builds it.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The lab binary's name, beside `airlock`.
pub const LAB: &str = "airlock-lab";

/// Everything after `eval` or `bench`, passed on untouched (`--help` included).
#[derive(clap::Args)]
pub struct Args {
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    args: Vec<OsString>,
}

/// The global options as given on the command line (or by their environment variables).
pub struct Global {
    pub data_dir: Option<PathBuf>,
    pub database: Option<String>,
}

/// Runs `airlock-lab <command> <args…>` and returns its exit code.
pub fn run(command: &str, args: Args, global: &Global) -> Result<u8> {
    let me = std::env::current_exe().context("cannot find the airlock binary")?;
    let lab = me.with_file_name(format!("{LAB}{}", std::env::consts::EXE_SUFFIX));
    if !lab.is_file() {
        bail!(
            "`airlock {command}` runs the lab binary {LAB}, which is not installed beside {}: build it with `cargo build --release -p {LAB}` (or `cargo build -p {LAB}` for the debug build)",
            me.display()
        );
    }
    let mut cmd = Command::new(&lab);
    if let Some(d) = &global.data_dir {
        cmd.arg("--data-dir").arg(d);
    }
    if let Some(u) = &global.database {
        cmd.arg("--database").arg(u);
    }
    // A bench that starts `airlock hook` or `airlock serve` starts this binary.
    cmd.arg(command).args(&args.args).env("AIRLOCK_EXE", &me);
    exec(cmd, &lab)
}

/// Replaces this process with the lab's (its output, signals and exit code are the command's).
#[cfg(unix)]
fn exec(mut cmd: Command, lab: &std::path::Path) -> Result<u8> {
    use std::os::unix::process::CommandExt;
    let e = cmd.exec();
    bail!("cannot run {}: {e}", lab.display())
}

#[cfg(not(unix))]
fn exec(mut cmd: Command, lab: &std::path::Path) -> Result<u8> {
    let status = cmd
        .status()
        .with_context(|| format!("cannot run {}", lab.display()))?;
    Ok(status
        .code()
        .and_then(|c| u8::try_from(c).ok())
        .unwrap_or(super::EXIT_ERROR))
}
