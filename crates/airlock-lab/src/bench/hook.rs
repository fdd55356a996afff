//! `airlock bench hook`: whole-process latency of the hook, start to exit, the way an agent waits
//! for it on every tool call, measured against spawning `/bin/true` in the same run. The hook
//! measured is the lean `airlock-hook` binary beside this one (what `hook install` sets up), with
//! `airlock hook` (the full binary) alongside for comparison; without the lean binary, only
//! `airlock hook`.
//!
//! Runs alternate between the programs so that drift on a busy machine (other builds, CPU
//! frequency) hits all alike. Each hook run gets a real PreToolUse JSON on stdin and must answer
//! with exit 0 and a JSON object, so the figure is for a real decision, not an early error.

use anyhow::{Context, Result, bail};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(clap::Args)]
pub struct Args {
    /// Timed runs of each program.
    #[arg(long, default_value_t = 300)]
    runs: usize,
    /// Untimed runs of each program first (page cache, dynamic loader).
    #[arg(long, default_value_t = 20)]
    warmup: usize,
    /// The event fed to the hook: `bash` (a read-only shell command), `deny` (a destructive
    /// one), `write` (a file write), `read` (a read-only tool); `prompt` (a clean 4 KB prompt)
    /// and `output` (a clean 4 KB tool output), scanned by the text scanner.
    #[arg(long, default_value = "bash", value_parser = ["bash", "deny", "write", "read", "prompt", "output"])]
    payload: String,
    /// Feed this file's bytes to the hook instead of a built-in payload.
    #[arg(long, value_name = "FILE", conflicts_with = "payload")]
    input: Option<PathBuf>,
    /// The airlock binary to measure as `airlock hook` (default: the one beside this binary).
    #[arg(long, value_name = "PATH")]
    binary: Option<PathBuf>,
    /// The lean hook binary to measure (default: `airlock-hook` beside the airlock binary).
    #[arg(long, value_name = "PATH")]
    lean: Option<PathBuf>,
    /// Measure only `airlock hook`, not the lean binary.
    #[arg(long, conflicts_with = "lean")]
    full_only: bool,
    /// The baseline program, run without arguments.
    #[arg(long, value_name = "PATH", default_value = "/bin/true")]
    baseline: PathBuf,
    /// Exit 1 when the hook's p50 is more than this many times the baseline's p50.
    #[arg(long, value_name = "RATIO")]
    max_ratio: Option<f64>,
    /// Print the figures as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<u8> {
    if args.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let binary = match &args.binary {
        Some(b) => b.clone(),
        None => crate::airlock_exe()?,
    };
    let (label, stdin) = match &args.input {
        Some(f) => (
            format!("file {}", f.display()),
            std::fs::read(f).with_context(|| format!("cannot read {}", f.display()))?,
        ),
        None => {
            let (label, json) = payload(&args.payload);
            (label, json.into_bytes())
        }
    };

    let lean = match (&args.lean, args.full_only) {
        (_, true) => None,
        (Some(p), false) => Some(p.clone()),
        (None, false) => binary
            .parent()
            .map(|d| d.join(airlock_hook::install::LEAN))
            .filter(|p| p.is_file()),
    };
    // The hooks measured: the lean binary first (its ratio is the goal's), then `airlock hook`.
    let mut hooks: Vec<Hook> = Vec::new();
    if let Some(p) = lean {
        hooks.push(Hook {
            name: "airlock-hook",
            program: p,
            args: &[],
        });
    }
    hooks.push(Hook {
        name: "airlock hook",
        program: binary.clone(),
        args: &["hook"],
    });

    // The first run of each doubles as a check that it answers properly.
    let mut answers = Vec::new();
    for h in &hooks {
        answers.push(run_hook(h, &stdin)?.1);
    }
    if let Some(other) = answers.iter().find(|a| **a != answers[0]) {
        bail!("the hooks answer differently:\n{}\n{other}", answers[0]);
    }
    let answer = answers.swap_remove(0);
    for _ in 0..args.warmup {
        run_baseline(&args.baseline)?;
        for h in &hooks {
            run_hook(h, &stdin)?;
        }
    }
    let mut base = Vec::with_capacity(args.runs);
    let mut times: Vec<Vec<Duration>> = hooks
        .iter()
        .map(|_| Vec::with_capacity(args.runs))
        .collect();
    for i in 0..args.runs {
        // Rotate which goes first, so none always runs right after another.
        let n = hooks.len() + 1;
        for k in 0..n {
            match (i + k) % n {
                0 => base.push(run_baseline(&args.baseline)?),
                j => times[j - 1].push(run_hook(&hooks[j - 1], &stdin)?.0),
            }
        }
    }
    let base = Stats::of(&mut base);
    let stats: Vec<Stats> = times.iter_mut().map(|t| Stats::of(t)).collect();
    let ratios: Vec<f64> = stats.iter().map(|s| s.p50 / base.p50.max(1e-9)).collect();
    let ratio = ratios[0];

