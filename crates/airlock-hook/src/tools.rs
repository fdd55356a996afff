//! What a tool call means for airlock: shell tools become shell actions, file-writing tools one
//! file-write action per path, fetch tools network actions, and every other tool a tool call;
//! each is decided by the effective policy (undeclared tools are denied). Only shell tools touch
//! the rule packs, so a Write or Read call never compiles a rule.

use airlock_core::{Action, Assessment, Decision, Finding, ReasonCode, Severity, Tier};
use airlock_policy::{Context, Policy};
use serde_json::{Map, Value};

use crate::input::{ToolCall, bounded};

/// What was checked, for the reason shown to the agent.
#[derive(Debug, Clone, PartialEq)]
pub enum Subject {
    /// A shell command line.
    Command(String),
    /// The files a write or edit touches.
    Paths(Vec<String>),
    /// Only the tool name says what happens.
    Tool,
    /// The hook input itself could not be read.
    Unreadable,
}

/// The outcome for one tool call: the assessment and what it is about.
#[derive(Debug, Clone, PartialEq)]
pub struct HookVerdict {
    pub tool: String,
    pub subject: Subject,
    pub assessment: Assessment,
}

/// The verdict when the policy files do not load: every call is denied until they are fixed.
pub fn policy_failed(call: &ToolCall, why: &str) -> HookVerdict {
    HookVerdict {
        tool: call.tool.clone(),
        subject: Subject::Tool,
        assessment: airlock_policy::load_error(why),
    }
}

/// Decides on one tool call with the effective policy. `home` is the user's home directory,
/// for `~` in paths.
pub fn assess_with(policy: &Policy, call: &ToolCall, home: Option<&str>) -> HookVerdict {
    assess_in(policy, call, home, false)
}

/// [`assess_with`] for a session that may be in crisis mode (`crisis`): the policy's crisis
/// support tools are then never gated and its crisis decision tools need a person.
pub fn assess_in(
    policy: &Policy,
    call: &ToolCall,
    home: Option<&str>,
    crisis: bool,
) -> HookVerdict {
    let name = call.tool.to_ascii_lowercase();
    let ctx = Context {
        agent: std::env::var("AIRLOCK_PRINCIPAL")
            .ok()
            .filter(|a| !a.is_empty())
            .or_else(|| Some(call.protocol.name().to_string())),
        session: std::env::var("AIRLOCK_SESSION").ok(),
        channel: Some(airlock_policy::Channel::Terminal),
        cwd: call.cwd.clone(),
        home: home.map(str::to_string),
        crisis,
        ..Context::default()
    }
    .with_env_facts();
    let (subject, assessment) = match kind(&name, &call.args) {
        Kind::Shell => match command_of(&call.args) {
            Some(cmd) => {
                let action = Action::shell(cmd.clone());
                let ctx = ctx.clone().with_project_hosts(&action);
                let a = policy.evaluate(&action, &ctx).assessment();
                (Subject::Command(cmd), a)
            }
            None => (
                Subject::Tool,
                malformed(&call.tool, "has no `command` string"),
            ),
        },
        Kind::Write => {
            let paths = write_paths(&name, &call.args);
            if paths.is_empty() {
                let a = if name == "apply_patch" {
                    unparsed_patch()
                } else {
                    malformed(&call.tool, "names no file (`file_path` or `path`)")
                };
                (Subject::Tool, a)
            } else {
                let findings = paths
                    .iter()
                    .flat_map(|p| {
                        let write = Action::FileWrite {
                            path: resolve(p, call.cwd.as_deref(), home),
                            content: None,
                            edit: name != "write" && name != "write_file",
                        };
                        policy.evaluate(&write, &ctx).reasons
                    })
                    .collect::<Vec<_>>();
                let mut a = Assessment::from_findings(findings, Decision::Allow);
                // A write outside sensitive paths is still a write: tier 1, never tier 0.
                a.tier = a.tier.max(Tier::Low);
                (Subject::Paths(paths), a)
            }
        }
        Kind::ReadOnly => {
            let fetch = airlock_policy::pattern::is_fetch_tool(&name)
                .then(|| call.args.get("url").and_then(Value::as_str))
                .flatten();
            let action = match fetch {
                Some(url) => Action::NetworkFetch {
                    url: url.to_string(),
                    method: "GET".into(),
                },
                None => Action::Tool {
                    // an editor in view mode is the agent's file viewer
                    tool: if name.starts_with("str_replace") {
                        "view".to_string()
                    } else {
                        call.tool.clone()
                    },
                    arguments: Value::Object(call.args.clone()),
                },
            };
            (Subject::Tool, policy.evaluate(&action, &ctx).assessment())
        }
        Kind::Unsupported => {
            let action = Action::Tool {
                tool: call.tool.clone(),
                arguments: Value::Object(call.args.clone()),
            };
            (Subject::Tool, policy.evaluate(&action, &ctx).assessment())
        }
    };
    HookVerdict {
        tool: call.tool.clone(),
        subject,
        assessment,
    }
}

