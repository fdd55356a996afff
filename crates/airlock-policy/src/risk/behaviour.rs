//! Behaviours the score weighs: the evidence an action gives (its findings, the sensitive-path
//! class of the paths it reads, another agent's files, the agent's instruction files) and the
//! configured behaviours that evidence shows.

use airlock_core::{Action, Finding};

use super::any_glob;
use crate::eval::{Context, resolve};
use crate::tiers::Settings;

/// The dot-directory an agent keeps its configuration, memory and sessions in.
fn own_dir(agent: Option<&str>) -> Option<&'static str> {
    let a = agent?.to_ascii_lowercase();
    [
        ("claude", ".claude"),
        ("codex", ".codex"),
        ("gemini", ".gemini"),
        ("copilot", ".copilot"),
        ("cursor", ".cursor"),
    ]
    .into_iter()
    .find(|(k, _)| a.contains(k))
    .map(|(_, d)| d)
}

const AGENT_DIRS: &[&str] = &[".claude", ".codex", ".gemini", ".copilot", ".cursor"];
const INSTRUCTION_FILES: &[&str] = &[
    "claude.md",
    "claude.local.md",
    "agents.md",
    "gemini.md",
    ".cursorrules",
    "copilot-instructions.md",
];

/// Evidence for behaviours: the rule ids of the findings, plus what the policy sees itself in
/// the paths an action reads or writes: `read.paths.*` for the sensitive-path class of a path
/// a tool reads or a command names, `policy.other_agent` for another agent's directory or
/// session files, `policy.agent_instructions` for a write to an instruction file (`CLAUDE.md`,
/// `AGENTS.md`, …).
///
/// A tool call also gives `tool.NAME` (lower case), and the paths in its arguments count as
/// written when the tool is not declared read-only (`tool_writes`): an MCP filesystem tool
/// writing `~/.claude/settings.json` changes the agent's configuration as a file write does.
pub fn evidence(
    action: &Action,
    ctx: &Context,
    findings: &[Finding],
    commands: &[airlock_shell::Ran],
    tool_writes: bool,
) -> Vec<String> {
    let mut ev: Vec<String> = findings.iter().map(|f| f.rule_id.clone()).collect();
    let mut paths: Vec<(String, bool)> = Vec::new();
    match action {
        Action::FileWrite { path, .. } => paths.push((path.clone(), true)),
        Action::Tool { tool, arguments } => {
            ev.push(format!("tool.{}", tool.to_ascii_lowercase()));
            for k in [
                "file_path",
                "path",
                "absolute_path",
                "filePath",
                "notebook_path",
            ] {
                if let Some(p) = arguments.get(k).and_then(|v| v.as_str()) {
                    paths.push((p.to_string(), tool_writes));
                }
            }
        }
        Action::Shell { .. } => {
            for c in commands {
                for w in c.text.split(' ').skip(1) {
                    let w = w.trim_matches('\'');
                    if !w.starts_with('-') && (w.contains('/') || w.starts_with('.')) {
                        paths.push((w.to_string(), false));
                    }
                }
            }
        }
        _ => {}
    }
    let own = own_dir(ctx.agent.as_deref());
    for (p, write) in paths {
        let resolved = resolve(&p, ctx.cwd.as_deref(), ctx.home.as_deref());
        if let Some(f) = airlock_shell::paths::write_target_finding(&resolved, ctx.home.as_deref())
        {
            ev.push(if write {
                f.rule_id
            } else {
                format!("read.{}", f.rule_id)
            });
        }
        let comps: Vec<&str> = resolved.split('/').collect();
        if let Some(d) = comps.iter().find(|c| AGENT_DIRS.contains(c))
            && own.is_some_and(|o| o != *d)
        {
            ev.push("policy.other_agent".into());
        }
        if comps
            .iter()
            .any(|c| *c == "sessions" || *c == "projects" || *c == "history.jsonl")
            && comps.iter().any(|c| AGENT_DIRS.contains(c))
            && own.is_none_or(|o| !comps.contains(&o))
        {
            ev.push("policy.other_agent".into());
        }
        if write
            && comps
                .last()
                .is_some_and(|b| INSTRUCTION_FILES.contains(&b.to_ascii_lowercase().as_str()))
        {
            ev.push("policy.agent_instructions".into());
        }
    }
    ev.sort();
    ev.dedup();
    ev
}

/// The behaviours `evidence` (and a sent message's text) show: name, weight, why.
pub fn behaviours(s: &Settings, ev: &[String], action: &Action) -> Vec<(String, u32, String)> {
    let text = match action {
        Action::MessageSend { body, .. } => Some(body.as_str()),
        _ => None,
    };
    let mut out = Vec::new();
    for (name, b) in &s.behaviours {
        if b.weight == 0 {
            continue;
        }
        let by_rule = ev.iter().find(|e| any_glob(&b.rules, e).is_some());
        let by_text = text.is_some_and(|t| b.text_matches(t));
        if by_rule.is_none() && !by_text {
            continue;
        }
        let what = if b.message.is_empty() {
            format!("the action shows the behaviour `{name}`")
        } else {
            b.message.clone()
        };
        let why = match by_rule {
            Some(r) => format!("{what} (seen in `{r}`)"),
            None => format!("{what} (seen in the message text)"),
        };
        out.push((name.clone(), b.weight, why));
    }
    out
}
