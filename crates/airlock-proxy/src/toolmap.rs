//! The tool map: turns one `tool_calls` entry of a model's answer (a function name and its
//! arguments as a JSON string) into the airlock action the policy decides. Shell tools become
//! shell actions over the command argument; every other tool is a tool action with its parsed
//! arguments, so an undeclared tool falls under the policy's default deny. Arguments that do
//! not parse, a shell tool without a command, or one naming its command in more than one of
//! its configured arguments (which of them runs is the tool's business, so airlock cannot know
//! what it decided on), are refused with a stable code.

use airlock_core::Action;
use serde_json::Value;

use super::config::ToolSettings;

/// Stable codes of calls refused before the policy sees them.
pub const MALFORMED_ARGUMENTS: &str = "PROXY_MALFORMED_ARGUMENTS";
pub const MISSING_COMMAND: &str = "PROXY_MISSING_COMMAND";
pub const BAD_TOOL_CALL: &str = "PROXY_BAD_TOOL_CALL";
pub const AMBIGUOUS_COMMAND: &str = "PROXY_AMBIGUOUS_COMMAND";

/// The argument names a shell tool's command may be given in, unless configured otherwise.
pub use airlock_wire::SHELL_COMMAND_ARGUMENTS as DEFAULT_COMMAND_ARGUMENTS;
use airlock_wire::shell_command;

fn default_arguments() -> Vec<String> {
    DEFAULT_COMMAND_ARGUMENTS
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// The largest arguments string accepted for one call.
const MAX_ARGUMENTS: usize = 256 * 1024;

/// How one tool of the agent maps onto an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolMapping {
    /// The one of `arguments` present holds the command line; several present are refused.
    Shell {
        name: String,
        arguments: Vec<String>,
    },
    /// The arguments as JSON, under `policy_name`.
    Tool { name: String, policy_name: String },
}

impl ToolMapping {
    pub fn name(&self) -> &str {
        match self {
            ToolMapping::Shell { name, .. } | ToolMapping::Tool { name, .. } => name,
        }
    }

    pub fn from_settings(t: &ToolSettings) -> Result<ToolMapping, String> {
        if t.name.trim().is_empty() {
            return Err("proxy.tools: a tool needs a name".into());
        }
        match t.kind.as_str() {
            "shell" => Ok(ToolMapping::Shell {
                name: t.name.clone(),
                arguments: if t.arguments.is_empty() {
                    default_arguments()
                } else {
                    t.arguments.clone()
                },
            }),
            "tool" => Ok(ToolMapping::Tool {
                name: t.name.clone(),
                policy_name: t.policy_name.clone().unwrap_or_else(|| t.name.clone()),
            }),
            other => Err(format!(
                "proxy.tools: kind {other:?} of {} must be `shell` or `tool`",
                t.name
            )),
        }
    }
}

/// A call refused before the broker: a stable code and the reason for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: &'static str,
    pub reason: String,
}

/// The agent's tools by name.
#[derive(Debug, Clone)]
pub struct ToolMap {
    tools: Vec<ToolMapping>,
}

impl ToolMap {
    pub fn new(tools: Vec<ToolMapping>) -> ToolMap {
        ToolMap { tools }
    }

    /// The default map: the common shell tools (`airlock_wire::SHELL_TOOLS`, the list the hook
    /// and the MCP gateway read too) with their `command`, `cmd` or `script` argument.
    pub fn builtin() -> ToolMap {
        ToolMap::new(
            airlock_wire::SHELL_TOOLS
                .iter()
                .map(|n| ToolMapping::Shell {
                    name: (*n).to_string(),
                    arguments: default_arguments(),
                })
                .collect(),
        )
    }

    /// The name the policy gives the tool `name` (whose output schema applies to its results):
    /// its configured `policy_name`, the name itself for an unmapped tool, `None` for a shell
    /// tool (a command's output has no declared schema).
    pub fn policy_name(&self, name: &str) -> Option<String> {
        match self.tools.iter().find(|t| t.name() == name) {
            Some(ToolMapping::Shell { .. }) => None,
            Some(ToolMapping::Tool { policy_name, .. }) => Some(policy_name.clone()),
            None => Some(name.to_string()),
        }
    }

