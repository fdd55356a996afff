//! A toolbox as an MCP server (JSON-RPC 2.0, one message per line, as MCP's stdio transport
//! frames it): `initialize`, `ping`, `tools/list` and `tools/call`. A call runs the tool with
//! its arguments as JSON on standard input and answers with what it wrote on standard output;
//! a non-zero exit, a limit or a trap is a tool error (`isError: true`) whose text starts with
//! the reason code, which is also in `_meta.airlock.code`. The transport (reading and writing
//! lines) is the caller's, so this is testable without processes; airlock's MCP gateway
//! (`airlock mcp wrap`) can sit in front of it like in front of any stdio server.

use serde_json::{Value, json};

use crate::toolbox::{Tool, Toolbox};
use crate::{Ending, Outcome, WasmError};

/// The MCP protocol versions this server speaks; it answers the client's when it is one of
/// them, else the newest.
const VERSIONS: &[&str] = &["2025-06-18", "2025-03-26", "2024-11-05"];

/// The most bytes of a tool's standard error quoted in an error result.
const STDERR_QUOTE: usize = 4096;

pub struct Server {
    pub toolbox: Toolbox,
}

impl Server {
    pub fn new(toolbox: Toolbox) -> Server {
        Server { toolbox }
    }

    /// Answers one message (a line); `None` for a notification, which has no answer.
    pub fn handle(&self, line: &str) -> Option<Value> {
        let msg: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => return Some(error(Value::Null, -32700, &format!("parse error: {e}"))),
        };
        if !msg.is_object() {
            return Some(error(
                Value::Null,
                -32600,
                "invalid request: not a JSON object (batches are not supported)",
            ));
        }
        let id = msg.get("id").cloned();
        let Some(method) = msg.get("method").and_then(Value::as_str) else {
            // a response from the client or a malformed message
            return id.map(|id| error(id, -32600, "invalid request: no method"));
        };
        let id = id?;
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        let result = match method {
            "initialize" => Ok(self.initialize(&params)),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(self.list()),
            "tools/call" => self.call(&params),
            other => Err((-32601, format!("method not found: {other}"))),
        };
        Some(match result {
            Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
            Err((code, message)) => error(id, code, &message),
        })
    }

    fn initialize(&self, params: &Value) -> Value {
        let asked = params.get("protocolVersion").and_then(Value::as_str);
        let version = asked
            .filter(|v| VERSIONS.contains(v))
            .unwrap_or(VERSIONS[0]);
        json!({
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": {"name": "airlock-tool", "version": env!("CARGO_PKG_VERSION")},
        })
    }

    fn list(&self) -> Value {
        let tools: Vec<Value> = self
            .toolbox
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "inputSchema": t.input_schema,
                })
            })
            .collect();
        json!({ "tools": tools })
    }

    fn call(&self, params: &Value) -> Result<Value, (i64, String)> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or((-32602, "tools/call needs a tool name".to_string()))?;
        let tool = self
            .toolbox
            .get(name)
            .ok_or_else(|| (-32602, format!("unknown tool: {name}")))?;
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => json!({}),
            Some(v @ Value::Object(_)) => v.clone(),
            Some(_) => return Err((-32602, "the arguments must be a JSON object".into())),
        };
        Ok(result_of(tool, tool.call(&arguments)))
    }
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn text_result(text: String, is_error: bool, meta: Value) -> Value {
    json!({
        "content": [{"type": "text", "text": text}],
        "isError": is_error,
        "_meta": {"airlock": meta},
    })
}

/// The `tools/call` result for a run.
pub fn result_of(tool: &Tool, run: Result<Outcome, WasmError>) -> Value {
    let out = match run {
        Ok(o) => o,
        Err(e) => {
            let code = e.reason().map(|c| c.as_str()).unwrap_or("WASM_TRAP");
            return text_result(
                format!("{code}: the tool {} could not run: {e}", tool.name),
                true,
                json!({"code": code}),
            );
        }
    };
    let mut meta = json!({
        "fuel_used": out.fuel_used,
        "elapsed_ms": out.elapsed.as_millis() as u64,
    });
    if out.denial_count > 0 {
        meta["denied"] = json!(out.denials);
    }
    match &out.ending {
        Ending::Exited(0) => text_result(
            String::from_utf8_lossy(&out.stdout).into_owned(),
            false,
            meta,
        ),
        Ending::Exited(code) => {
            meta["exit_code"] = json!(code);
            let quoted = &out.stderr[..out.stderr.len().min(STDERR_QUOTE)];
            let mut text = format!("the tool {} exited with code {code}", tool.name);
            if !quoted.is_empty() {
                text.push_str(": ");
                text.push_str(&String::from_utf8_lossy(quoted));
            }
            text_result(text, true, meta)
        }
        Ending::Stopped { reason, message } => {
            meta["code"] = json!(reason.as_str());
            text_result(format!("{reason}: {message}"), true, meta)
        }
    }
}
