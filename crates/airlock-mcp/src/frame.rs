//! One JSON-RPC message of the MCP stdio transport: a line of JSON, bounded in size, without
//! duplicate keys, shaped as a request, a notification or a response. Anything else becomes a
//! JSON-RPC error to answer with (-32700 parse error, -32600 invalid request) and a stable
//! reason code in `error.data.reason`: never a crash, and never forwarded.

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The default bound on one message (1 MiB).
pub const DEFAULT_MAX_MESSAGE: usize = 1024 * 1024;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC "internal error": also what a blocked resource or prompt is answered with.
pub const INTERNAL_ERROR: i64 = -32603;

/// A well-formed message, parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Request {
        id: Value,
        method: String,
        msg: Value,
    },
    Notification {
        method: String,
        msg: Value,
    },
    Response {
        id: Value,
        msg: Value,
    },
}

/// Why a message was refused, and the id to answer to (null when it had none usable).
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub id: Value,
    pub code: i64,
    /// Stable: `MCP_MESSAGE_TOO_LARGE`, `MCP_PARSE_ERROR`, `MCP_DUPLICATE_KEY`,
    /// `MCP_BATCH_UNSUPPORTED`, `MCP_INVALID_REQUEST`.
    pub reason: &'static str,
    pub message: String,
}

impl Refusal {
    fn new(id: Value, code: i64, reason: &'static str, message: impl Into<String>) -> Refusal {
        Refusal {
            id,
            code,
            reason,
            message: message.into(),
        }
    }

    /// The JSON-RPC error response carrying this refusal.
    pub fn to_response(&self) -> Value {
        error_response(&self.id, self.code, &self.message, self.reason)
    }
}

/// A JSON-RPC error response with airlock's reason code in `data`.
pub fn error_response(id: &Value, code: i64, message: &str, reason: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message, "data": {"reason": reason}},
    })
}

/// Parses and checks one message of at most `max` bytes.
pub fn parse(bytes: &[u8], max: usize) -> Result<Message, Refusal> {
    if bytes.len() > max {
        return Err(too_large(max));
    }
    let v = match super::strict::parse(bytes) {
        Ok(v) => v,
        Err(e) => {
            let text = e.to_string();
            let reason = if text.starts_with("duplicate key") {
                "MCP_DUPLICATE_KEY"
            } else {
                "MCP_PARSE_ERROR"
            };
            return Err(Refusal::new(
                Value::Null,
                PARSE_ERROR,
                reason,
                format!("parse error: {text}"),
            ));
        }
    };
    classify(v)
}

/// The refusal for a message over the bound.
pub fn too_large(max: usize) -> Refusal {
    Refusal::new(
        Value::Null,
        INVALID_REQUEST,
        "MCP_MESSAGE_TOO_LARGE",
        format!("message larger than {max} bytes"),
    )
}

fn valid_id(v: &Value) -> bool {
    match v {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

fn classify(v: Value) -> Result<Message, Refusal> {
    let obj = match &v {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Err(Refusal::new(
                Value::Null,
                INVALID_REQUEST,
                "MCP_BATCH_UNSUPPORTED",
                "JSON-RPC batches are not supported: send one message per line",
            ));
        }
        _ => {
            return Err(invalid(Value::Null, "a message must be a JSON object"));
        }
    };
    let id = obj.get("id").cloned();
    let answer_id = id.clone().filter(valid_id).unwrap_or(Value::Null);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid(answer_id, "`jsonrpc` must be \"2.0\""));
    }
    if let Some(id) = &id
        && !valid_id(id)
    {
        return Err(invalid(Value::Null, "`id` must be a string or an integer"));
    }
    match (obj.get("method"), id) {
        (Some(Value::String(m)), Some(id)) => {
            if obj.contains_key("result") || obj.contains_key("error") {
                return Err(invalid(id, "a request carries no `result` or `error`"));
            }
            check_params(obj, &id)?;
            let method = m.clone();
            Ok(Message::Request { id, method, msg: v })
        }
        (Some(Value::String(m)), None) => {
            if obj.contains_key("result") || obj.contains_key("error") {
                return Err(invalid(
                    Value::Null,
                    "a notification carries no `result` or `error`",
                ));
            }
            check_params(obj, &Value::Null)?;
            let method = m.clone();
            Ok(Message::Notification { method, msg: v })
        }
        (Some(_), id) => Err(invalid(
            id.unwrap_or(Value::Null),
            "`method` must be a string",
        )),
        (None, Some(id)) => {
            let result = obj.contains_key("result");
            let error = obj.get("error");
            match (result, error) {
                (true, None) => Ok(Message::Response { id, msg: v }),
                (false, Some(Value::Object(e)))
                    if e.get("code").is_some_and(|c| c.is_i64())
                        && e.get("message").is_some_and(Value::is_string) =>
                {
                    Ok(Message::Response { id, msg: v })
                }
                _ => Err(invalid(
                    id,
                    "a response carries exactly one of `result` and a well-formed `error`",
                )),
            }
        }
        (None, None) => Err(invalid(Value::Null, "neither a request nor a response")),
    }
}

