//! Hook input: the bytes an agent writes on stdin become one event of the turn (a tool call, the
//! person's prompt, or a tool's output), or an input error that still knows, when it can, which
//! dialect and event to answer in (so the refusal reaches the agent in a shape it understands).

use airlock_core::ReasonCode;
use serde_json::{Map, Value};

use crate::protocol::{Protocol, Stage, detect};
use crate::turn::{Output, Prompt};

/// Largest tool call or prompt accepted (1 MiB). Real ones are far smaller; anything bigger is
/// refused rather than analysed in part.
pub const MAX_INPUT: usize = 1 << 20;

/// Largest hook input read from stdin (16 MiB): a tool's output (a file read, a command's
/// output) can be large, and is then scanned in bounded windows (`turn::text`). Past this the
/// input is refused unread.
pub const MAX_EVENT_INPUT: usize = 16 << 20;

/// One hook event, whatever the dialect.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Tool(ToolCall),
    Prompt(Prompt),
    Output(Output),
}

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
    /// The event to answer, if it could be told.
    pub stage: Option<Stage>,
}

impl InputError {
    fn new(code: ReasonCode, message: impl Into<String>, protocol: Option<Protocol>) -> Self {
        InputError {
            code,
            message: message.into(),
            protocol,
            stage: None,
        }
    }

    fn at(mut self, stage: Stage) -> Self {
        self.stage = Some(stage);
        self
    }
}

/// Parses raw hook input that must be a tool call (before it runs). `forced` is the dialect
/// named on the command line (`--agent`), which wins over detection.
pub fn parse(bytes: &[u8], forced: Option<Protocol>) -> Result<ToolCall, InputError> {
    match parse_event(bytes, forced)? {
        Event::Tool(call) => Ok(call),
        Event::Prompt(p) => Err(wrong_stage(p.protocol, Stage::Prompt)),
        Event::Output(o) => Err(wrong_stage(o.protocol, Stage::Output)),
    }
}

fn wrong_stage(protocol: Protocol, stage: Stage) -> InputError {
    InputError::new(
        ReasonCode::MalformedInput,
        format!(
            "expected a tool call (`{}`), got the `{}` event",
            protocol.event(Stage::Tool),
            protocol.event(stage)
        ),
        Some(protocol),
    )
    .at(stage)
}

