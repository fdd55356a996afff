//! `airlock hook install <agent>`: prints the one settings entry an agent needs, or merges it
//! into an existing settings file: idempotently (an existing airlock entry is updated, never
//! duplicated), keeping the user's other settings and key order, atomically, with a backup.

use anyhow::{Context, Result, bail};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::ordered::Json;
use crate::protocol::{Protocol, Stage};

/// `airlock hook install <agent> [--merge FILE] [--command CMD]`: prints the settings entry, or
/// merges it into `merge`. `program` is what the agent runs; default: `airlock-hook` beside the
/// running executable, else the running executable itself (as `… hook`).
pub fn run(agent: &str, merge: Option<PathBuf>, program: Option<String>) -> Result<u8> {
    let Some(agent) = Protocol::parse(agent) else {
        bail!("unknown agent `{agent}`");
    };
    let program = match program {
        Some(c) => c,
        None => default_program(),
    };
    let command = hook_command(&program, agent);
    match merge {
        None => {
            let fragment = fragment(agent, &command);
            println!("{}", pretty(&fragment)?);
            eprintln!(
                "airlock: add this to {} (or run `airlock hook install {} --merge {}`)",
                settings_hint(agent),
                agent.name(),
                settings_hint(agent)
            );
        }
        Some(path) => {
            let m = merge_file(&path, agent, &command)?;
            eprintln!("airlock: {}", m.outcome.describe(&path, m.backup));
        }
    }
    if agent == Protocol::Codex {
        eprintln!("{CODEX_TRUST}");
    }
    Ok(0)
}

/// Printed by every `hook install codex`: Codex skips a hook nobody trusted, without a word.
pub const CODEX_TRUST: &str = "\
airlock: IMPORTANT: Codex runs a hook only after a person trusts its exact entry. Until then,
  and again after any change to the entry (this install included), `codex` and `codex exec`
  run every tool call WITHOUT airlock and say nothing. Trust it now: start `codex`, open
  `/hooks`, and trust each airlock entry (PreToolUse, UserPromptSubmit, PostToolUse).
  `airlock hook status codex` tells whether the hook is installed, trusted and answering.";

/// The name of the lean hook binary.
pub const LEAN: &str = "airlock-hook";

/// The command line the agent runs: `<program> --agent <name>` for the lean binary, else
/// `<program> hook --agent <name>`.
pub fn hook_command(program: &str, agent: Protocol) -> String {
    if program_name(program) == LEAN {
        format!("{program} --agent {}", agent.name())
    } else {
        format!("{program} hook --agent {}", agent.name())
    }
}

/// The file name a (possibly quoted) program path ends in.
fn program_name(program: &str) -> &str {
    let bin = program.trim_matches(['\'', '"']);
    bin.rsplit('/').next().unwrap_or(bin)
}

/// `airlock-hook` beside this executable when it is there (it starts faster), else this
/// executable; by absolute path, quoted for a shell when needed; `airlock` if unknown.
fn default_program() -> String {
    let path = crate::sibling(LEAN)
        .or_else(|| std::env::current_exe().ok())
        .and_then(|p| p.to_str().map(str::to_string))
        .unwrap_or_else(|| "airlock".to_string());
    if path
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_./+@%:,".contains(&b))
    {
        path
    } else {
        format!("'{}'", path.replace('\'', r"'\''"))
    }
}

/// Where the agent reads the user's hook settings: `CLAUDE_CONFIG_DIR` and `CODEX_HOME` move
/// Claude Code's and Codex's, as the agents themselves honour them.
pub fn settings_hint(agent: Protocol) -> String {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    match agent {
        Protocol::Claude => match env("CLAUDE_CONFIG_DIR") {
            Some(d) => format!("{}/settings.json", d.trim_end_matches('/')),
            None => "~/.claude/settings.json".into(),
        },
        Protocol::Codex => match env("CODEX_HOME") {
            Some(d) => format!("{}/hooks.json", d.trim_end_matches('/')),
            None => "~/.codex/hooks.json".into(),
        },
        Protocol::Gemini => "~/.gemini/settings.json".into(),
        Protocol::Copilot => "~/.copilot/hooks/airlock.json".into(),
    }
}

