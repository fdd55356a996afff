//! Fuzzes the MCP gateway's message parser: any bytes must give either a well-formed message or
//! a JSON-RPC error (-32700 or -32600) with a stable reason, never a panic; what the strict
//! parser accepts, serde_json reads the same way (no duplicate key can mean two things).

#![no_main]

use airlock_mcp::frame::{self, Message};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match frame::parse(data, 64 * 1024) {
        Ok(m) => {
            let msg = match &m {
                Message::Request { msg, .. }
                | Message::Notification { msg, .. }
                | Message::Response { msg, .. } => msg,
            };
            assert_eq!(msg["jsonrpc"], "2.0");
            let plain: serde_json::Value = serde_json::from_slice(data).expect("serde_json agrees");
            assert_eq!(&plain, msg);
        }
        Err(r) => {
            assert!(r.code == frame::PARSE_ERROR || r.code == frame::INVALID_REQUEST);
            assert!(r.reason.starts_with("MCP_"));
            let resp = r.to_response();
            assert!(resp["error"]["code"].is_i64());
        }
    }
    if let Ok(v) = airlock_mcp::parse_strict(data) {
        let plain: serde_json::Value = serde_json::from_slice(data).expect("serde_json agrees");
        assert_eq!(plain, v);
    }
});
