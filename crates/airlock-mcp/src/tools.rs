//! What the gateway knows about each tool of the server it fronts, built from `tools/list`
//! answers: whether a tool may be shown and called, and if not, the stable reason. A tool is
//! usable only when its server is declared, its definition matches its pin, and the policy does
//! not deny it outright.

use std::path::Path;

use airlock_confirm::PolicyProvider;
use airlock_core::{Action, Decision, ReasonCode};
use airlock_policy::{Channel, Context};
use airlock_store::{Db, PinCheck};
use serde_json::{Value, json};

/// The stable reason of a tool held because it is new after the first listing.
pub const NEW: &str = "MCP_TOOL_NEW";

/// Why a tool is not usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hidden {
    /// `MCP_SERVER_UNKNOWN`, `MCP_TOOL_QUARANTINED`, `MCP_TOOL_NEW`, `MCP_TOOL_POISONED`,
    /// `MCP_TOOL_LOOKALIKE`, `MCP_PIN_UNAVAILABLE`, `MCP_POLICY_UNAVAILABLE`,
    /// `MCP_SCAN_UNAVAILABLE` or the policy's reason code.
    pub code: String,
    pub message: String,
}

/// The pin hash of a tool definition: SHA-256 of the RFC 8785 form of its description and input
/// schema (what the model reads and what shapes its arguments).
/// The pinned part of a tool's definition as canonical JSON text, and its SHA-256.
pub fn definition(tool: &Value) -> Result<(String, String), String> {
    let pinned = json!({
        "description": tool.get("description").cloned().unwrap_or(Value::Null),
        "inputSchema": tool.get("inputSchema").cloned().unwrap_or(Value::Null),
    });
    airlock_policy::schema::canonical_with_sha256(&pinned)
}

/// The policy's name for a tool of `server`.
pub fn action_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

/// The inputs of a tool check.
pub struct Checker<'a> {
    pub server: &'a str,
    pub known: bool,
    pub db: &'a Db,
    pub policy: &'a PolicyProvider,
    pub cwd: Option<&'a str>,
    /// Tools decided as shell commands (never hidden by the policy: it depends on the command).
    pub shell_tool: &'a (dyn Fn(&str) -> bool + Sync),
    /// A tool the store never saw is held for a person rather than pinned (it appeared after
    /// the server's first listing).
    pub hold_new: bool,
}

impl Checker<'_> {
    /// Decides whether one listed tool may be shown; `Ok(())` when it may.
    pub async fn check(&self, name: &str, tool: &Value, now_ms: i64) -> Result<(), Hidden> {
        if !self.known {
            return Err(Hidden {
                code: "MCP_SERVER_UNKNOWN".into(),
                message: format!(
                    "the MCP server `{}` is not declared in airlock's [mcp.servers] configuration, so its tools are quarantined; ask the user to declare it",
                    self.server
                ),
            });
        }
        let (text, sha) = definition(tool).map_err(|e| Hidden {
            code: "MCP_TOOL_QUARANTINED".into(),
            message: format!("the definition of `{name}` cannot be hashed: {e}"),
        })?;
        let checked = if self.hold_new {
            self.db
                .mcp_pin_hold_new(self.server, name, &sha, &text, now_ms)
                .await
        } else {
            self.db
                .mcp_pin_check(self.server, name, &sha, &text, now_ms)
                .await
        };
        match checked {
            Ok(PinCheck::Pinned | PinCheck::Approved) => {}
            Ok(PinCheck::Quarantined { approved, .. }) if approved.is_empty() => {
                return Err(Hidden {
                    code: NEW.into(),
                    message: format!(
                        "the tool `{name}` appeared after the server's first listing, so it is held until a person approves it (in the web inbox, or `airlock mcp approve-tool {} {name}`)",
                        self.server
                    ),
                });
            }
            Ok(PinCheck::Quarantined { .. }) => {
                return Err(Hidden {
                    code: "MCP_TOOL_QUARANTINED".into(),
                    message: format!(
                        "the description or schema of the tool `{name}` changed since it was approved, so it is quarantined until a person re-approves it (in the web inbox, or `airlock mcp approve-tool {} {name}`)",
                        self.server
                    ),
                });
            }
            Err(e) => {
                return Err(Hidden {
                    code: "MCP_PIN_UNAVAILABLE".into(),
                    message: format!("airlock could not check the pin of `{name}`: {e}"),
                });
            }
        }
        if (self.shell_tool)(name) {
            return Ok(());
        }
        let policy = (self.policy)(self.cwd.map(Path::new)).map_err(|e| Hidden {
            code: "MCP_POLICY_UNAVAILABLE".into(),
            message: format!("the airlock policy does not load: {e}"),
        })?;
        let action = Action::Tool {
            tool: action_name(self.server, name),
            arguments: json!({}),
        };
        let ctx = Context {
            channel: Some(Channel::Api),
            cwd: self.cwd.map(str::to_string),
            ..Context::default()
        };
        let v = policy.evaluate(&action, &ctx);
        // A call with empty arguments may fail the tool's schema; that says nothing about the
        // tool, so only a denial for another reason hides it.
        let about_arguments = v
            .reasons
            .iter()
            .any(|f| f.code == ReasonCode::SchemaViolation);
        if v.decision == Decision::Deny && !about_arguments {
            let (code, message) = v
                .reasons
                .first()
                .map(|f| (f.code.as_str().to_string(), f.message.clone()))
                .unwrap_or_else(|| ("DENIED".into(), "denied by the airlock policy".into()));
            return Err(Hidden { code, message });
        }
        Ok(())
    }
}
