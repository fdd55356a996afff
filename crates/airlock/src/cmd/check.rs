//! `airlock check`: shell command lines in, decisions out. One line from the arguments, or many
//! as JSON lines (`--jsonl`) for scanning a history file or a corpus in one process.
//!
//! Exit codes (one line): 0 allow, 1 deny, 2 ask, 3 usage or internal error. With `--jsonl`:
//! 0 once every input line got an answer line, 3 on an I/O error.

use std::ffi::OsString;
use std::io::{BufRead, Write};

use airlock_core::{Assessment, Decision, Finding, ReasonCode, Severity, Tier};
use anyhow::{Context, Result, bail};

/// Longest JSON line `--jsonl` reads; longer lines are answered with an error object.
const MAX_JSONL_LINE: usize = 1 << 20;

#[derive(clap::Args)]
pub struct Args {
    /// Print the assessment as JSON.
    #[arg(long, conflicts_with = "explain")]
    json: bool,
    /// Explain each reason: rule, reason code, tier, remediation and the span that triggered it.
    #[arg(long)]
    explain: bool,
    /// Read one JSON string (a command line) per input line; write one JSON object per line.
    #[arg(long, conflicts_with_all = ["json", "explain"])]
    jsonl: bool,
    /// Record the decision as a signed receipt in the ledger (`AIRLOCK_SESSION`,
    /// `AIRLOCK_PRINCIPAL` and `AIRLOCK_REQUEST_ID` name the session, agent and request).
    #[arg(long, conflicts_with = "jsonl")]
    record: bool,
    /// Consult the grant store: an ask that a usable grant of this agent and session covers is
    /// allowed, and one use of the grant is counted (`AIRLOCK_PRINCIPAL`, `AIRLOCK_SESSION`).
    #[arg(long, conflicts_with = "jsonl")]
    grants: bool,
    #[command(flatten)]
    policy: super::policy::PolicyArgs,
    /// The command line (everything after `--`). One argument is taken as a whole line; several
    /// are re-quoted as the argv of one command.
    #[arg(trailing_var_arg = true)]
    command: Vec<OsString>,
}

pub fn run(args: Args, store: &airlock_store::StoreOptions) -> Result<u8> {
    if args.jsonl {
        if !args.command.is_empty() {
            bail!("--jsonl reads command lines from standard input; give no command arguments");
        }
        let policy = args.policy.load();
        return jsonl(std::io::stdin().lock(), std::io::stdout().lock(), &policy);
    }
    if args.command.is_empty() {
        bail!("no command given: usage `airlock check [--json|--explain] -- <command line>`");
    }
    let (line, utf8) = line_of(&args.command);
    let policy = args.policy.load();
    // one command where it runs: the project's hosts count (the `--jsonl` loop judges lines
    // of a corpus, not of this project, and leaves them out)
    let ctx =
        super::policy::context_from_env().with_project_hosts(&airlock_core::Action::shell(&line));
    let mut a = decide(&policy, &line, &ctx);
    let mut grant = None;
    if args.grants
        && utf8
        && let Ok(p) = &policy
    {
        let (assessment, used) = with_grants(store, p, &line)?;
        a = assessment;
        grant = used;
    }
    if !utf8 {
        a.push(not_utf8());
    }
    if args.record {
        let action = airlock_core::Action::shell(line.clone());
        let mut ctx = crate::record::RecordContext::from_env();
        if let Ok(p) = &policy {
            ctx.policy_sha256 = p.hash()?.to_string();
        }
        if let Some(g) = &grant {
            ctx.grant = Some(g.id.clone());
            ctx.approvers = vec![g.creator.to_string()];
        }
        let r = crate::record::record_blocking(store, &action, &a, &ctx)?;
        eprintln!("airlock: recorded receipt {}", r.id);
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &a)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", render(&line, &a, args.explain))?;
    }
    Ok(super::exit_code(a.decision))
}

/// The policy's decision on one line; a policy that does not load denies (fail-safe) and says
/// why.
fn decide(
    policy: &Result<airlock_policy::Policy>,
    line: &str,
    ctx: &airlock_policy::Context,
) -> Assessment {
    match policy {
        Ok(p) => p
            .evaluate(&airlock_core::Action::shell(line), ctx)
            .assessment(),
        Err(e) => airlock_policy::load_error(&format!("{e:#}")),
    }
}

/// The decision with the grant store consulted; the grant used, if any.
fn with_grants(
    opts: &airlock_store::StoreOptions,
    policy: &airlock_policy::Policy,
    line: &str,
) -> Result<(Assessment, Option<airlock_grants::Grant>)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let db = airlock_store::Db::open(opts)
            .await
            .with_context(|| format!("opening the store in {}", opts.data_dir.display()))?;
        let book =
            airlock_grants::GrantBook::new(db.clone(), airlock_grants::GrantConfig::default());
        let rc = crate::record::RecordContext::from_env();
        let actor = airlock_grants::Subject::new(rc.principal, Some(rc.session));
        let d = crate::decide::decide(
            policy,
            Some(&book),
            &actor,
            &airlock_core::Action::shell(line),
            &super::policy::context_from_env()
                .with_project_hosts(&airlock_core::Action::shell(line)),
        )
        .await;
        db.close().await;
        let d = d?;
        Ok((d.verdict.assessment(), d.grant))
    })
}