    /// The action for a call of `name` with the JSON text `arguments`.
    pub fn action(&self, name: &str, arguments: &str) -> Result<Action, Refusal> {
        if name.trim().is_empty() || name.len() > 256 || name.chars().any(char::is_control) {
            return Err(Refusal {
                code: BAD_TOOL_CALL,
                reason: "the tool call has no usable function name.".into(),
            });
        }
        if arguments.len() > MAX_ARGUMENTS {
            return Err(Refusal {
                code: MALFORMED_ARGUMENTS,
                reason: format!("the arguments are larger than {MAX_ARGUMENTS} bytes."),
            });
        }
        // Models send "" for a function without parameters.
        let parsed: Value = if arguments.trim().is_empty() {
            Value::Object(Default::default())
        } else {
            serde_json::from_str(arguments).map_err(|e| Refusal {
                code: MALFORMED_ARGUMENTS,
                reason: format!("the arguments are not valid JSON ({e}); send a JSON object."),
            })?
        };
        if !parsed.is_object() {
            return Err(Refusal {
                code: MALFORMED_ARGUMENTS,
                reason: "the arguments must be a JSON object.".into(),
            });
        }
        match self.tools.iter().find(|t| t.name() == name) {
            Some(ToolMapping::Shell {
                arguments: keys, ..
            }) => {
                let empty = serde_json::Map::new();
                match shell_command(parsed.as_object().unwrap_or(&empty), keys) {
                    Ok(command) => Ok(Action::shell(command)),
                    Err(None) => Err(Refusal {
                        code: MISSING_COMMAND,
                        reason: format!(
                            "the shell tool needs a non-empty string argument `{}`.",
                            keys.join("` or `")
                        ),
                    }),
                    Err(Some(names)) => Err(Refusal {
                        code: AMBIGUOUS_COMMAND,
                        reason: format!(
                            "the shell tool was given a command in more than one argument (`{}`); send exactly one.",
                            names.join("`, `")
                        ),
                    }),
                }
            }
            Some(ToolMapping::Tool { policy_name, .. }) => Ok(Action::Tool {
                tool: policy_name.clone(),
                arguments: parsed,
            }),
            None => Ok(Action::Tool {
                tool: name.to_string(),
                arguments: parsed,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_tools_other_tools_and_refusals() {
        let m = ToolMap::builtin();
        assert_eq!(
            m.action("terminal", r#"{"command":"ls -la"}"#).unwrap(),
            Action::shell("ls -la")
        );
        assert_eq!(
            m.action("exec", r#"{"cmd":"pwd","x":1}"#).unwrap(),
            Action::shell("pwd")
        );
        assert_eq!(
            m.action("get_weather", r#"{"city":"Oslo"}"#).unwrap(),
            Action::Tool {
                tool: "get_weather".into(),
                arguments: serde_json::json!({"city": "Oslo"})
            }
        );
        assert_eq!(
            m.action("bash", r#"{"command": "ls""#).unwrap_err().code,
            MALFORMED_ARGUMENTS
        );
        assert_eq!(
            m.action("bash", "[1]").unwrap_err().code,
            MALFORMED_ARGUMENTS
        );
        assert_eq!(
            m.action("bash", r#"{"script":"ls"}"#).unwrap(),
            Action::shell("ls")
        );
        assert_eq!(
            m.action("bash", r#"{"code":"ls"}"#).unwrap_err().code,
            MISSING_COMMAND
        );
        // every configured name is looked at: two present is refused, whatever their types
        for args in [
            r#"{"command":"ls","cmd":"rm -rf ~"}"#,
            r#"{"cmd":"ls","script":"curl x | sh"}"#,
            r#"{"command":5,"cmd":"ls"}"#,
            r#"{"command":null,"cmd":"rm -rf /"}"#,
        ] {
            assert_eq!(
                m.action("bash", args).unwrap_err().code,
                AMBIGUOUS_COMMAND,
                "{args}"
            );
        }
        assert_eq!(
            m.action("bash", r#"{"command":5}"#).unwrap_err().code,
            MISSING_COMMAND
        );
        assert_eq!(m.action("", "{}").unwrap_err().code, BAD_TOOL_CALL);
        assert!(m.action("noargs", "").is_ok());
    }

    #[test]
    fn configured_tools_replace_the_builtin_map() {
        let t = |name: &str, kind: &str, args: &[&str], pn: Option<&str>| ToolSettings {
            name: name.into(),
            kind: kind.into(),
            arguments: args.iter().map(|s| s.to_string()).collect(),
            policy_name: pn.map(str::to_string),
        };
        let m = ToolMap::new(vec![
            ToolMapping::from_settings(&t("run", "shell", &["script"], None)).unwrap(),
            ToolMapping::from_settings(&t("gh", "tool", &[], Some("mcp__github__x"))).unwrap(),
        ]);
        assert_eq!(
            m.action("run", r#"{"script":"id"}"#).unwrap(),
            Action::shell("id")
        );
        assert!(matches!(
            m.action("gh", "{}").unwrap(),
            Action::Tool { tool, .. } if tool == "mcp__github__x"
        ));
        assert!(ToolMapping::from_settings(&t("x", "magic", &[], None)).is_err());
    }
}
