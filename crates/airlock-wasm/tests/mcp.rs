//! The toolbox and its MCP server on real modules: listing, a call that answers, a call that
//! runs out of fuel, and bad tool definitions refused at load.

use airlock_wasm::Limits;
use airlock_wasm::mcp::Server;
use airlock_wasm::toolbox::Toolbox;
use serde_json::{Value, json};

fn toolbox_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("echo.wasm"), super::module("echo")).unwrap();
    std::fs::write(
        dir.path().join("echo.toml"),
        "description = \"Answers with its arguments.\"\n[input_schema]\ntype = \"object\"\nproperties.text = { type = \"string\" }\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("spin.wasm"), super::module("spin")).unwrap();
    std::fs::write(
        dir.path().join("spin.toml"),
        "description = \"Never ends.\"\n[limits]\nfuel = 100000\n",
    )
    .unwrap();
    dir
}

fn ask(s: &Server, v: Value) -> Value {
    s.handle(&v.to_string()).unwrap()
}

#[test]
fn lists_and_calls_tools_and_reports_limits_as_tool_errors() {
    let dir = toolbox_dir();
    let s = Server::new(Toolbox::load(dir.path(), &Limits::default()).unwrap());
    let init = ask(
        &s,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert!(
        s.handle(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .is_none()
    );
    let list = ask(
        &s,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    let tools = list["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0]["name"], "echo");
    assert_eq!(
        tools[0]["inputSchema"]["properties"]["text"]["type"],
        "string"
    );
    let call = ask(
        &s,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}),
    );
    assert_eq!(call["result"]["isError"], false, "{call}");
    let text = call["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        json!({"text": "hi"})
    );
    let call = ask(
        &s,
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "spin", "arguments": {}}}),
    );
    assert_eq!(call["result"]["isError"], true, "{call}");
    assert_eq!(
        call["result"]["_meta"]["airlock"]["code"],
        "WASM_OUT_OF_FUEL"
    );
    assert!(
        call["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("WASM_OUT_OF_FUEL:")
    );
    let unknown = ask(
        &s,
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "nope"}}),
    );
    assert_eq!(unknown["error"]["code"], -32602);
    let batch = s.handle("[1, 2]").unwrap();
    assert_eq!(batch["error"]["code"], -32600);
    let bad = s.handle("{oops").unwrap();
    assert_eq!(bad["error"]["code"], -32700);
    let m = ask(
        &s,
        json!({"jsonrpc": "2.0", "id": 6, "method": "resources/list"}),
    );
    assert_eq!(m["error"]["code"], -32601);
}

#[test]
fn bad_tool_definitions_are_refused_at_load() {
    let dir = toolbox_dir();
    std::fs::write(
        dir.path().join("spin.toml"),
        "description = \"x\"\nsurprise = 1\n",
    )
    .unwrap();
    let e = Toolbox::load(dir.path(), &Limits::default()).err().unwrap();
    assert!(e.to_string().contains("surprise"), "{e}");
    std::fs::write(
        dir.path().join("spin.toml"),
        "description = \"x\"\n[input_schema]\ntype = \"string\"\n",
    )
    .unwrap();
    let e = Toolbox::load(dir.path(), &Limits::default()).err().unwrap();
    assert!(e.to_string().contains("object"), "{e}");
    std::fs::write(dir.path().join("spin.toml"), "description = \"x\"\n").unwrap();
    std::fs::write(dir.path().join("spin.wasm"), b"not wasm").unwrap();
    let e = Toolbox::load(dir.path(), &Limits::default()).err().unwrap();
    assert!(e.to_string().contains("magic number"), "{e}");
    std::fs::remove_file(dir.path().join("spin.wasm")).unwrap();
    assert!(Toolbox::load(dir.path(), &Limits::default()).is_err());
}