/// Parses raw hook input of any stage the hook handles. `forced` is the dialect named on the
/// command line (`--agent`), which wins over detection.
pub fn parse_event(bytes: &[u8], forced: Option<Protocol>) -> Result<Event, InputError> {
    if bytes.len() > MAX_EVENT_INPUT {
        return Err(InputError::new(
            ReasonCode::InputTooLarge,
            format!("hook input is larger than the {MAX_EVENT_INPUT}-byte limit"),
            forced,
        ));
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            // Still try to tell the dialect, so the refusal is in the agent's own shape.
            let lossy = String::from_utf8_lossy(bytes);
            let obj = serde_json::from_str::<Value>(&lossy).ok();
            let obj = obj.as_ref().and_then(Value::as_object);
            let sniffed = obj.and_then(detect);
            let mut err = InputError::new(
                ReasonCode::NotUtf8,
                format!(
                    "hook input is not valid UTF-8 (first bad byte at offset {})",
                    e.valid_up_to()
                ),
                forced.or(sniffed),
            );
            err.stage = obj
                .and_then(|o| o.get("hook_event_name"))
                .and_then(Value::as_str)
                .and_then(Protocol::stage_of);
            return Err(err);
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
    let stage = match obj.get("hook_event_name") {
        Some(event) => match event.as_str() {
            Some(name) => Protocol::stage_of(name).ok_or_else(|| {
                let handled: Vec<String> = Stage::ALL
                    .iter()
                    .map(|s| format!("`{}`", protocol.event(*s)))
                    .collect();
                // answered as a tool call, as before this hook handled other events: an exit
                // 2 would mean "keep going" to an agent's stop event
                InputError::new(
                    ReasonCode::MalformedInput,
                    format!(
                        "`airlock hook` handles {}, but got the `{}` event: register it under \
                         those",
                        handled.join(", "),
                        bounded(name)
                    ),
                    Some(protocol),
                )
                .at(Stage::Tool)
            })?,
            None => {
                return Err(InputError::new(
                    ReasonCode::MalformedInput,
                    "`hook_event_name` is not a string",
                    Some(protocol),
                )
                .at(Stage::Tool));
            }
        },
        // Copilot names no event: its output event carries `toolResult`, its prompt event a
        // `prompt` and no tool.
        None if obj.contains_key("toolResult") => Stage::Output,
        None if obj.contains_key("prompt") && !obj.contains_key("toolName") => Stage::Prompt,
        None => Stage::Tool,
    };
    // Only a tool's output may be larger than a tool call or a prompt.
    if stage != Stage::Output && bytes.len() > MAX_INPUT {
        return Err(InputError::new(
            ReasonCode::InputTooLarge,
            format!("hook input is larger than the {MAX_INPUT}-byte limit"),
            Some(protocol),
        )
        .at(stage));
    }
    let result = match stage {
        Stage::Tool => tool_call(&obj, protocol).map(Event::Tool),
        Stage::Prompt => crate::turn::prompt_of(&obj, protocol).map(Event::Prompt),
        Stage::Output => crate::turn::output_of(&obj, protocol).map(Event::Output),
    };
    result.map_err(|e| e.at(stage))
}

/// The message of an input error about one field, in `protocol`'s shape.
pub fn field_error(protocol: Protocol, message: String) -> InputError {
    InputError::new(ReasonCode::MalformedInput, message, Some(protocol))
}

/// The tool's name (`tool_name`, or Copilot's `toolName`), checked.
pub fn tool_name(obj: &Map<String, Value>, protocol: Protocol) -> Result<String, InputError> {
    let err = |msg: String| field_error(protocol, msg);
    let (name_key, _) = protocol.tool_keys();
    match obj.get(name_key).or_else(|| obj.get(other_key(name_key))) {
        Some(Value::String(s)) if !s.trim().is_empty() && s.len() <= MAX_TOOL_NAME => Ok(s.clone()),
        Some(Value::String(s)) if s.len() > MAX_TOOL_NAME => Err(err(format!(
            "`{name_key}` is longer than {MAX_TOOL_NAME} bytes"
        ))),
        Some(_) => Err(err(format!("`{name_key}` must be a non-empty string"))),
        None => Err(err(format!("`{name_key}` is missing"))),
    }
}

/// The agent's session id (`session_id`, Copilot `sessionId`), when it sent a usable one.
pub fn session_of(obj: &Map<String, Value>) -> Option<String> {
    obj.get("session_id")
        .or_else(|| obj.get("sessionId"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty() && s.len() <= MAX_TOOL_NAME)
        .map(str::to_string)
}

fn tool_call(obj: &Map<String, Value>, protocol: Protocol) -> Result<ToolCall, InputError> {
    let err = |msg: String| field_error(protocol, msg);
    let (_, args_key) = protocol.tool_keys();
    let tool = tool_name(obj, protocol)?;

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
    let session = session_of(obj);
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

pub fn kind_of(v: &Value) -> &'static str {
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
        let e = bad(&vec![b' '; MAX_EVENT_INPUT + 1], Some(Protocol::Gemini));
        assert_eq!(e.code, ReasonCode::InputTooLarge);
        assert_eq!(e.protocol, Some(Protocol::Gemini));
        assert_eq!(e.stage, None);

        // a tool call or a prompt keeps the 1 MiB limit; a tool's output may be larger
        let big = "x".repeat(MAX_INPUT);
        let call = format!(
            r#"{{"hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{{"content":"{big}"}}}}"#
        );
        let e = bad(call.as_bytes(), None);
        assert_eq!(e.code, ReasonCode::InputTooLarge);
        assert_eq!(e.stage, Some(Stage::Tool));
        let prompt = format!(r#"{{"hook_event_name":"UserPromptSubmit","prompt":"{big}"}}"#);
        assert_eq!(bad(prompt.as_bytes(), None).stage, Some(Stage::Prompt));
        let output = format!(
            r#"{{"hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{{}},"tool_response":"{big}"}}"#
        );
        assert!(matches!(
            parse_event(output.as_bytes(), None),
            Ok(Event::Output(_))
        ));

        let e = bad(b"{\"hook_event_name\":\"BeforeTool\",\"x\":\"\xff\"}", None);
        assert_eq!(e.code, ReasonCode::NotUtf8);
        assert_eq!(e.protocol, Some(Protocol::Gemini));

        for input in ["", "  ", "{", "[]", "42", "{\"a\":1}"] {
            let e = bad(input.as_bytes(), None);
            assert_eq!(e.code, ReasonCode::MalformedInput, "{input:?}");
            assert_eq!(e.protocol, None, "{input:?}");
        }

        let cases = [
            r#"{"hook_event_name":"Stop","tool_name":"Bash","tool_input":{}}"#,
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
    fn prompt_and_output_events_of_each_dialect() {
        let ev = |s: &str| match parse_event(s.as_bytes(), None) {
            Ok(e) => e,
            Err(e) => panic!("{}: {}", e.code, e.message),
        };
        let Event::Prompt(p) = ev(
            r#"{"session_id":"s","transcript_path":"/t","cwd":"/w","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":"hi"}"#,
        ) else {
            panic!("not a prompt")
        };
        assert_eq!((p.protocol, p.text.as_str()), (Protocol::Claude, "hi"));
        assert_eq!(p.session.as_deref(), Some("s"));
        let Event::Prompt(p) = ev(
            r#"{"session_id":"g","hook_event_name":"BeforeAgent","timestamp":"2026-11-28T00:00:00Z","prompt":"yo"}"#,
        ) else {
            panic!("not a prompt")
        };
        assert_eq!(p.protocol, Protocol::Gemini);
        let Event::Prompt(p) = ev(r#"{"timestamp":1704614500000,"cwd":"/w","prompt":"fix it"}"#)
        else {
            panic!("not a prompt")
        };
        assert_eq!(p.protocol, Protocol::Copilot);
        let Event::Output(o) = ev(
            r#"{"session_id":"c","turn_id":"t","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"u","tool_input":{"command":"ls"},"tool_response":{"stdout":"a.txt","stderr":""}}"#,
        ) else {
            panic!("not an output")
        };
        assert_eq!((o.protocol, o.tool.as_str()), (Protocol::Codex, "Bash"));
        assert!(o.text.contains("a.txt"));
        let Event::Output(o) = ev(
            r#"{"hook_event_name":"AfterTool","tool_name":"read_file","tool_input":{},"tool_response":{"llmContent":"body","returnDisplay":"shown","error":null}}"#,
        ) else {
            panic!("not an output")
        };
        assert_eq!(o.text, "body");
        let Event::Output(o) = ev(
            r#"{"timestamp":1,"cwd":"/w","toolName":"bash","toolArgs":"{}","toolResult":{"resultType":"success","textResultForLlm":"ok"}}"#,
        ) else {
            panic!("not an output")
        };
        assert_eq!((o.protocol, o.text.as_str()), (Protocol::Copilot, "ok"));
    }

    #[test]
    fn bad_prompt_and_output_events_are_errors_of_their_stage() {
        for (input, stage) in [
            (r#"{"hook_event_name":"UserPromptSubmit"}"#, Stage::Prompt),
            (
                r#"{"hook_event_name":"UserPromptSubmit","prompt":7}"#,
                Stage::Prompt,
            ),
            (
                r#"{"hook_event_name":"BeforeAgent","prompt":null}"#,
                Stage::Prompt,
            ),
            (
                r#"{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{}}"#,
                Stage::Output,
            ),
            (
                r#"{"hook_event_name":"PostToolUse","tool_response":"x"}"#,
                Stage::Output,
            ),
            (
                r#"{"hook_event_name":"AfterTool","tool_name":"t","tool_response":"x"}"#,
                Stage::Output,
            ),
            (r#"{"toolName":"bash","toolResult":"x"}"#, Stage::Output),
        ] {
            let e = bad(input.as_bytes(), None);
            assert_eq!(e.code, ReasonCode::MalformedInput, "{input}");
            assert_eq!(e.stage, Some(stage), "{input}");
            assert!(e.protocol.is_some(), "{input}");
        }
    }

    proptest::proptest! {
        /// Any event of any dialect with any mix of fields: an event, or an error that keeps
        /// the stage its event name says, so the refusal has the event's shape.
        #[test]
        fn events_parse_or_fail_in_their_stage(
            event in proptest::sample::select(vec![
                "PreToolUse", "UserPromptSubmit", "PostToolUse", "BeforeTool", "BeforeAgent",
                "AfterTool", "preToolUse", "userPromptSubmitted", "postToolUse",
            ]),
            prompt in proptest::option::of(proptest::prelude::any::<String>()),
            tool in proptest::option::of("[a-zA-Z_]{0,12}"),
            response in proptest::option::of(proptest::prelude::any::<String>()),
            nested in proptest::prelude::any::<bool>(),
        ) {
            let mut obj = serde_json::Map::new();
            obj.insert("hook_event_name".into(), event.into());
            if let Some(p) = prompt {
                obj.insert("prompt".into(), p.into());
            }
            if let Some(t) = tool {
                obj.insert("tool_name".into(), t.into());
                obj.insert("tool_input".into(), serde_json::json!({}));
            }
            if let Some(r) = response {
                let v = if nested { serde_json::json!({"llmContent": r}) } else { r.into() };
                obj.insert("tool_response".into(), v);
            }
            let bytes = serde_json::to_vec(&obj).unwrap_or_default();
            let stage = Protocol::stage_of(event);
            match parse_event(&bytes, None) {
                Ok(Event::Tool(_)) => proptest::prop_assert_eq!(stage, Some(Stage::Tool)),
                Ok(Event::Prompt(_)) => proptest::prop_assert_eq!(stage, Some(Stage::Prompt)),
                Ok(Event::Output(_)) => proptest::prop_assert_eq!(stage, Some(Stage::Output)),
                Err(e) => {
                    proptest::prop_assert_eq!(e.stage, stage);
                    proptest::prop_assert!(e.protocol.is_some());
                }
            }
        }
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