/// [`settings_hint`] as a path on this machine (`~` is the home directory); `None` without one.
pub fn settings_path(agent: Protocol) -> Option<PathBuf> {
    let hint = settings_hint(agent);
    match hint.strip_prefix("~/") {
        Some(rest) => dirs::home_dir().map(|h| h.join(rest)),
        None => Some(PathBuf::from(hint)),
    }
}

/// The handler object the agent runs.
fn handler(agent: Protocol, command: &str) -> Json {
    match agent {
        Protocol::Claude | Protocol::Codex => Json::obj([
            ("type", Json::str("command")),
            ("command", Json::str(command)),
            ("timeout", Json::int(90)),
        ]),
        // Gemini CLI counts its timeout in milliseconds.
        Protocol::Gemini => Json::obj([
            ("name", Json::str("airlock")),
            ("type", Json::str("command")),
            ("command", Json::str(command)),
            ("timeout", Json::int(90_000)),
        ]),
        Protocol::Copilot => Json::obj([
            ("type", Json::str("command")),
            ("bash", Json::str(command)),
            ("timeoutSec", Json::int(90)),
        ]),
    }
}

/// What goes in the event's array: a matcher group, or (Copilot) the handler itself.
fn event_item(agent: Protocol, stage: Stage, command: &str) -> Json {
    let hooks = ("hooks", Json::Array(vec![handler(agent, command)]));
    match (agent, stage) {
        (Protocol::Copilot, _) => handler(agent, command),
        // The prompt events take no tool matcher.
        (_, Stage::Prompt) => Json::obj([hooks]),
        // Every tool: a firewall that sees only some actions guards only some actions.
        (Protocol::Claude | Protocol::Codex, _) => Json::obj([("matcher", Json::str("*")), hooks]),
        // Gemini's matcher is a regular expression.
        (Protocol::Gemini, _) => Json::obj([("matcher", Json::str(".*")), hooks]),
    }
}

/// The whole settings fragment, as printed: one entry per event the hook handles.
fn fragment(agent: Protocol, command: &str) -> Json {
    let hooks = Json::Object(
        Stage::ALL
            .iter()
            .map(|s| {
                (
                    agent.event(*s).to_string(),
                    Json::Array(vec![event_item(agent, *s, command)]),
                )
            })
            .collect(),
    );
    match agent {
        Protocol::Copilot => Json::obj([("version", Json::int(1)), ("hooks", hooks)]),
        _ => Json::obj([("hooks", hooks)]),
    }
}

fn pretty(v: &Json) -> Result<String> {
    serde_json::to_string_pretty(v).context("cannot format the settings")
}

/// What a merge did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstallOutcome {
    Added,
    Updated,
    Unchanged,
}

impl InstallOutcome {
    /// `backup`: the previous file was kept as `<path>.bak` (there was one).
    fn describe(self, path: &Path, backup: bool) -> String {
        let p = path.display();
        let kept = if backup {
            format!(" (previous file kept as {p}.bak)")
        } else {
            String::new()
        };
        match self {
            InstallOutcome::Added => format!("added the airlock hook to {p}{kept}"),
            InstallOutcome::Updated => format!("updated the airlock hook in {p}{kept}"),
            InstallOutcome::Unchanged => {
                format!("the airlock hook is already in {p}; nothing changed")
            }
        }
    }
}

/// What a merge did and whether a backup was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Merged {
    pub outcome: InstallOutcome,
    pub backup: bool,
}