    if args.json {
        let row = |i: usize| {
            serde_json::json!({
                "program": format!("{} {}", hooks[i].program.display(), hooks[i].args.join(" ")).trim_end(),
                "ms": stats[i].to_json(),
                "p50_ratio": ratios[i],
            })
        };
        let mut v = serde_json::json!({
            "runs": args.runs,
            "warmup": args.warmup,
            "payload": label,
            "baseline": {"program": args.baseline.display().to_string(), "ms": base.to_json()},
            "hook": row(0),
            "p50_ratio": ratio,
            "answer": answer,
        });
        if hooks.len() > 1 {
            v["full"] = row(1);
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "airlock bench hook: {} runs each after {} warm-up, payload: {label}",
            args.runs, args.warmup
        );
        println!("answer: {answer}");
        println!(
            "{:<22} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}   (ms)",
            "program", "min", "p50", "p90", "p99", "max", "mean"
        );
        println!("{}", base.row(&args.baseline.display().to_string()));
        for (h, s) in hooks.iter().zip(&stats) {
            println!("{}", s.row(h.name));
        }
        for (h, r) in hooks.iter().zip(&ratios) {
            println!(
                "p50 ratio {:<13} {r:.2}x {}{}",
                format!("{}:", h.name),
                args.baseline.display(),
                if h.program == hooks[0].program {
                    " (goal: within 3x)"
                } else {
                    ""
                }
            );
        }
    }
    match args.max_ratio {
        Some(max) if ratio > max => {
            eprintln!(
                "airlock bench hook: {} p50 ratio {ratio:.2} is over the limit {max}",
                hooks[0].name
            );
            Ok(1)
        }
        _ => Ok(0),
    }
}

/// One hook program as an agent runs it.
struct Hook {
    name: &'static str,
    program: PathBuf,
    args: &'static [&'static str],
}

/// A clean 4 KB prose text (no rule's keyword sequence, nothing the model flags).
fn clean_4k() -> String {
    let para = "The build runs the unit tests first, then the integration suite against a local \
                database; a failing test stops the pipeline and the report lists the slowest cases. ";
    para.repeat(4096 / para.len() + 1)
        .chars()
        .take(4096)
        .collect()
}

/// A Claude Code event as the agent sends it: a PreToolUse call, or (`prompt`, `output`) a
/// UserPromptSubmit prompt or a PostToolUse output of 4 KB.
fn payload(kind: &str) -> (String, String) {
    let common = |event: &str| {
        serde_json::json!({
            "session_id": "bench", "transcript_path": "/tmp/bench.jsonl", "cwd": "/work/proj",
            "permission_mode": "default", "hook_event_name": event,
        })
    };
    match kind {
        "prompt" => {
            let mut v = common("UserPromptSubmit");
            v["prompt"] = clean_4k().into();
            return (
                "Claude Code UserPromptSubmit, clean 4 KB prompt".into(),
                v.to_string(),
            );
        }
        "output" => {
            let mut v = common("PostToolUse");
            v["tool_name"] = "Bash".into();
            v["tool_input"] = serde_json::json!({"command": "cat notes.txt"});
            v["tool_response"] = serde_json::json!({"stdout": clean_4k(), "stderr": "", "interrupted": false, "isImage": false});
            v["tool_use_id"] = "toolu_bench".into();
            return (
                "Claude Code PostToolUse, clean 4 KB Bash output".into(),
                v.to_string(),
            );
        }
        _ => {}
    }
    let (tool, input, what) = match kind {
        "deny" => (
            "Bash",
            serde_json::json!({"command": "rm -rf / --no-preserve-root", "description": "x"}),
            "Bash `rm -rf / --no-preserve-root`",
        ),
        "write" => (
            "Write",
            serde_json::json!({"file_path": "/work/proj/src/lib.rs", "content": "pub fn f() {}\n"}),
            "Write `/work/proj/src/lib.rs`",
        ),
        "read" => (
            "Read",
            serde_json::json!({"file_path": "/work/proj/README.md"}),
            "Read `/work/proj/README.md`",
        ),
        _ => (
            "Bash",
            serde_json::json!({"command": "git status --short && ls -la src", "description": "x"}),
            "Bash `git status --short && ls -la src`",
        ),
    };
    let json = serde_json::json!({
        "session_id": "bench", "transcript_path": "/tmp/bench.jsonl", "cwd": "/work/proj",
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_bench"
    });
    (format!("Claude Code PreToolUse, {what}"), json.to_string())
}

