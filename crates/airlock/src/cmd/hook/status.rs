//! `airlock hook status`: per agent, whether airlock's hook is installed for every event the hook
//! handles, trusted where the agent asks for trust (Codex), and answering (its command is run
//! with a harmless tool call in the agent's dialect). What real clients showed: a hook an agent
//! does not run protects nothing, and Codex skips an untrusted hook without a word.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use airlock_hook::install::{is_airlock_hook, settings_path};
use airlock_hook::protocol::{Protocol, Stage};
use anyhow::Result;
use serde_json::{Value, json};

#[derive(clap::Args)]
pub struct StatusArgs {
    /// The agents to check (default: all four).
    #[arg(value_parser = ["claude", "codex", "gemini", "copilot"])]
    agents: Vec<String>,
    /// Read this settings file instead of the agent's default (with one agent only).
    #[arg(long, value_name = "FILE")]
    file: Option<PathBuf>,
}

/// How long the hook may take to answer the check's call.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

pub fn run(a: StatusArgs) -> Result<u8> {
    let agents: Vec<Protocol> = if a.agents.is_empty() {
        Protocol::ALL.to_vec()
    } else {
        a.agents.iter().filter_map(|n| Protocol::parse(n)).collect()
    };
    if a.file.is_some() && agents.len() != 1 {
        anyhow::bail!("--file needs exactly one agent");
    }
    let mut installed_any = false;
    let mut all_well = true;
    for agent in agents {
        let Some(path) = a.file.clone().or_else(|| settings_path(agent)) else {
            println!("{}: no home directory to look in", agent.name());
            continue;
        };
        let s = check(agent, &path);
        print!("{}", s.describe(agent, &path));
        if s.any_installed() {
            installed_any = true;
            all_well &= s.well();
        }
    }
    Ok(if installed_any && all_well { 0 } else { 1 })
}

/// What one agent's settings and hook showed.
struct Status {
    /// Per stage: the event name and the airlock command registered under it.
    events: Vec<(&'static str, Option<String>)>,
    /// The settings file could not be read or parsed.
    unreadable: Option<String>,
    /// `Some(true)` trusted, `Some(false)` not, `None` no trust step or not knowable.
    trusted: Option<bool>,
    trust_note: String,
    /// The check call's outcome.
    answering: Result<String, String>,
}

impl Status {
    fn any_installed(&self) -> bool {
        self.events.iter().any(|(_, c)| c.is_some())
    }

    fn well(&self) -> bool {
        self.events.iter().all(|(_, c)| c.is_some())
            && self.trusted != Some(false)
            && self.answering.is_ok()
    }