/// Merges the entries into the file at `path`, creating it (and its directory) if missing.
pub fn merge_file(path: &Path, agent: Protocol, command: &str) -> Result<Merged> {
    // Settings are often symlinks into a dotfiles repository: write through to the target.
    let path = match fs::canonicalize(path) {
        Ok(p) => p,
        Err(_) => path.to_path_buf(),
    };
    let existing = match fs::read_to_string(&path) {
        Ok(s) => Some(s),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut root = match existing.as_deref().map(str::trim) {
        None | Some("") => Json::object(),
        Some(text) => serde_json::from_str::<Json>(text).with_context(|| {
            format!(
                "{} is not valid JSON; fix it or merge by hand",
                path.display()
            )
        })?,
    };
    let outcome = merge(&mut root, agent, command)
        .map_err(|e| anyhow::anyhow!("{}: {e}; fix it or merge by hand", path.display()))?;
    if outcome == InstallOutcome::Unchanged {
        return Ok(Merged {
            outcome,
            backup: false,
        });
    }
    write_atomically(&path, &format!("{}\n", pretty(&root)?), existing.is_some())?;
    Ok(Merged {
        outcome,
        backup: existing.is_some(),
    })
}

/// Merges one entry per event the hook handles into a parsed settings document: `Added` when
/// none was there, `Unchanged` when all were, `Updated` otherwise.
pub fn merge(root: &mut Json, agent: Protocol, command: &str) -> Result<InstallOutcome, String> {
    let mut outcomes = Vec::new();
    for stage in Stage::ALL {
        outcomes.push(merge_event(root, agent, stage, command)?);
    }
    Ok(if outcomes.iter().all(|o| *o == InstallOutcome::Added) {
        InstallOutcome::Added
    } else if outcomes.iter().all(|o| *o == InstallOutcome::Unchanged) {
        InstallOutcome::Unchanged
    } else {
        InstallOutcome::Updated
    })
}

/// Merges the entry of one event.
fn merge_event(
    root: &mut Json,
    agent: Protocol,
    stage: Stage,
    command: &str,
) -> Result<InstallOutcome, String> {
    if !matches!(root, Json::Object(_)) {
        return Err(format!(
            "the settings must be a JSON object, not {}",
            root.kind()
        ));
    }
    if agent == Protocol::Copilot {
        root.entry("version", Json::int(1), true);
    }
    let hooks = root
        .entry("hooks", Json::object(), false)
        .ok_or("the settings must be a JSON object")?;
    if !matches!(hooks, Json::Object(_)) {
        return Err(format!("`hooks` must be an object, not {}", hooks.kind()));
    }
    let event = agent.event(stage);
    let list = hooks
        .entry(event, Json::Array(Vec::new()), false)
        .ok_or("`hooks` must be an object")?;
    let Json::Array(items) = list else {
        return Err(format!(
            "`hooks.{event}` must be an array, not {}",
            list.kind()
        ));
    };
    let command_key = if agent == Protocol::Copilot {
        "bash"
    } else {
        "command"
    };
    let mut outcome = None;
    let mut duplicates = false;
    for item in items.iter_mut() {
        let handlers: Vec<&mut Json> = match agent {
            Protocol::Copilot => vec![item],
            _ => match item.get_mut("hooks") {
                Some(Json::Array(hs)) => hs.iter_mut().collect(),
                _ => Vec::new(),
            },
        };
        for h in handlers {
            let Some(current) = h.get(command_key).and_then(Json::as_str) else {
                continue;
            };
            if !is_airlock_hook(current) {
                continue;
            }
            if outcome.is_some() {
                // A second airlock entry: mark it for removal below.
                *h = Json::Null;
                duplicates = true;
                continue;
            }
            if current == command {
                outcome = Some(InstallOutcome::Unchanged);
            } else {
                if let Some(c) = h.get_mut(command_key) {
                    *c = Json::str(command);
                }
                outcome = Some(InstallOutcome::Updated);
            }
        }
    }
    if duplicates {
        remove_nulls(items, agent);
    }
    match outcome {
        Some(InstallOutcome::Unchanged) if duplicates => Ok(InstallOutcome::Updated),
        Some(o) => Ok(o),
        None => {
            items.push(event_item(agent, stage, command));
            Ok(InstallOutcome::Added)
        }
    }
}

/// Drops duplicate airlock handlers marked `null`, and groups left without handlers.
fn remove_nulls(items: &mut Vec<Json>, agent: Protocol) {
    if agent != Protocol::Copilot {
        for item in items.iter_mut() {
            if let Some(Json::Array(hs)) = item.get_mut("hooks") {
                let had = hs.len();
                hs.retain(|h| *h != Json::Null);
                if had > 0 && hs.is_empty() {
                    *item = Json::Null;
                }
            }
        }
    }
    items.retain(|i| *i != Json::Null);
}

/// True for a command that runs `airlock hook` or `airlock-hook` (any path to the binary, any
/// flags).
pub fn is_airlock_hook(command: &str) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    let lean = words.iter().any(|w| program_name(w) == LEAN);
    lean || words
        .windows(2)
        .any(|w| program_name(w[0]) == "airlock" && w[1] == "hook")
}

