//! The part of the gateway that does not depend on the transport: which tools of the server
//! are usable (from `tools/list` answers: pins, declared server, policy) and the ruling on a
//! call of a usable tool. The stdio relay and the HTTP proxy both sit on it.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use airlock_confirm::PolicyProvider;
use airlock_core::Action;
use airlock_store::Db;
use serde_json::{Value, json};

use super::config::McpConfig;
use super::describe;
use super::frame;
use super::gate::{Call, CallRuling, Decider};
use super::names;
use super::sdk;
use super::tools::{Checker, Hidden, action_name, definition};
pub(crate) use airlock_grants::system_now_ms as now_ms;

/// One gateway in front of one server.
pub struct Gateway<D: Decider> {
    /// The server's name (`mcp__<server>__<tool>` in the policy).
    pub server: String,
    pub config: McpConfig,
    pub db: Db,
    pub policy: PolicyProvider,
    pub decider: D,
    pub session: String,
    pub cwd: Option<String>,
}

/// Where the gateway is in the server's first listing: tools seen then are pinned at first
/// sight; a tool that appears in any later listing is held until a person approves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Listing {
    /// No answer yet: the store says whether the server was listed before.
    Unknown,
    /// The first listing of a server the store never saw, until its last page.
    First,
    /// Every later listing.
    Later,
}

/// A gateway and what it learnt about its server's tools.
pub struct Core<D: Decider> {
    pub gw: Gateway<D>,
    /// Each listed tool: usable (`Ok`) or why not.
    tools: Mutex<HashMap<String, Result<(), Hidden>>>,
    /// The description scan's verdict per definition hash.
    described: Mutex<HashMap<String, Result<(), Hidden>>>,
    listing: Mutex<Listing>,
    seq: AtomicU64,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(crate) fn log(server: &str, what: &str) {
    eprintln!("airlock mcp [{server}]: {what}");
}

impl<D: Decider> Core<D> {
    pub fn new(gw: Gateway<D>) -> Core<D> {
        Core {
            gw,
            tools: Mutex::new(HashMap::new()),
            described: Mutex::new(HashMap::new()),
            listing: Mutex::new(Listing::Unknown),
            seq: AtomicU64::new(0),
        }
    }

    pub(crate) fn described(&self, sha: &str) -> Option<Result<(), Hidden>> {
        lock(&self.described).get(sha).cloned()
    }

    pub(crate) fn remember_described(&self, sha: &str, v: Result<(), Hidden>) {
        lock(&self.described).insert(sha.to_string(), v);
    }

    /// Whether tools new to the store are held rather than pinned: after the server's first
    /// listing (or when the store cannot say whether there was one).
    async fn hold_new(&self) -> bool {
        let now = *lock(&self.listing);
        match now {
            Listing::First => false,
            Listing::Later => true,
            Listing::Unknown => {
                let seen = self.gw.db.mcp_pin_server_known(&self.gw.server).await;
                let next = if matches!(seen, Ok(false)) {
                    Listing::First
                } else {
                    Listing::Later
                };
                let mut l = lock(&self.listing);
                if *l == Listing::Unknown {
                    *l = next;
                }
                *l == Listing::Later
            }
        }
    }

    /// The names already in use: usable after an earlier listing, or pinned in the store.
    async fn trusted_names(&self) -> HashSet<String> {
        let mut out: HashSet<String> = lock(&self.tools)
            .iter()
            .filter(|(_, v)| v.is_ok())
            .map(|(k, _)| k.clone())
            .collect();
        if let Ok(rows) = self.gw.db.mcp_pin_list(Some(&self.gw.server)).await {
            out.extend(
                rows.into_iter()
                    .filter(|r| r.status == "approved")
                    .map(|r| r.tool),
            );
        }
        out
    }

