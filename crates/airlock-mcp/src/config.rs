//! The MCP gateway's settings (the `[mcp]` table of a TOML file): the message bound, what to do
//! with a tool result that carries an injection, how long a call may wait for a person, and the
//! servers a person has declared. A server that is not declared is quarantined: its tools are
//! hidden and its calls denied.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::frame::DEFAULT_MAX_MESSAGE;

/// What happens to a tool result the text scanner flags as an injection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InjectionMode {
    /// The result passes with a warning the model sees first.
    #[default]
    Annotate,
    /// The result is replaced by an error result that says why.
    Block,
}

/// The argument names a shell tool may take its command line in: one name or a list.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum CommandArguments {
    One(String),
    Many(Vec<String>),
}

impl CommandArguments {
    /// The names, in order.
    pub fn names(&self) -> Vec<String> {
        match self {
            CommandArguments::One(n) => vec![n.clone()],
            CommandArguments::Many(v) => v.clone(),
        }
    }
}

/// One declared server.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// Tools that run shell commands: tool name → the argument (or arguments) that may hold the
    /// command line. Their calls are decided as shell actions, with everything the shell rules
    /// know; a call giving a command in more than one of them is refused.
    #[serde(default)]
    pub shell_tools: BTreeMap<String, CommandArguments>,
    /// Overrides `[mcp] injection` for this server.
    #[serde(default)]
    pub injection: Option<InjectionMode>,
}

/// The `[mcp]` table.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct McpConfig {
    /// Bytes; larger messages are refused in both directions.
    pub max_message: usize,
    pub injection: InjectionMode,
    /// Seconds a call may wait for a decision before it is denied.
    pub call_timeout_secs: u64,
    pub servers: BTreeMap<String, ServerConfig>,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            max_message: DEFAULT_MAX_MESSAGE,
            injection: InjectionMode::Annotate,
            call_timeout_secs: 300,
            servers: BTreeMap::new(),
        }
    }
}

#[derive(Deserialize, Default)]
struct File {
    #[serde(default)]
    mcp: McpConfig,
}

/// A file whose `[mcp]` table is wrong.
#[derive(Debug, thiserror::Error)]
#[error("MCP configuration: {0}")]
pub struct ConfigError(String);

impl McpConfig {
    /// Reads the `[mcp]` table of a TOML text (other tables are left to their owners).
    pub fn from_toml(text: &str) -> Result<McpConfig, ConfigError> {
        let f: File = toml::from_str(text).map_err(|e| ConfigError(e.to_string()))?;
        let c = f.mcp;
        if c.max_message < 1024 {
            return Err(ConfigError(
                "max_message must be at least 1024 bytes".into(),
            ));
        }
        Ok(c)
    }

    pub fn call_timeout(&self) -> Duration {
        Duration::from_secs(self.call_timeout_secs.max(1))
    }

    /// The injection mode for `server`.
    pub fn injection_for(&self, server: &str) -> InjectionMode {
        self.servers
            .get(server)
            .and_then(|s| s.injection)
            .unwrap_or(self.injection)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_mcp_table_and_refuses_unknown_fields() {
        let c = McpConfig::from_toml(
            "[serve]\nx = 1\n[mcp]\ninjection = \"block\"\n[mcp.servers.files]\nshell_tools = { run = \"command\", sh = [\"cmd\", \"script\"] }\n",
        )
        .unwrap();
        assert_eq!(c.injection, InjectionMode::Block);
        assert_eq!(c.max_message, DEFAULT_MAX_MESSAGE);
        assert_eq!(c.servers["files"].shell_tools["run"].names(), ["command"]);
        assert_eq!(
            c.servers["files"].shell_tools["sh"].names(),
            ["cmd", "script"]
        );
        assert!(McpConfig::from_toml("[mcp]\nbogus = 1\n").is_err());
        assert!(McpConfig::from_toml("[mcp]\nmax_message = 10\n").is_err());
        assert_eq!(McpConfig::from_toml("").unwrap(), McpConfig::default());
    }
}