/// Writes `contents` to `path` through a temporary file in the same directory and a rename, so a
/// crash leaves either the old file or the new one. The old file is kept as `<path>.bak`.
fn write_atomically(path: &Path, contents: &str, had_file: bool) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "settings.json".to_string());
    let tmp = dir.join(format!(".{name}.airlock-{}.tmp", std::process::id()));
    let result = (|| -> Result<()> {
        let mut f =
            fs::File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
        f.write_all(contents.as_bytes())?;
        f.sync_all()?;
        if had_file {
            if let Ok(meta) = fs::metadata(path) {
                fs::set_permissions(&tmp, meta.permissions())?;
            }
            let backup = dir.join(format!("{name}.bak"));
            fs::copy(path, &backup)
                .with_context(|| format!("cannot write the backup {}", backup.display()))?;
        }
        fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))?;
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Json {
        serde_json::from_str(s).unwrap_or(Json::Null)
    }

    fn text(v: &Json) -> String {
        serde_json::to_string(v).unwrap_or_default()
    }

    #[test]
    fn recognises_airlock_commands() {
        assert!(is_airlock_hook("airlock hook"));
        assert!(is_airlock_hook(
            "/usr/local/bin/airlock hook --agent claude"
        ));
        assert!(is_airlock_hook("'/opt/my tools/airlock' hook"));
        assert!(!is_airlock_hook("airlock check -- ls"));
        assert!(!is_airlock_hook("other-airlock hook"));
        assert!(!is_airlock_hook("python3 hook.py"));
        assert!(is_airlock_hook("/usr/local/bin/airlock-hook --agent codex"));
        assert!(is_airlock_hook("'/opt/my tools/airlock-hook'"));
        assert!(!is_airlock_hook("my-airlock-hook --agent codex"));
        assert!(!is_airlock_hook("airlock-hooks"));
    }

    #[test]
    fn the_lean_binary_runs_without_the_subcommand() {
        assert_eq!(
            hook_command("/opt/bin/airlock-hook", Protocol::Gemini),
            "/opt/bin/airlock-hook --agent gemini"
        );
        assert_eq!(
            hook_command("'/opt/my tools/airlock-hook'", Protocol::Claude),
            "'/opt/my tools/airlock-hook' --agent claude"
        );
        assert_eq!(
            hook_command("/opt/bin/airlock", Protocol::Codex),
            "/opt/bin/airlock hook --agent codex"
        );
    }

    #[test]
    fn merge_moves_an_airlock_hook_entry_to_the_lean_binary() {
        let mut v = parse(
            r#"{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"/b/airlock hook --agent claude"}]}]}}"#,
        );
        assert_eq!(
            merge(&mut v, Protocol::Claude, "/b/airlock-hook --agent claude"),
            Ok(InstallOutcome::Updated)
        );
        let t = text(&v);
        assert!(
            t.contains(r#""command":"/b/airlock-hook --agent claude""#),
            "{t}"
        );
        assert!(!t.contains("airlock hook"), "{t}");
        assert_eq!(
            merge(&mut v, Protocol::Claude, "/b/airlock-hook --agent claude"),
            Ok(InstallOutcome::Unchanged)
        );
    }

    #[test]
    fn merge_adds_once_then_is_unchanged() {
        let mut v = parse(r#"{"model":"x","hooks":{"Stop":[]},"z":1}"#);
        assert_eq!(
            merge(&mut v, Protocol::Claude, "airlock hook --agent claude"),
            Ok(InstallOutcome::Added)
        );
        let once = text(&v);
        assert_eq!(
            merge(&mut v, Protocol::Claude, "airlock hook --agent claude"),
            Ok(InstallOutcome::Unchanged)
        );
        assert_eq!(text(&v), once);
        assert!(
            once.starts_with(r#"{"model":"x","hooks":{"Stop":[],"PreToolUse":[{"matcher":"*""#)
        );
        assert!(once.ends_with(r#""z":1}"#));
    }

    #[test]
    fn merge_updates_the_command_and_drops_duplicates() {
        let mut v = parse(
            r#"{"hooks":{"PreToolUse":[
                {"matcher":"Bash","hooks":[{"type":"command","command":"/old/airlock hook"},
                                           {"type":"command","command":"lint.sh"}]},
                {"matcher":"*","hooks":[{"type":"command","command":"airlock hook --agent claude"}]}
            ]}}"#,
        );
        assert_eq!(
            merge(&mut v, Protocol::Claude, "/new/airlock hook --agent claude"),
            Ok(InstallOutcome::Updated)
        );
        let t = text(&v);
        // one per event: PreToolUse (the old entry, updated), UserPromptSubmit, PostToolUse
        assert_eq!(t.matches("airlock hook").count(), 3, "{t}");
        assert!(t.contains("/new/airlock hook --agent claude"));
        assert!(t.contains("lint.sh"));
    }

    #[test]
    fn merge_refuses_shapes_it_does_not_understand() {
        for bad in [r#"[]"#, r#"{"hooks":[]}"#, r#"{"hooks":{"PreToolUse":{}}}"#] {
            let mut v = parse(bad);
            assert!(
                merge(&mut v, Protocol::Claude, "airlock hook").is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn copilot_entry_is_versioned_and_flat() {
        let mut v = parse(r#"{"hooks":{}}"#);
        assert_eq!(
            merge(&mut v, Protocol::Copilot, "airlock hook --agent copilot"),
            Ok(InstallOutcome::Added)
        );
        assert_eq!(
            text(&v),
            r#"{"version":1,"hooks":{"preToolUse":[{"type":"command","bash":"airlock hook --agent copilot","timeoutSec":90}],"userPromptSubmitted":[{"type":"command","bash":"airlock hook --agent copilot","timeoutSec":90}],"postToolUse":[{"type":"command","bash":"airlock hook --agent copilot","timeoutSec":90}]}}"#
        );
    }

    #[test]
    fn every_event_of_every_agent_is_registered_once() {
        for agent in Protocol::ALL {
            let mut v = parse("{}");
            let cmd = format!("airlock-hook --agent {}", agent.name());
            assert_eq!(merge(&mut v, agent, &cmd), Ok(InstallOutcome::Added));
            assert_eq!(merge(&mut v, agent, &cmd), Ok(InstallOutcome::Unchanged));
            let t = text(&v);
            for stage in Stage::ALL {
                let event = agent.event(stage);
                assert_eq!(t.matches(&format!("\"{event}\"")).count(), 1, "{t}");
            }
            assert_eq!(t.matches("airlock-hook").count(), 3, "{t}");
        }
        // the prompt event takes no tool matcher
        let t = text(&fragment(Protocol::Gemini, "airlock-hook --agent gemini"));
        assert!(t.contains(r#""BeforeAgent":[{"hooks":"#), "{t}");
    }

    #[test]
    fn a_new_file_claims_no_backup() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = d.path().join("sub/settings.json");
        let m = merge_file(&p, Protocol::Claude, "airlock-hook --agent claude")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((m.outcome, m.backup), (InstallOutcome::Added, false));
        assert!(!m.outcome.describe(&p, m.backup).contains(".bak"));
        assert!(!d.path().join("sub/settings.json.bak").exists());
        let m = merge_file(&p, Protocol::Claude, "/other/airlock-hook --agent claude")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((m.outcome, m.backup), (InstallOutcome::Updated, true));
        assert!(m.outcome.describe(&p, m.backup).contains(".bak"));
        assert!(d.path().join("sub/settings.json.bak").exists());
    }
}
