//! What an agent wants to do, independent of the surface that reported it.

use serde::{Deserialize, Serialize};

/// One action, tagged by `kind` on the wire (`{"kind": "shell", "command": "ls"}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// A shell command line, as the agent would hand it to `bash -c`.
    Shell {
        command: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
    },
    /// A tool call with JSON arguments (MCP tools are named `mcp__server__tool`).
    Tool {
        tool: String,
        #[serde(default)]
        arguments: serde_json::Value,
    },
    /// A file write (whole content) or edit (a replacement inside the file).
    FileWrite {
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        #[serde(default)]
        edit: bool,
    },
    /// An outbound network request.
    NetworkFetch {
        url: String,
        #[serde(default = "default_method")]
        method: String,
    },
    /// A message sent to a person or a channel.
    MessageSend {
        channel: String,
        #[serde(default)]
        recipient: String,
        body: String,
    },
}

fn default_method() -> String {
    "GET".to_string()
}

/// The kind of an action without its payload, for receipts, metrics and routing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    Shell,
    Tool,
    FileWrite,
    NetworkFetch,
    MessageSend,
}

impl ActionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Shell => "shell",
            ActionKind::Tool => "tool",
            ActionKind::FileWrite => "file_write",
            ActionKind::NetworkFetch => "network_fetch",
            ActionKind::MessageSend => "message_send",
        }
    }
}

impl Action {
    pub fn kind(&self) -> ActionKind {
        match self {
            Action::Shell { .. } => ActionKind::Shell,
            Action::Tool { .. } => ActionKind::Tool,
            Action::FileWrite { .. } => ActionKind::FileWrite,
            Action::NetworkFetch { .. } => ActionKind::NetworkFetch,
            Action::MessageSend { .. } => ActionKind::MessageSend,
        }
    }

    pub fn shell(command: impl Into<String>) -> Self {
        Action::Shell {
            command: command.into(),
            cwd: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_shape() {
        let a: Action = serde_json::from_str(r#"{"kind":"shell","command":"ls -la"}"#).unwrap();
        assert_eq!(a, Action::shell("ls -la"));
        assert_eq!(a.kind().as_str(), "shell");
        let t: Action =
            serde_json::from_str(r#"{"kind":"tool","tool":"mcp__fs__read","arguments":{"p":1}}"#)
                .unwrap();
        assert_eq!(t.kind(), ActionKind::Tool);
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let r = serde_json::from_str::<Action>(r#"{"kind":"shell","command":"ls","x":1}"#);
        assert!(r.is_err());
        let r = serde_json::from_str::<Action>(r#"{"kind":"teleport"}"#);
        assert!(r.is_err());
    }
}