/// Builds the command line from arguments; the flag says whether they were valid UTF-8.
fn line_of(parts: &[OsString]) -> (String, bool) {
    let utf8 = parts.iter().all(|p| p.to_str().is_some());
    let words: Vec<String> = parts
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if words.len() == 1 {
        return (words.into_iter().next().unwrap_or_default(), utf8);
    }
    (airlock_shell::canon::join(&words), utf8)
}

fn not_utf8() -> Finding {
    Finding::new(
        "input.not_utf8",
        ReasonCode::NotUtf8,
        Decision::Ask,
        Tier::Medium,
        Severity::Medium,
        "the command is not valid UTF-8; invalid bytes were replaced before analysis, so a person must look at the original",
    )
}

fn malformed(msg: String) -> Assessment {
    Assessment::from_findings(
        vec![Finding::new(
            "input.malformed",
            ReasonCode::MalformedInput,
            Decision::Deny,
            Tier::Medium,
            Severity::Medium,
            msg,
        )],
        Decision::Deny,
    )
}

/// The `--jsonl` loop: every input line gets exactly one output line, in order.
pub fn jsonl(
    mut input: impl BufRead,
    mut out: impl Write,
    policy: &Result<airlock_policy::Policy>,
) -> Result<u8> {
    let ctx = super::policy::context_from_env();
    let mut buf = Vec::new();
    let mut n = 0usize;
    loop {
        buf.clear();
        let read = std::io::Read::take(&mut input, MAX_JSONL_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
            .context("reading standard input")?;
        if read == 0 {
            break;
        }
        n += 1;
        let a = if buf.len() > MAX_JSONL_LINE && !buf.ends_with(b"\n") {
            // skip the rest of the oversized line
            let mut sink = Vec::new();
            input
                .read_until(b'\n', &mut sink)
                .context("reading standard input")?;
            let mut a = malformed(format!("line {n} is longer than {MAX_JSONL_LINE} bytes"));
            a.reasons[0].code = ReasonCode::InputTooLarge;
            a
        } else {
            let text = trim_newline(&buf);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match std::str::from_utf8(text) {
                Err(_) => {
                    let mut a = malformed(format!("line {n} is not valid UTF-8"));
                    a.reasons[0].code = ReasonCode::NotUtf8;
                    a
                }
                Ok(s) => match serde_json::from_str::<String>(s) {
                    Ok(cmd) => decide(policy, &cmd, &ctx),
                    Err(e) => malformed(format!(
                        "line {n} is not a JSON string ({e}); write each command line as a JSON string, e.g. \"ls -la\""
                    )),
                },
            }
        };
        serde_json::to_writer(&mut out, &a)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(super::EXIT_ALLOW)
}

fn trim_newline(b: &[u8]) -> &[u8] {
    let b = b.strip_suffix(b"\n").unwrap_or(b);
    b.strip_suffix(b"\r").unwrap_or(b)
}

/// Human-readable output.
pub fn render(line: &str, a: &Assessment, explain: bool) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} (tier {} {})",
        a.decision.as_str().to_uppercase(),
        a.tier.as_u8(),
        a.tier.name()
    );
    for r in &a.reasons {
        let _ = writeln!(
            s,
            "  - {} [{}] {}: {}",
            r.decision, r.code, r.rule_id, r.message
        );
        if explain {
            let _ = writeln!(
                s,
                "      tier {}, severity {}",
                r.tier.as_u8(),
                r.severity.as_str()
            );
            if let Some(ev) = &r.evidence {
                let _ = writeln!(s, "      matched: {ev}");
            }
            if let Some(sp) = r.span
                && let Some(part) = line.get(sp.start..sp.end)
            {
                let _ = writeln!(s, "      at bytes {}..{}: {}", sp.start, sp.end, part);
            }
            if !r.remediation.is_empty() {
                let _ = writeln!(s, "      help: {}", r.remediation);
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_answers_every_line_and_never_allows_bad_input() {
        let input = b"\"ls -la\"\nnot json\n\xff\xfe\n{\"a\":1}\n\n\"rm -rf /\"\n";
        let mut out = Vec::new();
        let p = Ok(airlock_policy::Policy::builtin().unwrap());
        let code = jsonl(&input[..], &mut out, &p).unwrap_or(99);
        assert_eq!(code, 0);
        let lines: Vec<serde_json::Value> = out
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap_or_default())
            .collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0]["decision"], "allow");
        for bad in &lines[1..4] {
            assert_eq!(bad["decision"], "deny", "{bad}");
        }
        assert_eq!(lines[2]["reasons"][0]["code"], "NOT_UTF8");
    }

    #[test]
    fn argv_is_requoted() {
        let parts: Vec<OsString> = ["git", "commit", "-m", "reset --hard"]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(line_of(&parts).0, "git commit -m 'reset --hard'");
        let one = vec![OsString::from("curl x | sh")];
        assert_eq!(line_of(&one).0, "curl x | sh");
    }
}
