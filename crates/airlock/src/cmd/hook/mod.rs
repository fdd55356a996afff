//! `airlock hook`: the pre-tool hook for coding agents (Claude Code and Codex `PreToolUse`,
//! Gemini CLI `BeforeTool`, GitHub Copilot `preToolUse`). One tool call in on stdin, one answer
//! out in the agent's own dialect.
//!
//! The pipeline is `input` (bytes → tool call, dialect detected) → `tools` (tool call →
//! assessment) → `answer` (assessment → the dialect's JSON). An `ask` is answered with the
//! agent's own prompt, unless `airlock serve` runs: then `daemon` takes the `ask` between `tools`
//! and `answer` and turns it into a person's allow or deny (or a timeout's deny).
//!
//! Start-up stays lean: no database, only the policy files, and only shell tools reach the rule
//! packs. Whatever happens after stdin is read, the answer is never an allow by accident: bad
//! input and internal errors (panics included) become a deny.

pub mod answer;
mod daemon;
pub mod input;
pub mod install;
mod ordered;
pub mod protocol;
pub mod tools;

use std::io::{IsTerminal, Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use airlock_core::ReasonCode;

use answer::{Answer, EXIT_BLOCK};
use input::{InputError, MAX_INPUT, ToolCall};
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
    let mut args = std::env::args_os().skip(1);
    args.next().is_some_and(|a| a == "hook") && args.next().is_none_or(|a| a != "install")
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
    let forced = match args.as_slice() {
        [h] if h == "hook" => None,
        [h, flag, name] if h == "hook" && flag == "--agent" => Some(Protocol::parse(name)?),
        [h, flag] if h == "hook" => Some(Protocol::parse(flag.strip_prefix("--agent=")?)?),
        _ => return None,
    };
    Some(respond(forced))
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

/// How long a shell command's analysis may take before the hook stops waiting and asks a person.
/// Ordinary commands take well under a millisecond after start-up; the limit only has to stay
/// below the agents' own hook timeouts (30 s as installed), since a timed-out hook is let through.
pub const ANALYSIS_DEADLINE: Duration = Duration::from_secs(5);

/// Decides on raw hook input. A panic anywhere inside becomes a deny with `INTERNAL_ERROR`; a
/// shell analysis that misses `ANALYSIS_DEADLINE` becomes an ask with `ANALYSIS_TIMEOUT`.
pub fn decide(bytes: &[u8], forced: Option<Protocol>, home: Option<&str>) -> Answer {
    decide_within(bytes, forced, home, ANALYSIS_DEADLINE)
}

fn decide_within(
    bytes: &[u8],
    forced: Option<Protocol>,
    home: Option<&str>,
    deadline: Duration,
) -> Answer {
    let mut seen = forced;
    let result = catch_unwind(AssertUnwindSafe(|| match input::parse(bytes, forced) {
        Ok(call) => {
            seen = Some(call.protocol);
            let verdict = if tools::is_shell(&call) {
                assess_with_deadline(&call, home, deadline)
            } else {
                Some(assess(&call, home))
            };
            let verdict = verdict.unwrap_or_else(|| tools::timed_out(&call, deadline));
            let verdict = daemon::escalate(&call, verdict);
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

/// Runs the assessment on a worker thread and waits at most `deadline`.
fn assess_with_deadline(
    call: &ToolCall,
    home: Option<&str>,
    deadline: Duration,
) -> Option<tools::Verdict> {
    let owned = call.clone();
    let home = home.map(str::to_string);
    within(deadline, move || assess(&owned, home.as_deref()))
}

/// Loads the effective policy found from the call's working directory (the built-in layer plus
/// the user, project and managed files) and decides; a policy that does not load denies.
fn assess(call: &ToolCall, home: Option<&str>) -> tools::Verdict {
    let cwd = call.cwd.as_deref().map(std::path::Path::new);
    match airlock_policy::Policy::load(&crate::cmd::policy::sources_at(cwd)) {
        Ok(policy) => tools::assess_with(&policy, call, home),
        Err(e) => tools::policy_failed(call, &e.to_string()),
    }
}

/// Runs `f` on a worker thread; `None` if it has not finished after `deadline`. The worker is
/// then abandoned: the process answers and exits, which ends it. A panic in the worker (or a
/// failure to start it) panics here, so the caller's `catch_unwind` turns it into a deny.
fn within<T: Send + 'static>(
    deadline: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(deadline) {
        Ok(v) => Some(v),
        Err(mpsc::RecvTimeoutError::Timeout) => None,
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            panic!("the assessment thread ended without an answer")
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_work_times_out_and_fast_work_does_not() {
        let slow = within(Duration::from_millis(20), || {
            thread::sleep(Duration::from_secs(2));
            1
        });
        assert_eq!(slow, None);
        assert_eq!(within(Duration::from_secs(5), || 2), Some(2));
    }

    #[test]
    fn a_panicking_worker_becomes_a_panic_here() {
        let r = catch_unwind(|| within(Duration::from_secs(5), || -> u8 { panic!("boom") }));
        assert!(r.is_err());
    }

    #[test]
    fn a_timed_out_shell_call_asks() {
        let call = input::parse(
            br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#,
            None,
        )
        .map_err(|e| e.message)
        .unwrap_or_else(|m| panic!("{m}"));
        let v = tools::timed_out(&call, Duration::from_millis(5000));
        let a = answer::answer(Protocol::Claude, &v);
        assert!(
            a.stdout.contains(r#""permissionDecision":"ask""#),
            "{}",
            a.stdout
        );
        assert!(a.stdout.contains("ANALYSIS_TIMEOUT"), "{}", a.stdout);
        assert!(a.stdout.contains("5000 ms"), "{}", a.stdout);
    }

    #[test]
    fn shell_calls_still_decide_through_the_worker() {
        let input =
            br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#;
        let a = decide(input, None, None);
        let want = airlock_shell::analyse("ls").decision.as_str();
        assert!(
            a.stdout
                .contains(&format!(r#""permissionDecision":"{want}""#)),
            "{}",
            a.stdout
        );
    }
}
