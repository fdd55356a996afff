//! `airlock hook`: the hook for coding agents' whole turn. Before a tool runs (Claude Code and
//! Codex `PreToolUse`, Gemini CLI `BeforeTool`, GitHub Copilot `preToolUse`) it decides the call;
//! on the person's prompt and on a tool's output (`UserPromptSubmit`/`BeforeAgent`/
//! `userPromptSubmitted`, `PostToolUse`/`AfterTool`/`postToolUse`) it scans the text (`turn`).
//! One event in on stdin, one answer out in the agent's own dialect.
//!
//! The pre-tool pipeline is `input` (bytes → tool call, dialect detected) → `tools` (tool call →
//! assessment, in crisis mode when the session is marked, `crisis`) → `answer` (assessment →
//! the dialect's JSON). An `ask` is answered with the
//! agent's own prompt, unless `airlock serve` runs: then `daemon` takes the `ask` between `tools`
//! and `answer` and turns it into a person's allow or deny (or a timeout's deny).
//!
//! Two programs run this library: `airlock hook` (the full `airlock` binary) and the lean
//! `airlock-hook` binary, which `hook install` prefers. Hooks run once per agent action, so
//! start-up is their speed: this crate depends on no async runtime, HTTP stack or database (the
//! dynamic loader's relocations of those dominate a process that lives a few milliseconds). The
//! daemon is reached with `http`'s small blocking client on loopback; a daemon elsewhere makes
//! `airlock-hook` re-run the call through `airlock hook`.
//!
//! Start-up stays lean: no database, only the policy files, and only shell tools reach the rule
//! packs. Whatever happens after stdin is read, the answer is never an allow by accident: bad
//! input and internal errors (panics included) become a deny.

pub mod answer;
pub mod crisis;
pub mod daemon;
pub mod endpoint;
pub mod http;
pub mod input;
pub mod install;
pub mod ordered;
pub mod proof;
pub mod protocol;
pub mod sandbox;
pub mod tools;
pub mod turn;

