//! Shell tools as agents name them, and where their command line is: the one list the proxy,
//! the MCP gateway and the hook read, so a tool that is a shell to one surface is a shell to
//! every surface.

use serde_json::{Map, Value};

/// The shell tools common agents expose (lowercase): OpenAI-compatible agents (`terminal`,
/// `execute_command`, `exec`), Claude Code (`bash`), Gemini CLI (`run_shell_command`), Codex
/// (`shell`, `exec_command`, `local_shell`).
pub const SHELL_TOOLS: &[&str] = &[
    "terminal",
    "bash",
    "shell",
    "run_shell_command",
    "execute_command",
    "exec",
    "exec_command",
    "local_shell",
];

/// The arguments a shell tool's command line is given in, by default.
pub const SHELL_COMMAND_ARGUMENTS: &[&str] = &["command", "cmd", "script"];

/// Whether `name` (any case) is one of [`SHELL_TOOLS`].
pub fn is_shell_tool(name: &str) -> bool {
    SHELL_TOOLS.iter().any(|t| t.eq_ignore_ascii_case(name))
}

/// The one command of a shell tool's `args`, given in exactly one of `keys`: `Err(None)` when
/// none of them is there (or it is not a non-empty string), `Err(Some(names))` when several
/// are, so the caller never decides on one argument while the tool runs another.
pub fn shell_command<'a>(
    args: &'a Map<String, Value>,
    keys: &[String],
) -> Result<&'a str, Option<Vec<String>>> {
    let present: Vec<&String> = keys
        .iter()
        .filter(|k| args.contains_key(k.as_str()))
        .collect();
    match present.as_slice() {
        [] => Err(None),
        [one] => args
            .get(one.as_str())
            .and_then(Value::as_str)
            .filter(|c| !c.trim().is_empty())
            .ok_or(None),
        many => Err(Some(many.iter().map(|k| k.to_string()).collect())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_command_argument_or_a_refusal() {
        let keys: Vec<String> = SHELL_COMMAND_ARGUMENTS
            .iter()
            .map(|s| s.to_string())
            .collect();
        let args = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(
            shell_command(&args(serde_json::json!({"cmd": "ls"})), &keys),
            Ok("ls")
        );
        assert_eq!(
            shell_command(&args(serde_json::json!({"x": "ls"})), &keys),
            Err(None)
        );
        assert_eq!(
            shell_command(&args(serde_json::json!({"command": " "})), &keys),
            Err(None)
        );
        assert_eq!(
            shell_command(
                &args(serde_json::json!({"command": "a", "script": "b"})),
                &keys
            ),
            Err(Some(vec!["command".into(), "script".into()]))
        );
    }

    #[test]
    fn shell_tools_are_known_in_any_case() {
        assert!(is_shell_tool("Bash") && is_shell_tool("exec_command"));
        assert!(!is_shell_tool("write_file") && !is_shell_tool("bash2"));
    }
}
