//! Hook input: the bytes an agent writes on stdin become one tool call, or an input error that
//! still knows, when it can, which dialect to answer in (so the refusal reaches the agent in a
//! shape it understands).

use airlock_core::ReasonCode;
use serde_json::{Map, Value};

use crate::protocol::{Protocol, detect};

/// Largest hook input read from stdin (1 MiB). Real tool calls are far smaller; anything bigger
/// is refused rather than analysed in part.
pub const MAX_INPUT: usize = 1 << 20;

/// Longest tool name accepted (MCP names are `mcp__server__tool`, well under this).
const MAX_TOOL_NAME: usize = 256;

/// One tool call, whatever the dialect it arrived in.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub protocol: Protocol,
    pub tool: String,
    /// The tool's arguments as an object (Copilot's JSON-in-a-string already decoded).
    pub args: Map<String, Value>,
    /// The agent's working directory, when it sent one.
    pub cwd: Option<String>,
    /// The agent's session id (`session_id`, Copilot `sessionId`), when it sent one: the daemon
    /// scopes session approvals to it.
    pub session: Option<String>,
}

/// Input that cannot become a tool call. Never answered with an allow.
#[derive(Debug, Clone, PartialEq)]
pub struct InputError {
    pub code: ReasonCode,
    pub message: String,
    /// The dialect to answer in, if it could be told.
    pub protocol: Option<Protocol>,
}

impl InputError {
    fn new(code: ReasonCode, message: impl Into<String>, protocol: Option<Protocol>) -> Self {
        InputError {
            code,
            message: message.into(),
            protocol,
        }
    }
}

/// Parses raw hook input. `forced` is the dialect named on the command line (`--agent`), which
/// wins over detection.
pub fn parse(bytes: &[u8], forced: Option<Protocol>) -> Result<ToolCall, InputError> {
    if bytes.len() > MAX_INPUT {
        return Err(InputError::new(
            ReasonCode::InputTooLarge,
            format!("hook input is larger than the {MAX_INPUT}-byte limit"),
            forced,
        ));
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            // Still try to tell the dialect, so the refusal is in the agent's own shape.
            let lossy = String::from_utf8_lossy(bytes);
            let sniffed = serde_json::from_str::<Value>(&lossy)
                .ok()
                .and_then(|v| v.as_object().and_then(detect));
            return Err(InputError::new(
                ReasonCode::NotUtf8,
                format!(
                    "hook input is not valid UTF-8 (first bad byte at offset {})",
                    e.valid_up_to()
                ),
                forced.or(sniffed),
            ));
        }
    };
    if text.trim().is_empty() {
        return Err(InputError::new(
            ReasonCode::MalformedInput,
            "hook input is empty: `airlock hook` expects the agent's JSON tool call on stdin",
            forced,
        ));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        InputError::new(
            ReasonCode::MalformedInput,
            format!("hook input is not valid JSON: {e}"),
            forced,
        )
    })?;
    let Value::Object(obj) = value else {
        return Err(InputError::new(
            ReasonCode::MalformedInput,
            format!("hook input must be a JSON object, got {}", kind_of(&value)),
            forced,
        ));
    };
    let protocol = forced.or_else(|| detect(&obj)).ok_or_else(|| {
        InputError::new(
            ReasonCode::MalformedInput,
            "cannot tell which agent sent this hook input: expected `hook_event_name` (Claude \
             Code, Codex, Gemini CLI) or `toolName` (GitHub Copilot)",
            None,
        )
    })?;
    let err = |msg: String| InputError::new(ReasonCode::MalformedInput, msg, Some(protocol));

    if let Some(event) = obj.get("hook_event_name") {
        match event.as_str() {
            Some("PreToolUse" | "BeforeTool" | "preToolUse") => {}
            Some(other) => {
                return Err(err(format!(
                    "`airlock hook` decides before a tool runs, but got the `{}` event: register \
                     it under `{}`",
                    bounded(other),
                    protocol.event_name()
                )));
            }
            None => return Err(err("`hook_event_name` is not a string".to_string())),
        }
    }

    let (name_key, args_key) = protocol.tool_keys();
    let tool = match obj.get(name_key).or_else(|| obj.get(other_key(name_key))) {
        Some(Value::String(s)) if !s.trim().is_empty() && s.len() <= MAX_TOOL_NAME => s.clone(),
        Some(Value::String(s)) if s.len() > MAX_TOOL_NAME => {
            return Err(err(format!(
                "`{name_key}` is longer than {MAX_TOOL_NAME} bytes"
            )));
        }
        Some(_) => return Err(err(format!("`{name_key}` must be a non-empty string"))),
        None => return Err(err(format!("`{name_key}` is missing"))),
    };

    let args = match obj.get(args_key).or_else(|| obj.get(other_key(args_key))) {
        Some(Value::Object(m)) => m.clone(),
        // Copilot sends its arguments as a JSON document inside a string.
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(m)) => m,
            Ok(other) => {
                return Err(err(format!(
                    "`{args_key}` must hold a JSON object, got {}",
                    kind_of(&other)
                )));
            }
            Err(e) => return Err(err(format!("`{args_key}` is not valid JSON: {e}"))),
        },
        None | Some(Value::Null) if protocol == Protocol::Copilot => Map::new(),
        None => return Err(err(format!("`{args_key}` is missing"))),
        Some(other) => {
            return Err(err(format!(
                "`{args_key}` must be an object, got {}",
                kind_of(other)
            )));
        }
    };

    let cwd = obj.get("cwd").and_then(Value::as_str).map(str::to_string);
    let session = obj
        .get("session_id")
        .or_else(|| obj.get("sessionId"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty() && s.len() <= MAX_TOOL_NAME)
        .map(str::to_string);
    Ok(ToolCall {
        protocol,
        tool,
        args,
        cwd,
        session,
    })
}