fn run_baseline(program: &PathBuf) -> Result<Duration> {
    let start = Instant::now();
    let status = Command::new(program)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .with_context(|| format!("cannot run {}", program.display()))?;
    let took = start.elapsed();
    if !status.success() {
        bail!("{} exited with {status}", program.display());
    }
    Ok(took)
}

/// One hook run, timed from spawn to exit with its answer read; returns the answer too.
fn run_hook(hook: &Hook, stdin: &[u8]) -> Result<(Duration, String)> {
    let start = Instant::now();
    let mut child = Command::new(&hook.program)
        .args(hook.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot run {}", hook.program.display()))?;
    if let Some(mut w) = child.stdin.take() {
        // A hook that refuses oversized input may close stdin early; that is its answer.
        let _ = w.write_all(stdin);
    }
    let mut out = String::new();
    if let Some(mut r) = child.stdout.take() {
        r.read_to_string(&mut out)?;
    }
    let status = child.wait()?;
    let took = start.elapsed();
    let answer = out.trim().to_string();
    if status.code() != Some(0) || serde_json::from_str::<serde_json::Value>(&answer).is_err() {
        bail!(
            "`{} {}` did not answer (exit {status}, stdout {answer:?})",
            hook.program.display(),
            hook.args.join(" ")
        );
    }
    Ok((took, answer))
}

/// Summary of one program's timings, in milliseconds.
pub(crate) struct Stats {
    min: f64,
    p50: f64,
    p90: f64,
    p99: f64,
    max: f64,
    mean: f64,
}

impl Stats {
    pub(crate) fn of(samples: &mut [Duration]) -> Stats {
        samples.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        // Nearest-rank percentile.
        let pct = |p: f64| {
            let n = samples.len();
            let rank = ((p / 100.0) * n as f64).ceil() as usize;
            ms(samples[rank.clamp(1, n) - 1])
        };
        let total: f64 = samples.iter().map(|d| ms(*d)).sum();
        Stats {
            min: ms(samples[0]),
            p50: pct(50.0),
            p90: pct(90.0),
            p99: pct(99.0),
            max: ms(samples[samples.len() - 1]),
            mean: total / samples.len() as f64,
        }
    }

    pub(crate) fn row(&self, name: &str) -> String {
        format!(
            "{name:<22} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
            self.min, self.p50, self.p90, self.p99, self.max, self.mean
        )
    }

    pub(crate) fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "min": self.min, "p50": self.p50, "p90": self.p90,
            "p99": self.p99, "max": self.max, "mean": self.mean,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank() {
        let mut v: Vec<Duration> = (1..=100).rev().map(Duration::from_millis).collect();
        let s = Stats::of(&mut v);
        assert_eq!(
            (s.min, s.p50, s.p90, s.p99, s.max),
            (1.0, 50.0, 90.0, 99.0, 100.0)
        );
        assert!((s.mean - 50.5).abs() < 1e-9);
        let mut one = vec![Duration::from_millis(7)];
        assert_eq!(Stats::of(&mut one).p99, 7.0);
    }

    #[test]
    fn payloads_are_hook_input() {
        for k in ["bash", "deny", "write", "read"] {
            let (_, json) = payload(k);
            let v: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
            assert_eq!(v["hook_event_name"], "PreToolUse", "{k}");
        }
        for (k, event) in [("prompt", "UserPromptSubmit"), ("output", "PostToolUse")] {
            let (_, json) = payload(k);
            let v: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
            assert_eq!(v["hook_event_name"], event, "{k}");
            let text = v["prompt"]
                .as_str()
                .or(v["tool_response"]["stdout"].as_str());
            assert_eq!(text.map(str::len), Some(4096), "{k}");
            assert!(
                airlock_shield::scan(text.unwrap_or_default(), airlock_shield::Direction::User)
                    .verdict
                    .is_clean()
            );
        }
    }
}