/// The one action a call stands for, as the daemon is asked to decide it: the shell command,
/// the single file written, the fetch, or the tool call. `None` when the call is several
/// actions (a patch touching many files) or unreadable; the agent's own prompt then asks.
pub fn action_of(call: &ToolCall) -> Option<Action> {
    let name = call.tool.to_ascii_lowercase();
    match kind(&name, &call.args) {
        Kind::Shell => command_of(&call.args).map(|command| Action::Shell {
            command,
            cwd: call.cwd.clone(),
        }),
        Kind::Write => match write_paths(&name, &call.args).as_slice() {
            [one] => Some(Action::FileWrite {
                path: resolve(
                    one,
                    call.cwd.as_deref(),
                    std::env::var("HOME").ok().as_deref(),
                ),
                content: None,
                edit: name != "write" && name != "write_file",
            }),
            _ => None,
        },
        Kind::ReadOnly | Kind::Unsupported => {
            let url = airlock_policy::pattern::is_fetch_tool(&name)
                .then(|| call.args.get("url").and_then(Value::as_str))
                .flatten();
            Some(match url {
                Some(url) => Action::NetworkFetch {
                    url: url.to_string(),
                    method: "GET".into(),
                },
                None => Action::Tool {
                    tool: call.tool.clone(),
                    arguments: Value::Object(call.args.clone()),
                },
            })
        }
    }
}

/// The command line of a shell tool call, when it is one.
pub fn shell_command(call: &ToolCall) -> Option<String> {
    match kind(&call.tool.to_ascii_lowercase(), &call.args) {
        Kind::Shell => command_of(&call.args),
        _ => None,
    }
}

/// True when the call is a shell command, the only kind whose analysis can take long (rule
/// compilation, parsing of adversarial input).
pub fn is_shell(call: &ToolCall) -> bool {
    matches!(
        kind(&call.tool.to_ascii_lowercase(), &call.args),
        Kind::Shell
    )
}

/// The verdict when the analysis of `call` missed its deadline: a person must look.
pub fn timed_out(call: &ToolCall, limit: std::time::Duration) -> HookVerdict {
    let subject = match command_of(&call.args) {
        Some(cmd) => Subject::Command(cmd),
        None => Subject::Tool,
    };
    let finding = Finding::new(
        "hook.analysis_timeout",
        ReasonCode::AnalysisTimeout,
        Decision::Ask,
        Tier::Medium,
        Severity::Medium,
        format!(
            "the analysis of this call did not finish within {} ms, so nothing is known about \
             it; a person must confirm it. A simpler command (fewer nested groups or \
             substitutions) can be checked automatically.",
            limit.as_millis()
        ),
    )
    .with_remediation("Read the command before approving; report it if it is ordinary.");
    HookVerdict {
        tool: call.tool.clone(),
        subject,
        assessment: Assessment::from_findings(vec![finding], Decision::Ask),
    }
}

