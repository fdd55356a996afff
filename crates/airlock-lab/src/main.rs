//! `airlock-lab`: the measuring bench of airlock, kept out of the product binary. `eval` runs
//! the labelled corpora and prints detection quality; `bench` measures whole-process and
//! end-to-end speed. `airlock eval …` and `airlock bench …` run this binary when it sits beside
//! `airlock` (build it with `cargo build --release -p airlock-lab`), so the commands in
//! docs/evaluation.md and docs/benchmarks.md read the same either way.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{Parser, Subcommand};

mod bench;
mod eval;

/// The same allocator as the `airlock` binary: `bench proxy` runs the proxy in this process, and
/// its figures are the product's only with the product's allocator.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Exit codes as the `airlock` binary's (the README documents them).
pub const EXIT_ALLOW: u8 = 0;
pub const EXIT_ERROR: u8 = 3;

/// Set by `airlock` when it hands `eval` or `bench` over: the airlock binary that did, so a
/// bench that starts `airlock hook` or `airlock serve` starts that one.
pub const AIRLOCK_EXE_ENV: &str = "AIRLOCK_EXE";

#[derive(Parser)]
#[command(
    name = "airlock-lab",
    version,
    about = "airlock's lab: detection quality on the labelled corpora and measured speed"
)]
struct Cli {
    /// Where airlock keeps its state; default: the user's data directory.
    #[arg(long, global = true, env = "AIRLOCK_DATA_DIR", value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Database URL: postgres://USER@HOST:PORT/DB (`bench ledger` and `bench approvals`);
    /// default: SQLite.
    #[arg(long, global = true, env = "AIRLOCK_DATABASE_URL", value_name = "URL")]
    database: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the labelled corpora and print measured detection quality.
    Eval(eval::Args),
    /// Measure whole-process and end-to-end speed.
    Bench(bench::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => ExitCode::from(EXIT_ERROR),
            };
        }
    };
    quiet_broken_pipe();
    let store = airlock_store::StoreOptions::chosen(cli.data_dir, cli.database);
    let result = match cli.command {
        Command::Eval(a) => eval::run(a),
        Command::Bench(a) => bench::run(a, &store),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("airlock-lab: error: {e:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// The `airlock` binary a bench starts: the one that handed over (`AIRLOCK_EXE`), else the one
/// beside this binary.
pub fn airlock_exe() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os(AIRLOCK_EXE_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let me = std::env::current_exe()?;
    let beside = me.with_file_name(format!("airlock{}", std::env::consts::EXE_SUFFIX));
    if !beside.is_file() {
        bail!(
            "no airlock binary beside {}: build it with `cargo build -p airlock` (or set {AIRLOCK_EXE_ENV})",
            me.display()
        );
    }
    Ok(beside)
}

/// `println!` panics when standard output was closed (`airlock-lab bench … | head`). That is no
/// bug to report with a backtrace, and must never end as exit 0: the process says so in one line
/// and exits with the error code.
fn quiet_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            eprintln!("airlock-lab: standard output was closed before the output was written");
            std::process::exit(i32::from(EXIT_ERROR));
        }
        default(info);
    }));
}
