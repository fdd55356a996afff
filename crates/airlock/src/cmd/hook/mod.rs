//! `airlock hook`: the pre-tool hook for coding agents (Claude Code and Codex `PreToolUse`,
//! Gemini CLI `BeforeTool`, GitHub Copilot `preToolUse`). One tool call in on stdin, one answer
//! out in the agent's own dialect.
//!
//! The pipeline is `input` (bytes → tool call, dialect detected) → `tools` (tool call →
//! assessment) → `answer` (assessment → the dialect's JSON). An `ask` is answered with the
//! agent's own prompt today; the daemon will later take an `ask` between `tools` and `answer` and
//! turn it into a person's allow or deny, without either side changing.
//!
//! Start-up stays lean: no database, no configuration files, and only shell tools reach the rule
//! packs. Whatever happens after stdin is read, the answer is never an allow by accident: bad
//! input and internal errors (panics included) become a deny.

pub mod answer;
pub mod input;
pub mod install;
mod ordered;
pub mod protocol;
pub mod tools;

use std::io::{IsTerminal, Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};

use airlock_core::ReasonCode;

use answer::{Answer, EXIT_BLOCK};
use input::{InputError, MAX_INPUT};
use protocol::Protocol;

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
    /// Print the settings entry an agent needs, or merge it into a settings file.
    Install(install::Args),
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.command {
        Some(Sub::Install(a)) => install::run(a),
        None => Ok(respond(args.agent.as_deref().and_then(Protocol::parse))),
    }
}

/// True when this process was started as `airlock hook …` (not `hook install`): a usage error
/// must then block the tool call rather than exit with a code the agent reads as "go ahead".
pub fn is_hook_invocation() -> bool {
    let mut args = std::env::args().skip(1);
    args.next().as_deref() == Some("hook") && args.next().as_deref() != Some("install")
}

/// The exit code for a hook invocation whose command line could not be parsed.
pub const EXIT_USAGE: u8 = EXIT_BLOCK;

/// Reads stdin, decides, writes the answer; returns the exit code.
fn respond(forced: Option<Protocol>) -> u8 {
    let home = std::env::var("HOME").ok().filter(|h| !h.is_empty());
    let answer = match read_stdin() {
        Ok(bytes) => decide(&bytes, forced, home.as_deref()),
        Err(message) => answer::refuse(&InputError {
            code: ReasonCode::MalformedInput,
            message,
            protocol: forced,
        }),
    };
    emit(&answer)
}

fn read_stdin() -> Result<Vec<u8>, String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(
            "no hook input: `airlock hook` reads the agent's JSON tool call on stdin (see \
             `airlock hook install --help`)"
                .to_string(),
        );
    }
    let mut buf = Vec::new();
    // One byte past the limit is enough to know the input is too large.
    stdin
        .lock()
        .take(MAX_INPUT as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    Ok(buf)
}

/// Decides on raw hook input. A panic anywhere inside becomes a deny with `INTERNAL_ERROR`.
pub fn decide(bytes: &[u8], forced: Option<Protocol>, home: Option<&str>) -> Answer {
    let mut seen = forced;
    let result = catch_unwind(AssertUnwindSafe(|| match input::parse(bytes, forced) {
        Ok(call) => {
            seen = Some(call.protocol);
            let verdict = tools::assess(&call, home);
            answer::answer(call.protocol, &verdict)
        }
        Err(e) => answer::refuse(&e),
    }));
    result.unwrap_or_else(|_| {
        answer::refuse(&InputError {
            code: ReasonCode::InternalError,
            message: "airlock failed internally while checking this tool call".to_string(),
            protocol: seen,
        })
    })
}

/// Writes the answer. If stdout cannot be written, the agent would see no decision: fall back to
/// the blocking exit code.
fn emit(a: &Answer) -> u8 {
    if !a.stderr.is_empty() {
        let _ = std::io::stderr().write_all(a.stderr.as_bytes());
    }
    if a.stdout.is_empty() {
        return a.exit;
    }
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{}", a.stdout).and_then(|()| out.flush()) {
        Ok(()) => a.exit,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "airlock hook: cannot write the answer: {e}"
            );
            EXIT_BLOCK
        }
    }
}