    fn describe(&self, agent: Protocol, path: &Path) -> String {
        let mut out = format!("{} ({})\n", agent.name(), path.display());
        if let Some(e) = &self.unreadable {
            out.push_str(&format!("  installed: no ({e})\n"));
            return out;
        }
        let have: Vec<&str> = self
            .events
            .iter()
            .filter(|(_, c)| c.is_some())
            .map(|(e, _)| *e)
            .collect();
        let missing: Vec<&str> = self
            .events
            .iter()
            .filter(|(_, c)| c.is_none())
            .map(|(e, _)| *e)
            .collect();
        let installed = match (have.is_empty(), missing.is_empty()) {
            (true, _) => format!(
                "no: run `airlock hook install {} --merge {}`",
                agent.name(),
                path.display()
            ),
            (false, true) => format!("yes ({})", have.join(", ")),
            (false, false) => format!(
                "partly: {} but not {} (run `airlock hook install {} --merge {}`)",
                have.join(", "),
                missing.join(", "),
                agent.name(),
                path.display()
            ),
        };
        out.push_str(&format!("  installed: {installed}\n"));
        if have.is_empty() {
            return out;
        }
        let trusted = match self.trusted {
            Some(true) => "yes".to_string(),
            Some(false) => format!("NO: {}", self.trust_note),
            None => self.trust_note.clone(),
        };
        out.push_str(&format!("  trusted:   {trusted}\n"));
        let answering = match &self.answering {
            Ok(s) => format!("yes ({s})"),
            Err(e) => format!("NO: {e}"),
        };
        out.push_str(&format!("  answering: {answering}\n"));
        out
    }
}

fn check(agent: Protocol, path: &Path) -> Status {
    let mut s = Status {
        events: Stage::ALL
            .iter()
            .map(|st| (agent.event(*st), None))
            .collect(),
        unreadable: None,
        trusted: None,
        trust_note: "no trust step for this agent".into(),
        answering: Err("not installed".into()),
    };
    let doc = match std::fs::read_to_string(path) {
        Ok(t) => match serde_json::from_str::<Value>(&t) {
            Ok(v) => v,
            Err(e) => {
                s.unreadable = Some(format!("not JSON: {e}"));
                return s;
            }
        },
        Err(e) => {
            s.unreadable = Some(e.to_string());
            return s;
        }
    };
    for (event, command) in &mut s.events {
        *command = airlock_command(agent, &doc["hooks"][*event]);
    }
    if agent == Protocol::Codex {
        (s.trusted, s.trust_note) = codex_trust(path);
    }
    let tool_stage = s.events.first().and_then(|(_, c)| c.clone());
    if let Some(cmd) = tool_stage.or_else(|| s.events.iter().find_map(|(_, c)| c.clone())) {
        s.answering = answers(agent, &cmd);
    }
    s
}

/// The airlock command registered in one event's list, in the agent's layout.
fn airlock_command(agent: Protocol, list: &Value) -> Option<String> {
    let key = if agent == Protocol::Copilot {
        "bash"
    } else {
        "command"
    };
    list.as_array()?.iter().find_map(|item| {
        let handlers: Vec<&Value> = match agent {
            Protocol::Copilot => vec![item],
            _ => item["hooks"]
                .as_array()
                .map(|h| h.iter().collect())
                .unwrap_or_default(),
        };
        handlers
            .into_iter()
            .filter_map(|h| h[key].as_str())
            .find(|c| is_airlock_hook(c))
            .map(str::to_string)
    })
}

/// Codex keeps the hashes of the hooks a person trusted in `config.toml` (`hooks.state.<key>.
/// trusted_hash`, written by its `/hooks` screen). Which key is airlock's entry is Codex's own
/// business, so: no trusted hook at all is a sure "no"; some trusted hooks are "probably", to be
/// confirmed in `/hooks`.
fn codex_trust(hooks_json: &Path) -> (Option<bool>, String) {
    let config = hooks_json.with_file_name("config.toml");
    let how = "start `codex`, open `/hooks` and trust the airlock entries; until then Codex runs \
               every tool call without airlock";
    let text = std::fs::read_to_string(&config).unwrap_or_default();
    let doc: toml::Value = match text.parse() {
        Ok(v) => v,
        Err(_) if text.is_empty() => toml::Value::Table(Default::default()),
        Err(e) => {
            return (
                None,
                format!("{} is not TOML ({e}); {how}", config.display()),
            );
        }
    };
    let trusted = doc
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(toml::Value::as_table)
        .map(|t| {
            t.values()
                .filter(|v| v.get("trusted_hash").is_some())
                .count()
        })
        .unwrap_or(0);
    if trusted == 0 {
        (
            Some(false),
            format!("no hook is trusted in {}: {how}", config.display()),
        )
    } else {
        (
            None,
            format!(
                "{trusted} hook(s) trusted in {}; check in `codex` → `/hooks` that they are airlock's \
                 current entries (a changed entry needs trusting again)",
                config.display()
            ),
        )
    }
}

/// Runs the installed command with a harmless tool call in the agent's dialect.
fn answers(agent: Protocol, command: &str) -> Result<String, String> {
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_else(|_| "/".into());
    let input = match agent {
        Protocol::Claude => json!({"session_id": "airlock-hook-status", "cwd": cwd,
            "hook_event_name": "PreToolUse", "tool_name": "Read",
            "tool_input": {"file_path": "README.md"}, "tool_use_id": "status"}),
        Protocol::Codex => json!({"session_id": "airlock-hook-status", "turn_id": "status",
            "cwd": cwd, "hook_event_name": "PreToolUse", "model": "status",
            "permission_mode": "default", "tool_name": "Bash", "tool_use_id": "status",
            "tool_input": {"command": "ls"}, "transcript_path": null}),
        Protocol::Gemini => json!({"session_id": "airlock-hook-status", "cwd": cwd,
            "hook_event_name": "BeforeTool", "timestamp": "1970-01-01T00:00:00Z",
            "tool_name": "read_file", "tool_input": {"absolute_path": "README.md"}}),
        Protocol::Copilot => json!({"timestamp": 0, "cwd": cwd, "toolName": "view",
            "toolArgs": "{\"path\":\"README.md\"}"}),
    };
    let started = Instant::now();
    let mut child = Command::new("sh")
        .args(["-c", command])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{command}`: {e}"))?;
    if let Some(mut w) = child.stdin.take() {
        let _ = w.write_all(input.to_string().as_bytes());
    }
    // wait in a thread so a hung hook cannot hang the check
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(ANSWER_WITHIN) {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => return Err(format!("`{command}` failed: {e}")),
        Err(_) => {
            return Err(format!(
                "`{command}` gave no answer within {} s",
                ANSWER_WITHIN.as_secs()
            ));
        }
    };
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.code() != Some(0) {
        return Err(format!(
            "`{command}` exited {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let v: Value = serde_json::from_str(stdout.trim())
        .map_err(|e| format!("`{command}` answered something that is not JSON ({e}): {stdout}"))?;
    let decision = v["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .or(v["decision"].as_str())
        .or(v["permissionDecision"].as_str())
        .unwrap_or(if v == json!({}) {
            "allow (no decision)"
        } else {
            "?"
        })
        .to_string();
    Ok(format!(
        "a harmless call answered `{decision}` in {ms:.1} ms"
    ))
}