enum Kind {
    Shell,
    Write,
    ReadOnly,
    Unsupported,
}

/// Tool names across Claude Code, Codex, Gemini CLI and Copilot, lowercased. Shell tools are
/// the one list the proxy and the MCP gateway read too (`airlock_wire::SHELL_TOOLS`).
fn kind(name: &str, args: &Map<String, Value>) -> Kind {
    match name {
        n if airlock_wire::is_shell_tool(n) => Kind::Shell,
        // Copilot's editor tool also views files.
        "str_replace_editor" | "str_replace_based_edit_tool"
            if args.get("command").and_then(Value::as_str) == Some("view") =>
        {
            Kind::ReadOnly
        }
        "write"
        | "edit"
        | "multiedit"
        | "notebookedit"
        | "write_file"
        | "replace"
        | "create"
        | "edit_file"
        | "str_replace_editor"
        | "str_replace_based_edit_tool"
        | "apply_patch"
        | "save_memory" => Kind::Write,
        "read"
        | "glob"
        | "grep"
        | "ls"
        | "websearch"
        | "webfetch"
        | "todowrite"
        | "todoread"
        | "notebookread"
        | "bashoutput"
        | "exitplanmode"
        | "task"
        | "agent"
        | "read_file"
        | "read_many_files"
        | "list_directory"
        | "search_file_content"
        | "grep_search"
        | "google_web_search"
        | "web_fetch"
        | "view"
        | "rg"
        | "web_search"
        | "ask_user"
        | "askuserquestion"
        | "update_todo"
        | "write_todos"
        | "report_intent" => Kind::ReadOnly,
        _ => Kind::Unsupported,
    }
}

/// The command line of a shell tool: a string, or an argv such as `["bash", "-lc", "…"]`.
fn command_of(args: &Map<String, Value>) -> Option<String> {
    match args.get("command")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => {
            let argv = items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()?;
            match argv.as_slice() {
                [] => None,
                [sh, flag, script]
                    if matches!(sh.rsplit('/').next(), Some("bash" | "sh" | "zsh"))
                        && matches!(flag.as_str(), "-c" | "-lc") =>
                {
                    Some(script.clone())
                }
                _ => Some(argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")),
            }
        }
        _ => None,
    }
}

/// Single-quotes an argument when the shell would otherwise split or expand it.
fn quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// Every file a write tool touches.
fn write_paths(name: &str, args: &Map<String, Value>) -> Vec<String> {
    if name == "save_memory" {
        // Gemini CLI appends memories to its own instructions file.
        return vec!["~/.gemini/GEMINI.md".to_string()];
    }
    if name == "apply_patch" {
        return patch_paths(args);
    }
    const KEYS: &[&str] = &[
        "file_path",
        "path",
        "notebook_path",
        "absolute_path",
        "filePath",
        "target_file",
    ];
    KEYS.iter()
        .filter_map(|k| args.get(*k).and_then(Value::as_str))
        .filter(|p| !p.trim().is_empty())
        .take(1)
        .map(str::to_string)
        .collect()
}

