//! `airlock hook`: the pre-tool hook, run by the full binary. The hook itself (input, tools,
//! answers, install, the daemon hand-off) is the `airlock-hook` crate, which also builds the lean
//! `airlock-hook` binary; this module is its command line and its client for daemons that are
//! not plain HTTP on loopback.

use airlock_hook::daemon::{Handoff, Remote};
use airlock_hook::http::Transport;
use airlock_hook::protocol::Protocol;

use crate::daemon::{BlockingClient, Endpoint};

mod status;

pub use airlock_hook::EXIT_USAGE;

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    /// Answer in this agent's dialect instead of detecting it from the input (set by
    /// `hook install`, so even unreadable input is refused in the agent's own shape).
    #[arg(long, value_name = "AGENT", value_parser = ["claude", "codex", "gemini", "copilot"])]
    agent: Option<String>,
    #[command(subcommand)]
    command: Option<Sub>,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Print the settings entries an agent needs, or merge them into a settings file.
    Install(InstallArgs),
    /// Tell, per agent, whether the hook is installed for every event, trusted and answering.
    Status(status::StatusArgs),
}

#[derive(clap::Args)]
pub struct InstallArgs {
    /// The agent to install the hook for.
    #[arg(value_parser = ["claude", "codex", "gemini", "copilot"])]
    agent: String,
    /// Merge the entry into this settings file (created if missing) instead of printing it.
    #[arg(long, value_name = "FILE")]
    merge: Option<std::path::PathBuf>,
    /// The program the agent should run; default: `airlock-hook` beside this binary (the lean
    /// hook, faster to start), else this airlock binary, by absolute path.
    #[arg(long, value_name = "CMD")]
    command: Option<String>,
}

pub fn run(args: Args, store: &airlock_store::StoreOptions) -> anyhow::Result<u8> {
    match args.command {
        Some(Sub::Install(a)) => airlock_hook::install::run(&a.agent, a.merge, a.command),
        Some(Sub::Status(a)) => status::run(a),
        None => Ok(respond(
            args.agent.as_deref().and_then(Protocol::parse),
            &store.data_dir,
        )),
    }
}

/// True when this process was started as `airlock hook …` (not `hook install` or `status`): a usage error
/// must then block the tool call rather than exit with a code the agent reads as "go ahead".
pub fn is_hook_invocation() -> bool {
    let mut args = std::env::args_os().skip(1);
    args.next().is_some_and(|a| a == "hook")
        && args.next().is_none_or(|a| a != "install" && a != "status")
}

/// `airlock hook` and `airlock hook --agent <name>` answered without building the whole
/// command-line parser: hooks run once per agent action, so every microsecond of start-up
/// counts. Anything else (help, `install`, a bad flag) returns `None` and goes through clap.
pub fn fast_path() -> Option<u8> {
    // `args_os`: `args` panics on an argument that is not UTF-8.
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .take(4)
        .map(|a| a.into_string().ok())
        .collect::<Option<_>>()?;
    let (first, rest) = args.split_first()?;
    if first != "hook" {
        return None;
    }
    // No command line parsed: the data directory is the environment's (or the default).
    let store = airlock_store::StoreOptions::chosen(None, None);
    Some(respond(airlock_hook::agent_args(rest)?, &store.data_dir))
}

/// Answers one hook call; an `ask` goes to the daemon, over any URL this binary's client reaches.
fn respond(forced: Option<Protocol>, data_dir: &std::path::Path) -> u8 {
    let connect = |ep: &Endpoint| -> anyhow::Result<Box<dyn Transport>> {
        Ok(Box::new(BlockingClient::new(ep, data_dir)?))
    };
    let handoff = Handoff {
        data_dir: data_dir.to_path_buf(),
        remote: Remote::Connect(&connect),
    };
    airlock_hook::respond(forced, &handoff)
}
