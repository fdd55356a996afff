//! Which agent is calling: each speaks its own hook dialect (field names, event name, answer
//! shape). Detection looks only at the top-level keys of the input object.

use serde_json::{Map, Value};

/// The hook dialects airlock answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Claude Code `PreToolUse` (also GitHub Copilot CLI configured with `PreToolUse`).
    Claude,
    /// OpenAI Codex `PreToolUse`: Claude's input plus `turn_id`; no `allow` or `ask` answers.
    Codex,
    /// Gemini CLI `BeforeTool`.
    Gemini,
    /// GitHub Copilot CLI / cloud agent `preToolUse` (camelCase fields, `toolArgs`).
    Copilot,
}

impl Protocol {
    pub const ALL: [Protocol; 4] = [
        Protocol::Claude,
        Protocol::Codex,
        Protocol::Gemini,
        Protocol::Copilot,
    ];

    /// Looks a dialect up by its command-line name.
    pub fn parse(s: &str) -> Option<Protocol> {
        Protocol::ALL.into_iter().find(|p| p.name() == s)
    }

    pub fn name(self) -> &'static str {
        match self {
            Protocol::Claude => "claude",
            Protocol::Codex => "codex",
            Protocol::Gemini => "gemini",
            Protocol::Copilot => "copilot",
        }
    }

    /// The event name this dialect uses for "before a tool runs".
    pub fn event_name(self) -> &'static str {
        match self {
            Protocol::Claude | Protocol::Codex => "PreToolUse",
            Protocol::Gemini => "BeforeTool",
            Protocol::Copilot => "preToolUse",
        }
    }

    /// Key of the tool name and of its arguments in the input object.
    pub fn tool_keys(self) -> (&'static str, &'static str) {
        match self {
            Protocol::Copilot => ("toolName", "toolArgs"),
            _ => ("tool_name", "tool_input"),
        }
    }
}

/// Guesses the dialect from the input's keys, or `None` when nothing fits.
///
/// `toolName` is Copilot's camelCase format; `hook_event_name: "BeforeTool"` is Gemini; a
/// `turn_id` marks Codex (its extension to Claude's format); any other snake_case tool call is
/// Claude's (Copilot's `PreToolUse` compatibility format included, which takes Claude's answers).
pub fn detect(obj: &Map<String, Value>) -> Option<Protocol> {
    if obj.contains_key("toolName") || obj.contains_key("toolArgs") {
        return Some(Protocol::Copilot);
    }
    match obj.get("hook_event_name").and_then(Value::as_str) {
        Some("BeforeTool") | Some("AfterTool") => Some(Protocol::Gemini),
        Some(_) if obj.contains_key("turn_id") => Some(Protocol::Codex),
        Some(_) => Some(Protocol::Claude),
        None if obj.contains_key("tool_name") || obj.contains_key("tool_input") => {
            Some(Protocol::Claude)
        }
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn d(v: Value) -> Option<Protocol> {
        v.as_object().and_then(detect)
    }

    #[test]
    fn detects_each_dialect() {
        let claude =
            json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}});
        let codex = json!({"hook_event_name": "PreToolUse", "turn_id": "t", "tool_name": "Bash"});
        let gemini = json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command"});
        let copilot = json!({"timestamp": 1, "toolName": "bash", "toolArgs": "{}"});
        assert_eq!(d(claude), Some(Protocol::Claude));
        assert_eq!(d(codex), Some(Protocol::Codex));
        assert_eq!(d(gemini), Some(Protocol::Gemini));
        assert_eq!(d(copilot), Some(Protocol::Copilot));
        assert_eq!(d(json!({"tool_name": "Bash"})), Some(Protocol::Claude));
        assert_eq!(d(json!({"hello": 1})), None);
        assert_eq!(d(json!({})), None);
    }
}
