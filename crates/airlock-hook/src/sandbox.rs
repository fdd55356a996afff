//! The hook's part in containment. Two things:
//!
//! - A tool call that asks to run outside a sandbox (Claude Code's `dangerouslyDisableSandbox:
//!   true`, the escape hatch models reach for after a sandboxed failure) is never silent: it is a
//!   tier-3 ask (`SANDBOX_ESCAPE`), whatever else was decided.
//! - Where the user enables it (`AIRLOCK_SANDBOX=on` in the hook's environment; off by default),
//!   an allowed Claude Code `Bash` call is answered with an `updatedInput` whose command runs
//!   under `airlock run` (profile `AIRLOCK_SANDBOX_PROFILE`, grants `AIRLOCK_SANDBOX_GRANTS`,
//!   comma-separated), so the command the person's policy allowed runs confined.

use airlock_core::{Decision, Finding, ReasonCode, Severity, Tier};
use serde_json::{Map, Value};

use crate::input::ToolCall;
use crate::protocol::Protocol;
use crate::tools;

/// The tool-input field with which Claude Code asks to run a command outside its sandbox.
pub const ESCAPE_FIELD: &str = "dangerouslyDisableSandbox";

/// The finding for a call that asks to run unsandboxed, if it does.
pub fn escape_finding(call: &ToolCall) -> Option<Finding> {
    let asks = call
        .args
        .get(ESCAPE_FIELD)
        .is_some_and(|v| v.as_bool() == Some(true) || v.as_str() == Some("true"));
    asks.then(|| {
        Finding::new(
            "sandbox.escape",
            ReasonCode::SandboxEscape,
            Decision::Ask,
            Tier::High,
            Severity::High,
            format!(
                "the call sets {ESCAPE_FIELD}: it asks to run outside the sandbox, which a person must allow"
            ),
        )
        .with_remediation(
            "Run the command inside the sandbox; if it needs a host or a path the sandbox does \
             not open, ask the user for a network or write grant (`airlock grant add --network \
             HOST` / `--write PATH`) instead of leaving the sandbox.",
        )
    })
}

/// The switch and its settings, read from the hook's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrap {
    /// The `airlock` program to run (beside the hook binary, else `airlock` on PATH).
    pub program: String,
    pub profile: Option<String>,
    pub grants: Vec<String>,
}

impl Wrap {
    /// `Some` when `AIRLOCK_SANDBOX` is `on` (or `1`, `true`).
    pub fn from_env() -> Option<Wrap> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let on = var("AIRLOCK_SANDBOX")
            .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "on" | "1" | "true"));
        if !on {
            return None;
        }
        let program = crate::sibling("airlock")
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "airlock".to_string());
        Some(Wrap {
            program,
            profile: var("AIRLOCK_SANDBOX_PROFILE"),
            grants: var("AIRLOCK_SANDBOX_GRANTS")
                .map(|g| {
                    g.split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                })
                .unwrap_or_default(),
        })
    }

    /// The rewritten tool input for an allowed Claude Code shell call: the same fields, the
    /// command run by `airlock run … -- bash -c 'COMMAND'`. `None` when the call is not one to
    /// wrap (another agent or tool, a command array, a call that asked to leave the sandbox).
    pub fn rewrite(&self, call: &ToolCall) -> Option<Map<String, Value>> {
        if call.protocol != Protocol::Claude || !tools::is_shell(call) {
            return None;
        }
        if escape_finding(call).is_some() {
            return None;
        }
        let Some(Value::String(command)) = call.args.get("command") else {
            return None;
        };
        let mut line = format!("{} run", quote(&self.program));
        if let Some(p) = &self.profile {
            line.push_str(&format!(" --profile {}", quote(p)));
        }
        for g in &self.grants {
            line.push_str(&format!(" --grant {}", quote(g)));
        }
        line.push_str(" -- bash -c ");
        line.push_str(&quote(command));
        let mut args = call.args.clone();
        args.insert("command".into(), Value::String(line));
        Some(args)
    }
}

/// One POSIX shell word: single quotes, with each `'` written as `'\''`.
pub fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-=:,+@%".contains(&b))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(json: &str) -> ToolCall {
        crate::input::parse(json.as_bytes(), None)
            .map_err(|e| e.message)
            .unwrap_or_else(|m| panic!("{m}"))
    }

    #[test]
    fn escapes_are_found() {
        let c = call(
            r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","dangerouslyDisableSandbox":true}}"#,
        );
        let f = escape_finding(&c).unwrap_or_else(|| panic!("no finding"));
        assert_eq!(f.code, ReasonCode::SandboxEscape);
        assert_eq!((f.decision, f.tier), (Decision::Ask, Tier::High));
        let c = call(
            r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","dangerouslyDisableSandbox":false}}"#,
        );
        assert!(escape_finding(&c).is_none());
    }

    #[test]
    fn rewrite_keeps_the_other_fields_and_quotes_the_command() {
        let w = Wrap {
            program: "/opt/air lock/airlock".into(),
            profile: Some("dev".into()),
            grants: vec!["gr_1".into()],
        };
        let c = call(
            r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo 'a b' && ls","description":"list","timeout":5000}}"#,
        );
        let args = w.rewrite(&c).unwrap_or_default();
        assert_eq!(
            args["command"],
            r#"'/opt/air lock/airlock' run --profile dev --grant gr_1 -- bash -c 'echo '\''a b'\'' && ls'"#
        );
        assert_eq!(args["description"], "list");
        assert_eq!(args["timeout"], 5000);
        // Not Claude's shell tool, or asking to leave the sandbox: left alone.
        let write = call(
            r#"{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/w/a","content":"x"}}"#,
        );
        assert!(w.rewrite(&write).is_none());
        let escape = call(
            r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","dangerouslyDisableSandbox":true}}"#,
        );
        assert!(w.rewrite(&escape).is_none());
    }

    #[test]
    fn quoting_round_trips_through_a_shell() {
        for s in ["plain", "a b", "it's", "$(x) `y` \"z\" \\ ;|&", ""] {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("printf %s {}", quote(s)))
                .output();
            if let Ok(out) = out {
                assert_eq!(String::from_utf8_lossy(&out.stdout), s);
            }
        }
    }
}