/// The same field in the other naming style, so a dialect forced with `--agent` still reads
/// input written in the other style.
fn other_key(key: &str) -> &'static str {
    match key {
        "tool_name" => "toolName",
        "toolName" => "tool_name",
        "tool_input" => "toolArgs",
        _ => "tool_input",
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value from the input, bounded and with control characters escaped, for error messages.
pub fn bounded(s: &str) -> String {
    const MAX: usize = 120;
    let mut out = String::new();
    for (n, ch) in s.chars().enumerate() {
        if n >= MAX {
            out.push('…');
            break;
        }
        if ch.is_control() {
            out.extend(ch.escape_default());
        } else {
            out.push(ch);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> ToolCall {
        match parse(s.as_bytes(), None) {
            Ok(c) => c,
            Err(e) => panic!("{}: {}", e.code, e.message),
        }
    }

    fn bad(bytes: &[u8], forced: Option<Protocol>) -> InputError {
        match parse(bytes, forced) {
            Ok(c) => panic!("parsed: {c:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn claude_call() {
        let c = ok(
            r#"{"session_id":"s","transcript_path":"/t","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#,
        );
        assert_eq!(c.protocol, Protocol::Claude);
        assert_eq!(c.tool, "Bash");
        assert_eq!(c.args["command"], "ls");
        assert_eq!(c.cwd.as_deref(), Some("/w"));
    }

    #[test]
    fn copilot_args_in_a_string() {
        let c =
            ok(r#"{"timestamp":1,"cwd":"/w","toolName":"bash","toolArgs":"{\"command\":\"ls\"}"}"#);
        assert_eq!(c.protocol, Protocol::Copilot);
        assert_eq!(c.args["command"], "ls");
        let c = ok(r#"{"toolName":"view","toolArgs":{"path":"a"}}"#);
        assert_eq!(c.args["path"], "a");
        let c = ok(r#"{"toolName":"view"}"#);
        assert!(c.args.is_empty());
    }

    #[test]
    fn forced_dialect_reads_either_naming() {
        let c = parse(
            br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#,
            Some(Protocol::Copilot),
        )
        .map_err(|e| e.message)
        .unwrap_or_else(|m| panic!("{m}"));
        assert_eq!(c.protocol, Protocol::Copilot);
        assert_eq!(c.tool, "Bash");
    }

    #[test]
    fn errors_have_codes_and_keep_the_dialect_when_known() {
        let e = bad(&vec![b' '; MAX_INPUT + 1], Some(Protocol::Gemini));
        assert_eq!(e.code, ReasonCode::InputTooLarge);
        assert_eq!(e.protocol, Some(Protocol::Gemini));

        let e = bad(b"{\"hook_event_name\":\"BeforeTool\",\"x\":\"\xff\"}", None);
        assert_eq!(e.code, ReasonCode::NotUtf8);
        assert_eq!(e.protocol, Some(Protocol::Gemini));

        for input in ["", "  ", "{", "[]", "42", "{\"a\":1}"] {
            let e = bad(input.as_bytes(), None);
            assert_eq!(e.code, ReasonCode::MalformedInput, "{input:?}");
            assert_eq!(e.protocol, None, "{input:?}");
        }

        let cases = [
            r#"{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{}}"#,
            r#"{"hook_event_name":"PreToolUse","tool_input":{}}"#,
            r#"{"hook_event_name":"PreToolUse","tool_name":"","tool_input":{}}"#,
            r#"{"hook_event_name":"PreToolUse","tool_name":7,"tool_input":{}}"#,
            r#"{"hook_event_name":"PreToolUse","tool_name":"Bash"}"#,
            r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":[1]}"#,
            r#"{"hook_event_name":1,"tool_name":"Bash","tool_input":{}}"#,
        ];
        for input in cases {
            let e = bad(input.as_bytes(), None);
            assert_eq!(e.code, ReasonCode::MalformedInput, "{input}");
            assert_eq!(e.protocol, Some(Protocol::Claude), "{input}");
        }
        let e = bad(br#"{"toolName":"bash","toolArgs":"not json"}"#, None);
        assert_eq!(e.protocol, Some(Protocol::Copilot));
        let e = bad(br#"{"toolName":"bash","toolArgs":"[1]"}"#, None);
        assert_eq!(e.code, ReasonCode::MalformedInput);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!(
            "{{\"tool_name\":\"Bash\",\"tool_input\":{}{}}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let e = bad(deep.as_bytes(), None);
        assert_eq!(e.code, ReasonCode::MalformedInput);
    }
}
