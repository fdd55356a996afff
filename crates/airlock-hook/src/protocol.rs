//! Which agent is calling: each speaks its own hook dialect (field names, event names, answer
//! shape), and at which stage of the turn: the person's prompt, before a tool runs, or the
//! tool's output. Detection looks only at the top-level keys of the input object.

use serde_json::{Map, Value};

/// Where in the agent's turn the hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The person's prompt, before the model reads it.
    Prompt,
    /// A tool call, before it runs.
    Tool,
    /// A tool's output, before the model reads it.
    Output,
}

impl Stage {
    pub const ALL: [Stage; 3] = [Stage::Tool, Stage::Prompt, Stage::Output];
}

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
        self.event(Stage::Tool)
    }

    /// The event name this dialect uses for a stage of the turn.
    pub fn event(self, stage: Stage) -> &'static str {
        match (self, stage) {
            (Protocol::Claude | Protocol::Codex, Stage::Tool) => "PreToolUse",
            (Protocol::Claude | Protocol::Codex, Stage::Prompt) => "UserPromptSubmit",
            (Protocol::Claude | Protocol::Codex, Stage::Output) => "PostToolUse",
            (Protocol::Gemini, Stage::Tool) => "BeforeTool",
            (Protocol::Gemini, Stage::Prompt) => "BeforeAgent",
            (Protocol::Gemini, Stage::Output) => "AfterTool",
            (Protocol::Copilot, Stage::Tool) => "preToolUse",
            (Protocol::Copilot, Stage::Prompt) => "userPromptSubmitted",
            (Protocol::Copilot, Stage::Output) => "postToolUse",
        }
    }

    /// The stage an event name of any dialect stands for.
    pub fn stage_of(event: &str) -> Option<Stage> {
        Protocol::ALL
            .into_iter()
            .find_map(|p| Stage::ALL.into_iter().find(|s| p.event(*s) == event))
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
/// `toolName` is Copilot's camelCase format (a prompt with a numeric `timestamp` and no event
/// name too); `hook_event_name` `BeforeTool`, `BeforeAgent` or `AfterTool` is Gemini; a
/// `turn_id` marks Codex (its extension to Claude's format); any other snake_case tool call is
/// Claude's (Copilot's `PreToolUse` compatibility format included, which takes Claude's answers).
pub fn detect(obj: &Map<String, Value>) -> Option<Protocol> {
    if obj.contains_key("toolName") || obj.contains_key("toolArgs") {
        return Some(Protocol::Copilot);
    }
    match obj.get("hook_event_name").and_then(Value::as_str) {
        Some("BeforeTool" | "AfterTool" | "BeforeAgent") => Some(Protocol::Gemini),
        Some(_) if obj.contains_key("turn_id") => Some(Protocol::Codex),
        Some(_) => Some(Protocol::Claude),
        None if obj.contains_key("tool_name") || obj.contains_key("tool_input") => {
            Some(Protocol::Claude)
        }
        // Copilot's `userPromptSubmitted`: `{timestamp (ms), cwd, prompt}`, no event name.
        None if obj.contains_key("prompt")
            && obj.get("timestamp").is_some_and(Value::is_number) =>
        {
            Some(Protocol::Copilot)
        }
        None => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_event_name_maps_back_to_its_stage() {
        for p in Protocol::ALL {
            for s in Stage::ALL {
                assert_eq!(Protocol::stage_of(p.event(s)), Some(s), "{p:?} {s:?}");
            }
        }
        assert_eq!(Protocol::stage_of("Stop"), None);
    }

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
        let prompt = json!({"timestamp": 1, "cwd": "/w", "prompt": "hi"});
        assert_eq!(d(prompt), Some(Protocol::Copilot));
        let before_agent = json!({"hook_event_name": "BeforeAgent", "prompt": "hi"});
        assert_eq!(d(before_agent), Some(Protocol::Gemini));
        assert_eq!(d(json!({})), None);
    }
}