fn check_params(obj: &serde_json::Map<String, Value>, id: &Value) -> Result<(), Refusal> {
    match obj.get("params") {
        None | Some(Value::Object(_)) | Some(Value::Array(_)) => Ok(()),
        Some(_) => Err(invalid(
            id.clone(),
            "`params` must be an object or an array",
        )),
    }
}

fn invalid(id: Value, message: &str) -> Refusal {
    Refusal::new(id, INVALID_REQUEST, "MCP_INVALID_REQUEST", message)
}

/// One line read from a stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    Text(Vec<u8>),
    /// Longer than the bound; the rest of it was read and dropped.
    TooLong,
}

/// Reads the next non-empty line (without its `\n` or `\r\n`), holding at most `max` bytes of
/// it in memory; `None` at the end of the stream.
pub async fn read_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
    max: usize,
) -> std::io::Result<Option<Line>> {
    loop {
        let mut buf = Vec::new();
        let mut over = false;
        let mut any = false;
        loop {
            let chunk = r.fill_buf().await?;
            if chunk.is_empty() {
                if !any {
                    return Ok(None);
                }
                break;
            }
            any = true;
            let (take, done) = match chunk.iter().position(|b| *b == b'\n') {
                Some(i) => (i, true),
                None => (chunk.len(), false),
            };
            if !over {
                if buf.len() + take > max + 1 {
                    over = true;
                    buf = Vec::new();
                } else {
                    buf.extend_from_slice(&chunk[..take]);
                }
            }
            r.consume(if done { take + 1 } else { take });
            if done {
                break;
            }
        }
        if over {
            return Ok(Some(Line::TooLong));
        }
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
        if buf.len() > max {
            return Ok(Some(Line::TooLong));
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        return Ok(Some(Line::Text(buf)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(bytes: &[u8]) -> &'static str {
        parse(bytes, 100).unwrap_err().reason
    }

    #[test]
    fn shapes() {
        let r = parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, 100).unwrap();
        assert!(matches!(r, Message::Request { ref method, .. } if method == "tools/list"));
        let n = parse(
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            100,
        );
        assert!(matches!(n, Ok(Message::Notification { .. })));
        let ok = parse(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#, 100);
        assert!(matches!(ok, Ok(Message::Response { .. })));
        let err = parse(
            br#"{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"m"}}"#,
            100,
        );
        assert!(matches!(err, Ok(Message::Response { .. })));
        assert_eq!(reason(b"{"), "MCP_PARSE_ERROR");
        assert_eq!(reason(b"\xff"), "MCP_PARSE_ERROR");
        assert_eq!(
            reason(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#),
            "MCP_DUPLICATE_KEY"
        );
        assert_eq!(reason(b"[]"), "MCP_BATCH_UNSUPPORTED");
        assert_eq!(reason(b"3"), "MCP_INVALID_REQUEST");
        assert_eq!(reason(br#"{"id":1,"method":"x"}"#), "MCP_INVALID_REQUEST");
        assert_eq!(
            reason(br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#),
            "MCP_INVALID_REQUEST"
        );
        assert_eq!(
            reason(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#),
            "MCP_INVALID_REQUEST"
        );
        assert_eq!(
            reason(br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}}"#),
            "MCP_INVALID_REQUEST"
        );
        assert_eq!(
            reason(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#),
            "MCP_INVALID_REQUEST"
        );
        let big = vec![b' '; 101];
        assert_eq!(reason(&big), "MCP_MESSAGE_TOO_LARGE");
        // the id of a refused request is kept when it is usable
        let r = parse(br#"{"jsonrpc":"1.0","id":7,"method":"x"}"#, 100).unwrap_err();
        assert_eq!(r.id, json!(7));
        assert_eq!(r.to_response()["error"]["code"], json!(-32600));
    }

    #[tokio::test]
    async fn lines_are_bounded_and_resynchronise_after_an_oversized_one() {
        let mut input: Vec<u8> = Vec::new();
        input.extend_from_slice(b"short\r\n\n   \n");
        input.extend(std::iter::repeat_n(b'x', 5000));
        input.extend_from_slice(b"\nafter\nlast-without-newline");
        let mut r = tokio::io::BufReader::with_capacity(16, &input[..]);
        assert_eq!(
            read_line(&mut r, 10).await.unwrap(),
            Some(Line::Text(b"short".to_vec()))
        );
        assert_eq!(read_line(&mut r, 10).await.unwrap(), Some(Line::TooLong));
        assert_eq!(
            read_line(&mut r, 10).await.unwrap(),
            Some(Line::Text(b"after".to_vec()))
        );
        assert_eq!(read_line(&mut r, 10).await.unwrap(), Some(Line::TooLong));
        assert_eq!(read_line(&mut r, 10).await.unwrap(), None);
        let mut r = tokio::io::BufReader::new(&b"0123456789\n"[..]);
        assert_eq!(
            read_line(&mut r, 10).await.unwrap(),
            Some(Line::Text(b"0123456789".to_vec()))
        );
    }
}