/// File names in an `apply_patch` body (Codex's `*** Update File:` form or a unified diff).
fn patch_paths(args: &Map<String, Value>) -> Vec<String> {
    let body = ["input", "patch", "command"]
        .iter()
        .find_map(|k| match args.get(*k) {
            Some(Value::String(s)) => Some(s.as_str()),
            Some(Value::Array(a)) => a.iter().rev().find_map(Value::as_str),
            _ => None,
        })
        .unwrap_or("");
    const MARKERS: &[&str] = &[
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    let mut out = collect_after(body, MARKERS);
    if out.is_empty() {
        // A unified diff instead: its target names follow `+++ ` (usually with a `b/` prefix).
        out = collect_after(body, &["+++ "])
            .into_iter()
            .map(|p| p.strip_prefix("b/").map(str::to_string).unwrap_or(p))
            .collect();
    }
    out.retain(|p| p != "/dev/null");
    out
}

/// The rest of each line that starts with one of `markers`, trimmed and without repeats.
fn collect_after(body: &str, markers: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in body.lines() {
        if let Some(rest) = markers.iter().find_map(|m| line.strip_prefix(m)) {
            let p = rest.trim();
            if !p.is_empty() && !out.iter().any(|o| o == p) {
                out.push(p.to_string());
            }
        }
    }
    out
}

/// A relative path is relative to the agent's working directory, when it sent one.
/// The path a write tool names, made absolute: home-relative spellings (`~/x`, `$HOME/x`,
/// `${HOME}/x`, `~user/x`) are expanded the way a shell would, since the sensitive-path table
/// must see the file that is really written; other relative paths are joined to `cwd`.
fn resolve(path: &str, cwd: Option<&str>, home: Option<&str>) -> String {
    if let Some(h) = home.filter(|h| h.starts_with('/')) {
        let h = h.trim_end_matches('/');
        for p in ["~", "$HOME", "${HOME}"] {
            if let Some(rest) = path.strip_prefix(p)
                && (rest.is_empty() || rest.starts_with('/'))
            {
                return format!("{h}{rest}");
            }
        }
    }
    // `~user/x`: another account's home, by the usual layout (the table treats `/home/<user>`
    // and `/root` as homes)
    if let Some(rest) = path.strip_prefix('~') {
        let (user, tail) = rest.split_once('/').map_or((rest, ""), |(u, t)| (u, t));
        if !user.is_empty()
            && user
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        {
            let dir = if user == "root" {
                "/root".to_string()
            } else {
                format!("/home/{user}")
            };
            return if tail.is_empty() {
                dir
            } else {
                format!("{dir}/{tail}")
            };
        }
    }
    match cwd {
        Some(cwd) if cwd.starts_with('/') && !path.starts_with(['/', '~', '$']) => {
            format!("{}/{}", cwd.trim_end_matches('/'), path)
        }
        _ => path.to_string(),
    }
}

fn malformed(tool: &str, what: &str) -> Assessment {
    Assessment::from_findings(
        vec![
            Finding::new(
                "hook.malformed_tool_input",
                ReasonCode::MalformedInput,
                Decision::Deny,
                Tier::Low,
                Severity::Medium,
                format!(
                    "the `{}` call {what}, so it cannot be checked",
                    bounded(tool)
                ),
            )
            .with_remediation("Check that the agent and airlock agree on this tool's arguments."),
        ],
        Decision::Deny,
    )
}

fn unparsed_patch() -> Assessment {
    Assessment::from_findings(
        vec![
            Finding::new(
                "hook.unparsed_patch",
                ReasonCode::ParseError,
                Decision::Ask,
                Tier::Low,
                Severity::Medium,
                "no file names could be read from this patch, so the files it changes are \
                 unknown; a person must confirm it",
            )
            .with_remediation("Look at which files the patch touches before approving."),
        ],
        Decision::Ask,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Protocol;
    use serde_json::json;

    fn call(tool: &str, args: Value) -> ToolCall {
        ToolCall {
            protocol: Protocol::Claude,
            tool: tool.to_string(),
            args: args.as_object().cloned().unwrap_or_default(),
            cwd: Some("/work/proj".to_string()),
            session: None,
        }
    }

    fn decide(tool: &str, args: Value) -> HookVerdict {
        let p = Policy::builtin().unwrap();
        assess_with(&p, &call(tool, args), Some("/home/dev"))
    }

    #[test]
    fn writes_to_sensitive_paths_are_findings() {
        let v = decide(
            "Write",
            json!({"file_path": "/home/dev/.ssh/authorized_keys"}),
        );
        assert_eq!(v.assessment.decision, Decision::Deny);
        assert_eq!(v.assessment.reasons[0].code, ReasonCode::SensitivePath);
        let v = decide("replace", json!({"file_path": "~/.bashrc"}));
        assert_eq!(v.assessment.decision, Decision::Ask);
        // Relative to the agent's cwd.
        let v = decide("Edit", json!({"file_path": ".git/hooks/pre-push"}));
        assert_eq!(v.assessment.reasons[0].rule_id, "paths.git_hooks");
        let v = decide("save_memory", json!({"fact": "x"}));
        assert_eq!(v.assessment.decision, Decision::Ask);
    }

    #[test]
    fn home_relative_write_paths_are_expanded() {
        assert_eq!(
            resolve("$HOME/.bashrc", Some("/work/proj"), Some("/home/dev")),
            "/home/dev/.bashrc"
        );
        assert_eq!(
            resolve("${HOME}/.ssh/authorized_keys", None, Some("/home/dev/")),
            "/home/dev/.ssh/authorized_keys"
        );
        assert_eq!(resolve("~", None, Some("/home/dev")), "/home/dev");
        assert_eq!(resolve("~bob/.bashrc", None, None), "/home/bob/.bashrc");
        assert_eq!(resolve("~root/.ssh/x", None, None), "/root/.ssh/x");
        assert_eq!(
            resolve("$HOMEX/a", Some("/w"), Some("/home/dev")),
            "$HOMEX/a"
        );
        assert_eq!(resolve("src/a.rs", Some("/w"), None), "/w/src/a.rs");
        for (path, rule) in [
            ("$HOME/.bashrc", "paths.shell_startup"),
            ("${HOME}/.ssh/authorized_keys", "paths.ssh_authorized_keys"),
            ("~bob/.bashrc", "paths.shell_startup"),
            ("$HOME/.claude/settings.json", "paths.agent_config"),
            ("$HOME/.local/bin/git", "paths.path_shadowing"),
            ("CLAUDE.md", "paths.agent_instructions"),
            (".github/workflows/release.yml", "paths.project_automation"),
        ] {
            let v = decide("Write", json!({"file_path": path, "content": ""}));
            assert!(v.assessment.decision >= Decision::Ask, "{path}: {v:?}");
            assert!(
                v.assessment.reasons.iter().any(|r| r.rule_id == rule),
                "{path}: {v:?}"
            );
        }
    }

    #[test]
    fn ordinary_writes_allow_at_tier_one() {
        let v = decide(
            "Write",
            json!({"file_path": "/work/proj/src/lib.rs", "content": ""}),
        );
        assert_eq!(v.assessment.decision, Decision::Allow);
        assert_eq!(v.assessment.tier, Tier::Low);
        assert_eq!(
            v.subject,
            Subject::Paths(vec!["/work/proj/src/lib.rs".into()])
        );
    }

    #[test]
    fn read_only_tools_allow_at_tier_zero() {
        for t in [
            "Read",
            "Glob",
            "Grep",
            "LS",
            "WebSearch",
            "read_file",
            "view",
        ] {
            let v = decide(t, json!({"file_path": "/work/proj/src/lib.rs"}));
            assert_eq!(v.assessment.decision, Decision::Allow, "{t}");
            assert_eq!(v.assessment.tier, Tier::Safe, "{t}");
            // reading a private key is a behaviour the risk score weighs: a person confirms
            let v = decide(t, json!({"file_path": "/home/dev/.ssh/id_rsa"}));
            assert_eq!(v.assessment.decision, Decision::Ask, "{t}");
            assert!(
                v.assessment
                    .reasons
                    .iter()
                    .any(|f| f.rule_id == "behaviour.credential_read"),
                "{t}"
            );
        }
        let v = decide(
            "str_replace_editor",
            json!({"command": "view", "path": "/etc/passwd"}),
        );
        assert_eq!(v.assessment.decision, Decision::Allow);
        let v = decide(
            "str_replace_editor",
            json!({"command": "create", "path": "/etc/passwd"}),
        );
        assert_eq!(v.assessment.decision, Decision::Deny);
    }

    #[test]
    fn undeclared_tools_are_denied_until_a_policy_declares_them() {
        let v = decide("mcp__github__create_issue", json!({}));
        assert_eq!(v.assessment.decision, Decision::Deny);
        assert_eq!(v.assessment.reasons[0].code, ReasonCode::ToolUndeclared);
        assert!(v.assessment.reasons[0].message.contains("declare"));
        assert_eq!(
            decide("powershell", json!({})).assessment.decision,
            Decision::Deny
        );
        let layer = airlock_policy::Layer::from_str(
            airlock_policy::LayerKind::User,
            "test",
            "[[tools]]\nname = \"mcp__github__*\"\ndecision = \"ask\"\n[[rules]]\nid = \"no-search\"\ntool = \"websearch\"\ndecision = \"deny\"\n[[rules]]\nid = \"no-paste\"\nnetwork = \"*.pastebin.example\"\ndecision = \"deny\"\n",
            None,
        )
        .unwrap();
        let p = Policy::from_layers(vec![layer]).unwrap();
        let with = |tool: &str, args: Value| assess_with(&p, &call(tool, args), Some("/home/dev"));
        assert_eq!(
            with("mcp__github__create_issue", json!({}))
                .assessment
                .decision,
            Decision::Ask
        );
        // user rules reach the agents' own tools, whatever their case
        assert_eq!(
            with("WebSearch", json!({"query": "x"})).assessment.decision,
            Decision::Deny
        );
        assert_eq!(
            with("WebFetch", json!({"url": "https://a.pastebin.example/raw"}))
                .assessment
                .decision,
            Decision::Deny
        );
        assert_eq!(
            with("WebFetch", json!({"url": "https://docs.rs/x"}))
                .assessment
                .decision,
            Decision::Allow
        );
    }

    #[test]
    fn missing_arguments_deny() {
        let v = decide("Bash", json!({"description": "x"}));
        assert_eq!(v.assessment.decision, Decision::Deny);
        assert_eq!(v.assessment.reasons[0].code, ReasonCode::MalformedInput);
        let v = decide("Write", json!({"content": "x"}));
        assert_eq!(v.assessment.decision, Decision::Deny);
        let v = decide("apply_patch", json!({"input": "garbage"}));
        assert_eq!(v.assessment.decision, Decision::Ask);
    }

    #[test]
    fn shell_tools_are_the_shared_list() {
        for name in airlock_wire::SHELL_TOOLS {
            assert!(matches!(kind(name, &Map::new()), Kind::Shell), "{name}");
        }
        assert!(!matches!(kind("write_file", &Map::new()), Kind::Shell));
    }

    #[test]
    fn shell_commands_go_to_the_analyser() {
        let v = decide("Bash", json!({"command": "ls -la"}));
        assert_eq!(v.subject, Subject::Command("ls -la".into()));
        assert_eq!(v.assessment, airlock_shell::analyse("ls -la"));
        let v = decide(
            "local_shell",
            json!({"command": ["bash", "-lc", "echo hi"]}),
        );
        assert_eq!(v.subject, Subject::Command("echo hi".into()));
        let v = decide("exec_command", json!({"command": ["rm", "-rf", "my dir"]}));
        assert_eq!(v.subject, Subject::Command("rm -rf 'my dir'".into()));
    }

    #[test]
    fn patch_paths_are_read() {
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: \
                     /home/dev/.zshrc\n+echo hi\n*** End Patch\n";
        let v = decide("apply_patch", json!({"input": patch}));
        assert_eq!(
            v.subject,
            Subject::Paths(vec!["src/a.rs".into(), "/home/dev/.zshrc".into()])
        );
        assert_eq!(v.assessment.decision, Decision::Ask);
        let diff = "--- a/x\n+++ b/.claude/settings.json\n@@\n";
        let v = decide("apply_patch", json!({"command": ["apply_patch", diff]}));
        assert_eq!(v.assessment.decision, Decision::Deny);
    }
}
