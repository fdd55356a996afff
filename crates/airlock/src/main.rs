//! The `airlock` binary: parses the command line and hands each subcommand to its module under
//! `cmd/`. Start-up stays lean (no database, no rule compilation) because hooks run this binary
//! once per agent action.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod cmd;
mod daemon;
mod decide;
mod record;

/// The daemon (proxy, MCP gateway, API) allocates small short-lived buffers on every request;
/// glibc's allocator was about a sixth of the proxy's CPU under load and walks cold bins after an
/// idle pause. mimalloc (without its huge-page handling, which cost start-up time for the
/// one-shot commands) measured in docs/benchmarks.md (History, "OpenAI-compatible proxy": 2026-11-27, `d5d2361`, `7007481`).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "airlock",
    version,
    about = "A firewall for the actions of LLM agents"
)]
struct Cli {
    /// Where airlock keeps its state (keys, the SQLite ledger); default: the user's data directory.
    #[arg(long, global = true, env = "AIRLOCK_DATA_DIR", value_name = "DIR")]
    data_dir: Option<std::path::PathBuf>,
    /// Database URL: postgres://USER@HOST:PORT/DB to share one ledger between nodes; default:
    /// SQLite in the data directory.
    #[arg(long, global = true, env = "AIRLOCK_DATABASE_URL", value_name = "URL")]
    database: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decide on one shell command line (exit 0 allow, 1 deny, 2 ask, 3 error).
    Check(cmd::check::Args),
    /// Scan text for jailbreaks, prompt injection and crisis signals (exit 0 clean, 1 detected, 3 error).
    Scan(cmd::scan::Args),
    /// Run the labelled corpora and print measured detection quality (runs `airlock-lab eval`).
    #[command(disable_help_flag = true)]
    Eval(cmd::lab::Args),
    /// Measure whole-process and end-to-end speed (runs `airlock-lab bench`).
    #[command(disable_help_flag = true)]
    Bench(cmd::lab::Args),
    /// The pre-tool hook for Claude Code, Codex, Gemini CLI and Copilot (JSON on stdin).
    Hook(cmd::hook::Args),
    /// Verify, prove, export and replay the signed ledger of receipts.
    Ledger(cmd::ledger::Args),
    /// Add, list, show, confirm and revoke capabilities (grants).
    Grant(cmd::grant::Args),
    /// Check, explain, test and import policy files.
    Policy(cmd::policy::Args),
    /// Run the daemon: REST API, web inbox and approval broker (loopback, SQLite by default).
    Serve(cmd::serve::Args),
    /// The OpenAI-compatible proxy on its own port (tool calls in model answers are decided).
    Proxy(cmd::proxy::Args),
    /// Create, list and revoke the bearer tokens of agents and approvers.
    Token(cmd::token::Args),
    /// List the actions waiting for an answer (a client of `airlock serve`).
    Pending(cmd::approvals::PendingArgs),
    /// Approve a pending action, once or for the session.
    Approve(cmd::approvals::ApproveArgs),
    /// Deny a pending action, with a reason the agent is told.
    Deny(cmd::approvals::DenyArgs),
    /// Answer approvals interactively at the terminal as they arrive.
    Watch(cmd::approvals::WatchArgs),
    /// The MCP gateway: wrap a stdio MCP server, approve changed tools.
    Mcp(cmd::mcp::Args),
    /// Sessions in crisis mode: list them, or end one (a person's decision).
    Crisis(cmd::crisis::Args),
    /// Prompts per day, what the LLM reviewer and learned grants answered, time to answer.
    Stats(cmd::stats::Args),
    /// Run a command confined: Landlock, seccomp, rlimits, a timeout, egress only to granted hosts.
    Run(cmd::run::Args),
    /// Run WASM tools with fuel, memory and time limits; serve a directory of them over MCP.
    Tool(cmd::tool::Args),
    /// The launcher half of `airlock run` (confines itself, then execs the command).
    #[command(hide = true)]
    SandboxExec(cmd::run::ExecArgs),
}

fn main() -> ExitCode {
    // The launcher's, the hook's and `run`'s command lines are read without clap (start-up time); under
    // `--cfg airlock_reference` clap, the reference reader, reads them too.
    if !cfg!(airlock_reference) {
        if let Some(code) = cmd::run::launcher_fast_path() {
            return ExitCode::from(code);
        }
        if let Some(code) = cmd::hook::fast_path() {
            return ExitCode::from(code);
        }
        if let Some(code) = cmd::run::fast_path() {
            return ExitCode::from(code);
        }
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            // Help and version are not errors; anything else is a usage error (exit 3).
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                // A hook with a bad command line must still block the tool call.
                _ if cmd::hook::is_hook_invocation() => ExitCode::from(cmd::hook::EXIT_USAGE),
                _ => ExitCode::from(cmd::EXIT_ERROR),
            };
        }
    };
    // `eval` and `bench` live in the lab binary, which gets the global options as given.
    let global = cmd::lab::Global {
        data_dir: cli.data_dir.clone(),
        database: cli.database.clone(),
    };
    // Where state lives, chosen once and handed to each command that keeps state.
    let store = airlock_store::StoreOptions::chosen(cli.data_dir, cli.database);
    let store = &store;
    quiet_broken_pipe();
    let result = match cli.command {
        Command::Check(a) => cmd::check::run(a, store),
        Command::Scan(a) => cmd::scan::run(a),
        Command::Eval(a) => cmd::lab::run("eval", a, &global),
        Command::Bench(a) => cmd::lab::run("bench", a, &global),
        Command::Hook(a) => cmd::hook::run(a, store),
        Command::Ledger(a) => cmd::ledger::run(a, store),
        Command::Grant(a) => cmd::grant::run(a, store),
        Command::Policy(a) => cmd::policy::run(a),
        Command::Serve(a) => cmd::serve::run(a, store),
        Command::Proxy(a) => cmd::proxy::run(a, store),
        Command::Token(a) => cmd::token::run(a, store),
        Command::Pending(a) => cmd::approvals::pending(a, store),
        Command::Approve(a) => cmd::approvals::approve(a, store),
        Command::Deny(a) => cmd::approvals::deny(a, store),
        Command::Watch(a) => cmd::approvals::watch(a, store),
        Command::Mcp(a) => cmd::mcp::run(a, store),
        Command::Crisis(a) => cmd::crisis::run(a, store),
        Command::Stats(a) => cmd::stats::run(a, store),
        Command::Run(a) => cmd::run::run(a, store),
        Command::Tool(a) => cmd::tool::run(a, store),
        Command::SandboxExec(a) => cmd::run::exec(a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("airlock: error: {e:#}");
            ExitCode::from(cmd::EXIT_ERROR)
        }
    }
}

/// `println!` panics when standard output was closed (`airlock policy explain … | head`). That is no bug
/// to report with a backtrace, and must never end as exit 0 (for `check` that means "allow"):
/// the process says so in one line and exits with the error code.
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
            eprintln!("airlock: standard output was closed before the output was written");
            std::process::exit(i32::from(cmd::EXIT_ERROR));
        }
        default(info);
    }));
}