    pub fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::Relaxed)
    }

    /// What the last listing said about `name` (`None`: never listed).
    pub fn state(&self, name: &str) -> Option<Result<(), Hidden>> {
        lock(&self.tools).get(name).cloned()
    }

    /// Removes every tool that is not usable from a `tools/list` answer, remembering why. An
    /// answer whose result rmcp's model rejects becomes a JSON-RPC error (`MCP_INVALID_MESSAGE`)
    /// and teaches the gateway nothing.
    pub async fn filter_list(&self, mut msg: Value) -> Value {
        if let Some(result) = msg.get("result")
            && let Err(why) = sdk::list_result(result)
        {
            log(
                &self.gw.server,
                &format!("refused a tools/list answer: {why}"),
            );
            let id = msg.get("id").cloned().unwrap_or(Value::Null);
            return sdk::refused(&id, frame::INTERNAL_ERROR, &why);
        }
        let Some(list) = msg
            .get_mut("result")
            .and_then(|r| r.get_mut("tools"))
            .and_then(Value::as_array_mut)
        else {
            return msg;
        };
        let tools = std::mem::take(list);
        let last_page = msg
            .get("result")
            .and_then(|r| r.get("nextCursor"))
            .is_none_or(Value::is_null);
        let hold_new = self.hold_new().await;
        let listed: Vec<String> = tools
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_string))
            .collect();
        let lookalikes = names::flagged(&listed, &self.trusted_names().await);
        let mut kept = Vec::new();
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str).map(str::to_string) else {
                log(&self.gw.server, "dropped a listed tool without a name");
                continue;
            };
            let verdict = match lookalikes.get(&name) {
                Some(why) => Err(Hidden {
                    code: names::LOOKALIKE.into(),
                    message: why.clone(),
                }),
                None => self.check_tool(&name, &tool, hold_new).await,
            };
            if let Err(h) = &verdict {
                log(
                    &self.gw.server,
                    &format!("hid the tool `{name}` ({}: {})", h.code, h.message),
                );
            } else {
                kept.push(tool);
            }
            lock(&self.tools).insert(name, verdict);
        }
        if last_page {
            let mut l = lock(&self.listing);
            if *l == Listing::First {
                *l = Listing::Later;
            }
        }
        if let Some(list) = msg
            .get_mut("result")
            .and_then(|r| r.get_mut("tools"))
            .and_then(Value::as_array_mut)
        {
            *list = kept;
        }
        msg
    }

    async fn check_tool(&self, name: &str, tool: &Value, hold_new: bool) -> Result<(), Hidden> {
        let server_cfg = self.gw.config.servers.get(&self.gw.server);
        let shell = |t: &str| server_cfg.is_some_and(|c| c.shell_tools.contains_key(t));
        let checker = Checker {
            server: &self.gw.server,
            known: server_cfg.is_some(),
            db: &self.gw.db,
            policy: &self.gw.policy,
            cwd: self.gw.cwd.as_deref(),
            shell_tool: &shell,
            hold_new,
        };
        checker.check(name, tool, now_ms()).await?;
        let (text, sha) = definition(tool).map_err(|e| Hidden {
            code: "MCP_TOOL_QUARANTINED".into(),
            message: format!("the definition of `{name}` cannot be hashed: {e}"),
        })?;
        let Err(poisoned) = describe::check(self, name, &sha, tool).await else {
            return Ok(());
        };
        if poisoned.code != describe::POISONED {
            return Err(poisoned);
        }
        // A person who approved exactly this definition has read it: their word stands. Any
        // other pin goes back to a person, who sees the definition in the quarantine list.
        let db = &self.gw.db;
        let server = &self.gw.server;
        match db.mcp_pin_get(server, name).await {
            Ok(Some(row)) if row.sha256 == sha && row.approved_by_person() => Ok(()),
            Ok(_) => {
                if let Err(e) = db
                    .mcp_pin_quarantine(server, name, &sha, &text, now_ms())
                    .await
                {
                    log(server, &format!("could not quarantine `{name}`: {e}"));
                }
                Err(poisoned)
            }
            Err(e) => Err(Hidden {
                code: "MCP_PIN_UNAVAILABLE".into(),
                message: format!("airlock could not check the pin of `{name}`: {e}"),
            }),
        }
    }

    /// Decides a call of a tool whose state is usable.
    pub async fn decide(&self, name: &str, arguments: Value) -> CallRuling {
        let server_cfg = self.gw.config.servers.get(&self.gw.server);
        let action = match server_cfg.and_then(|c| c.shell_tools.get(name)) {
            Some(args) => {
                let keys = args.names();
                let empty = serde_json::Map::new();
                match airlock_wire::shell_command(arguments.as_object().unwrap_or(&empty), &keys) {
                    Ok(cmd) => Action::Shell {
                        command: cmd.to_string(),
                        cwd: None,
                    },
                    Err(None) => {
                        return CallRuling::deny(
                            "MCP_INVALID_PARAMS",
                            format!(
                                "`{name}` runs shell commands; its `{}` argument must be a non-empty string",
                                keys.join("` or `")
                            ),
                        );
                    }
                    Err(Some(names)) => {
                        return CallRuling::deny(
                            "MCP_AMBIGUOUS_COMMAND",
                            format!(
                                "`{name}` runs shell commands and was given one in more than one argument (`{}`); send exactly one",
                                names.join("`, `")
                            ),
                        );
                    }
                }
            }
            None => Action::Tool {
                tool: action_name(&self.gw.server, name),
                arguments,
            },
        };
        let n = self.next_seq();
        let call = Call {
            action,
            session: self.gw.session.clone(),
            request_id: format!(
                "mcp:{}:{}:{}:{n}",
                self.gw.server,
                self.gw.session,
                now_ms()
            ),
            cwd: self.gw.cwd.clone(),
            timeout: self.gw.config.call_timeout(),
        };
        self.gw.decider.decide(call).await
    }
}

/// The error result a denied call is answered with: the model reads why, and can act on it.
pub fn denied_result(id: &Value, code: &str, message: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "result": {
            "content": [{"type": "text", "text": format!("airlock blocked this tool call ({code}): {message}")}],
            "isError": true,
            "_meta": {"airlock": {"decision": "deny", "code": code}},
        },
    })
}