use std::io::{IsTerminal, Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use airlock_core::{Decision, ReasonCode};

use answer::{EXIT_BLOCK, HookAnswer};
use daemon::{Escalated, Handoff};
use input::{Event, InputError, MAX_EVENT_INPUT, ToolCall};
use protocol::{Protocol, Stage};

/// The exit code for a hook invocation whose command line could not be parsed: it must block
/// the tool call rather than exit with a code the agent reads as "go ahead".
pub const EXIT_USAGE: u8 = EXIT_BLOCK;

/// The hook's own arguments (after `airlock hook`, or all of `airlock-hook`'s): none, or
/// `--agent <name>` / `--agent=<name>`. `None` for anything else (help, a bad flag).
pub fn agent_args(args: &[String]) -> Option<Option<Protocol>> {
    match args {
        [] => Some(None),
        [flag, name] if flag == "--agent" => Some(Some(Protocol::parse(name)?)),
        [flag] => Some(Some(Protocol::parse(flag.strip_prefix("--agent=")?)?)),
        _ => None,
    }
}

/// Reads stdin, decides, writes the answer; returns the exit code. An `ask` goes to the daemon
/// `handoff` finds, if one runs.
pub fn respond(forced: Option<Protocol>, handoff: &Handoff) -> u8 {
    let home = std::env::var("HOME").ok().filter(|h| !h.is_empty());
    let bytes = match read_stdin() {
        Ok(bytes) => bytes,
        Err(message) => {
            return emit(&answer::refuse(&InputError {
                code: ReasonCode::MalformedInput,
                message,
                protocol: forced,
                stage: None,
            }));
        }
    };
    match decide_with(&bytes, forced, home.as_deref(), Some(handoff)) {
        Decided::Answer(a) => emit(&a),
        Decided::Delegate { protocol, local } => match delegate(&bytes, protocol) {
            Some(code) => code,
            None => emit(&local),
        },
    }
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
        .take(MAX_EVENT_INPUT as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    Ok(buf)
}

/// How long a shell command's analysis may take before the hook stops waiting and asks a person.
/// Ordinary commands take well under a millisecond after start-up; the limit only has to stay
/// below the agents' own hook timeouts (30 s as installed), since a timed-out hook is let through.
pub const ANALYSIS_DEADLINE: Duration = Duration::from_secs(5);

/// What the hook will answer.
pub enum Decided {
    Answer(HookAnswer),
    /// An ask for a daemon this process cannot reach: re-run the call through the full
    /// `airlock hook`; `local` (the agent's own prompt) is the answer if that cannot be done.
    Delegate {
        protocol: Protocol,
        local: HookAnswer,
    },
}

/// Decides on raw hook input without a daemon. A panic anywhere inside becomes a deny with
/// `INTERNAL_ERROR`; a shell analysis that misses `ANALYSIS_DEADLINE` becomes an ask with
/// `ANALYSIS_TIMEOUT`.
pub fn decide(bytes: &[u8], forced: Option<Protocol>, home: Option<&str>) -> HookAnswer {
    match decide_within(bytes, forced, home, None, ANALYSIS_DEADLINE) {
        Decided::Answer(a) | Decided::Delegate { local: a, .. } => a,
    }
}

/// `decide`, with an `ask` handed to the daemon `handoff` finds.
pub fn decide_with(
    bytes: &[u8],
    forced: Option<Protocol>,
    home: Option<&str>,
    handoff: Option<&Handoff>,
) -> Decided {
    decide_within(bytes, forced, home, handoff, ANALYSIS_DEADLINE)
}

fn decide_within(
    bytes: &[u8],
    forced: Option<Protocol>,
    home: Option<&str>,
    handoff: Option<&Handoff>,
    deadline: Duration,
) -> Decided {
    let mut seen = forced;
    let mut stage = None;
    let data_dir = match handoff {
        Some(h) => h.data_dir.clone(),
        None => endpoint::data_dir_from_env(),
    };
    let result = catch_unwind(AssertUnwindSafe(|| {
        match input::parse_event(bytes, forced) {
            Ok(Event::Prompt(p)) => {
                seen = Some(p.protocol);
                stage = Some(Stage::Prompt);
                let settings = turn::settings(p.cwd.as_deref().map(Path::new));
                let report = |m: &crisis::Mark| {
                    if let Some(h) = handoff {
                        daemon::report_crisis(m, h);
                    }
                };
                let marks = turn::Marks {
                    data_dir: &data_dir,
                    report: &report,
                };
                Decided::Answer(turn::decide_prompt(&p, &settings, &marks))
            }
            Ok(Event::Output(o)) => {
                seen = Some(o.protocol);
                stage = Some(Stage::Output);
                let settings = turn::settings(o.cwd.as_deref().map(Path::new));
                Decided::Answer(turn::decide_output(&o, &settings))
            }
            Ok(Event::Tool(call)) => {
                seen = Some(call.protocol);
                stage = Some(Stage::Tool);
                let in_crisis = crisis::get(
                    &data_dir,
                    &crisis::session_key(call.protocol, call.session.as_deref()),
                )
                .is_some();
                let assessed = if tools::is_shell(&call) {
                    assess_with_deadline(&call, home, in_crisis, deadline)
                } else {
                    Some(assess(&call, home, in_crisis))
                };
                let (mut verdict, ran_in) = match assessed {
                    Some((v, dir)) => (v, dir),
                    None => (tools::timed_out(&call, deadline), None),
                };
                if let Some(f) = sandbox::escape_finding(&call) {
                    verdict.assessment.push(f);
                }
                // The daemon decides with the policy of the directory whose policy decided here
                // (`cd proj && …` is judged with proj's), so its answer cannot be a looser one.
                let escalated_call = match ran_in {
                    Some(dir) => {
                        let mut c = call.clone();
                        c.cwd = Some(dir);
                        c
                    }
                    None => call.clone(),
                };
                let escalated = match handoff {
                    Some(h) => daemon::escalate(&escalated_call, verdict, h),
                    None => Escalated::Verdict(verdict),
                };
                match escalated {
                    Escalated::Verdict(v) => {
                        // an ask still open here goes to the agent's own prompt, unless this
                        // run has nobody to answer it
                        let v = if v.assessment.decision == Decision::Ask
                            && answer::deny_unanswered_asks()
                        {
                            answer::nobody_to_ask(v)
                        } else {
                            v
                        };
                        let rewritten = match v.assessment.decision {
                            Decision::Allow => {
                                sandbox::Wrap::from_env().and_then(|w| w.rewrite(&call))
                            }
                            _ => None,
                        };
                        Decided::Answer(answer::answer_with(call.protocol, &v, rewritten))
                    }
                    Escalated::Delegate(v) => {
                        let v = if answer::deny_unanswered_asks() {
                            answer::nobody_to_ask(v)
                        } else {
                            v
                        };
                        Decided::Delegate {
                            protocol: call.protocol,
                            local: answer::answer(call.protocol, &v),
                        }
                    }
                }
            }
            Err(e) => Decided::Answer(answer::refuse(&e)),
        }
    }));
    result.unwrap_or_else(|_| {
        Decided::Answer(answer::refuse(&InputError {
            code: ReasonCode::InternalError,
            message: "airlock failed internally while checking this event".to_string(),
            protocol: seen,
            stage,
        }))
    })
}

/// Re-runs the call through `airlock hook` beside this executable (which reaches any daemon),
/// passing its answer through. `None` when that program is missing or gives no usable answer:
/// the caller then answers with its own verdict.
fn delegate(bytes: &[u8], protocol: Protocol) -> Option<u8> {
    let Some(full) = sibling("airlock") else {
        eprintln!(
            "airlock hook: the daemon is not on this machine's loopback and `airlock` is not \
             beside this binary to reach it; asking here"
        );
        return None;
    };
    let run = || -> std::io::Result<std::process::Output> {
        let mut child = Command::new(&full)
            .args(["hook", "--agent", protocol.name()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        if let Some(mut w) = child.stdin.take() {
            w.write_all(bytes)?;
        }
        child.wait_with_output()
    };
    match run() {
        // A JSON answer (exit 0), or a block (exit 2): both are the full hook's decision.
        Ok(out) if matches!(out.status.code(), Some(0) | Some(2)) => {
            let code = out.status.code().unwrap_or(i32::from(EXIT_BLOCK));
            let mut stdout = std::io::stdout().lock();
            match stdout.write_all(&out.stdout).and_then(|()| stdout.flush()) {
                Ok(()) => Some(code as u8),
                Err(_) => Some(EXIT_BLOCK),
            }
        }
        Ok(out) => {
            eprintln!(
                "airlock hook: {} failed ({}); asking here",
                full.display(),
                out.status
            );
            None
        }
        Err(e) => {
            eprintln!(
                "airlock hook: cannot run {}: {e}; asking here",
                full.display()
            );
            None
        }
    }
}

/// A program named `name` in the directory of the running executable, if there is one.
pub fn sibling(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let p = exe.parent()?.join(name);
    is_program(&p).then_some(p)
}

/// True for a regular file (or a link to one) that someone may execute.
fn is_program(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs the assessment on a worker thread and waits at most `deadline`.
fn assess_with_deadline(
    call: &ToolCall,
    home: Option<&str>,
    crisis: bool,
    deadline: Duration,
) -> Option<(tools::HookVerdict, Option<String>)> {
    let owned = call.clone();
    let home = home.map(str::to_string);
    within(deadline, move || assess(&owned, home.as_deref(), crisis))
}

/// Loads the effective policy found from the call's working directory (the built-in layer plus
/// the user, project and managed files) and decides; a policy that does not load denies. A shell
/// command is also judged with the policy of every other directory it will run in (the `cd`
/// targets of the line), and the strictest verdict stands; the directory whose policy gave it
/// is returned when it is not the call's own. `crisis`: the session is in crisis mode.
fn assess(
    call: &ToolCall,
    home: Option<&str>,
    crisis: bool,
) -> (tools::HookVerdict, Option<String>) {
    let here = std::env::current_dir().ok();
    let cwd = call.cwd.as_deref().map(PathBuf::from).or(here);
    let sources = policy_sources(cwd.as_deref());
    let mut verdict = match airlock_policy::Policy::load(&sources) {
        Ok(policy) => tools::assess_in(&policy, call, home, crisis),
        Err(e) => return (tools::policy_failed(call, &e.to_string()), None),
    };
    let mut decided_in = None;
    let (Some(line), Some(cwd)) = (tools::shell_command(call), cwd) else {
        return (verdict, decided_in);
    };
    for dir in airlock_shell::rundirs::elsewhere(&line, &cwd, home) {
        let other = policy_sources(Some(&dir));
        if other.project == sources.project {
            continue;
        }
        let mut there = call.clone();
        there.cwd = Some(dir.display().to_string());
        let v = match airlock_policy::Policy::load(&other) {
            Ok(policy) => tools::assess_in(&policy, &there, home, crisis),
            Err(e) => tools::policy_failed(&there, &e.to_string()),
        };
        let rank = |v: &tools::HookVerdict| (v.assessment.decision, v.assessment.tier);
        if rank(&v) > rank(&verdict) {
            verdict = v;
            decided_in = there.cwd;
        }
    }
    (verdict, decided_in)
}

/// The policy files for a process working in `cwd` (default: the current directory), with
/// `AIRLOCK_POLICY` naming the user file when set (as the hook, which has no flags, needs).
pub fn policy_sources(cwd: Option<&Path>) -> airlock_policy::Sources {
    let here = std::env::current_dir().ok();
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")));
    let mut s = airlock_policy::Sources::discover(config.as_deref(), cwd.or(here.as_deref()));
    if let Some(p) = std::env::var_os("AIRLOCK_POLICY").filter(|p| !p.is_empty()) {
        s.user = Some(PathBuf::from(p));
    }
    s
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
fn emit(a: &HookAnswer) -> u8 {
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
