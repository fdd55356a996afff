//! What clients send the daemon: [`ActionRequest`] (`POST /v1/actions`: one action with the
//! session it belongs to), [`ScanRequest`] (`POST /v1/scan`: a text to scan, optionally
//! recorded), [`OutputRequest`] (`POST /v1/outputs`: a tool's output to check and record) and
//! [`PrivacyRequest`] (`POST /v1/privacy`: a value whose secrets are replaced and recorded). The
//! hook and the CLI build these types and the gateway reads them, so a renamed field breaks the
//! build, not a client. `docs/wire/*-request.schema.json` describe them for clients in other
//! languages (the Hermes plugin); tests here keep each schema and its type together.

use airlock_core::Action;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The kinds of action the daemon takes (`Action`'s tags), in the schema's order.
pub const ACTION_KINDS: [&str; 5] = [
    "shell",
    "tool",
    "file_write",
    "network_fetch",
    "message_send",
];

/// One action to decide: the action's own fields (tagged by `kind`) beside the envelope. The
/// daemon refuses unknown fields; the submitting agent is its token's name, never a field.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActionRequest {
    #[serde(flatten)]
    pub action: Action,
    /// The agent's session (1 to 128 characters, no control characters).
    pub session: String,
    /// The client's id for this request: the same id with the same action replays its outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// Why a body is not an [`ActionRequest`], in the order the daemon checks (its error codes
/// follow these).
#[derive(Debug)]
pub enum RequestError<E> {
    /// The body is not a JSON object.
    NotObject,
    /// `session` or `request_id` is not a string.
    NotString(&'static str),
    /// No `session`.
    MissingSession,
    /// The caller's check of `session` or `request_id` refused it.
    Label(E),
    /// `kind` is present and not one of [`ACTION_KINDS`].
    UnknownKind,
    /// The action's own fields do not read (a missing or unknown field, a wrong type).
    Action(serde_json::Error),
}

impl<E: std::fmt::Display> std::fmt::Display for RequestError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestError::NotObject => f.write_str("the body must be a JSON object"),
            RequestError::NotString(key) => write!(f, "{key} must be a string"),
            RequestError::MissingSession => f.write_str("missing field `session`"),
            RequestError::Label(e) => e.fmt(f),
            RequestError::UnknownKind => {
                write!(f, "kind must be one of {}", ACTION_KINDS.join(", "))
            }
            RequestError::Action(e) => e.fmt(f),
        }
    }
}

impl ActionRequest {
    pub fn new(action: Action, session: impl Into<String>) -> ActionRequest {
        ActionRequest {
            action,
            session: session.into(),
            request_id: None,
        }
    }

    pub fn with_request_id(mut self, id: impl Into<String>) -> ActionRequest {
        self.request_id = Some(id.into());
        self
    }

    /// Where a shell command runs, unless the action already says: only a shell action has a
    /// working directory on the wire.
    pub fn in_dir(mut self, dir: Option<&str>) -> ActionRequest {
        if let (
            Action::Shell {
                cwd: cwd @ None, ..
            },
            Some(dir),
        ) = (&mut self.action, dir)
        {
            *cwd = Some(dir.to_string());
        }
        self
    }

    /// Reads a request body strictly, checking `session` and `request_id` with `label` as soon
    /// as each is read (the daemon's order of checks, so its error codes do not depend on which
    /// of two faults is looked at first).
    pub fn parse_with<E>(
        body: Value,
        label: impl Fn(&'static str, &str) -> Result<(), E>,
    ) -> Result<ActionRequest, RequestError<E>> {
        let Value::Object(mut obj) = body else {
            return Err(RequestError::NotObject);
        };
        let session = take_string(&mut obj, "session")?.ok_or(RequestError::MissingSession)?;
        label("session", &session).map_err(RequestError::Label)?;
        let request_id = take_string(&mut obj, "request_id")?;
        if let Some(r) = &request_id {
            label("request_id", r).map_err(RequestError::Label)?;
        }
        let known_kind = obj
            .get("kind")
            .and_then(Value::as_str)
            .is_some_and(|k| ACTION_KINDS.contains(&k));
        if obj.contains_key("kind") && !known_kind {
            return Err(RequestError::UnknownKind);
        }
        let action: Action =
            serde_json::from_value(Value::Object(obj)).map_err(RequestError::Action)?;
        Ok(ActionRequest {
            action,
            session,
            request_id,
        })
    }
}

fn take_string<E>(
    obj: &mut Map<String, Value>,
    key: &'static str,
) -> Result<Option<String>, RequestError<E>> {
    match obj.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(RequestError::NotString(key)),
    }
}

impl<'de> Deserialize<'de> for ActionRequest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let body = Value::deserialize(d)?;
        ActionRequest::parse_with(body, |_, _| Ok::<(), std::convert::Infallible>(()))
            .map_err(serde::de::Error::custom)
    }
}

/// Who wrote a scanned text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScanDirection {
    /// A person's message to the agent.
    User,
    /// Text returned by a tool or read from a document.
    Tool,
}

/// A text to scan (`POST /v1/scan`). Any role may scan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScanRequest {
    pub text: String,
    /// Default `tool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<ScanDirection>,
    /// Record the verdict the daemon finds as a receipt in this session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<ScanRecord>,
}

/// Where a scan's verdict is recorded, and what the caller does with a flagged text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScanRecord {
    pub session: String,
    /// Where the text came from (for example `mcp:github:tools/call`).
    pub source: String,
    /// `pass`, `annotate` or `block` (default `pass`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handling: Option<String>,
}

/// A tool's output to check against the output schema the daemon's policy declares for the
/// tool, and to record (`POST /v1/outputs`). The MCP gateway of `airlock mcp` sends it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputRequest {
    pub session: String,
    /// The tool as the policy names it (`mcp__<server>__<tool>`).
    pub tool: String,
    /// The output the schema is checked against (an MCP result's `structuredContent`, …).
    pub output: Value,
    /// The working directory whose project policy applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// A JSON value bound for a remote model whose secrets the daemon replaces by typed
/// placeholders and records (`POST /v1/privacy`): an MCP server's sampling request, which the
/// MCP gateway of `airlock mcp` sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrivacyRequest {
    pub session: String,
    /// Where the value is going (for example `mcp:github:sampling`).
    pub surface: String,
    /// The value: every string in it is scanned.
    pub value: Value,
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::json;

    use super::*;

    fn schema(name: &str) -> Value {
        let text = match name {
            "action" => include_str!("../../../docs/wire/action-request.schema.json"),
            "output" => include_str!("../../../docs/wire/output-request.schema.json"),
            "privacy" => include_str!("../../../docs/wire/privacy-request.schema.json"),
            _ => include_str!("../../../docs/wire/scan-request.schema.json"),
        };
        serde_json::from_str(text).unwrap()
    }

    fn keys(v: &Value) -> BTreeSet<String> {
        v.as_object().unwrap().keys().cloned().collect()
    }

    fn strings(v: &Value) -> BTreeSet<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    }

    /// Every kind of action with every field set.
    fn every_action() -> Vec<Action> {
        vec![
            Action::Shell {
                command: "ls".into(),
                cwd: Some("/tmp".into()),
            },
            Action::Tool {
                tool: "read_file".into(),
                arguments: json!({"path": "/etc/hosts"}),
            },
            Action::FileWrite {
                path: "/tmp/x".into(),
                content: Some("x".into()),
                edit: true,
            },
            Action::NetworkFetch {
                url: "https://example.org".into(),
                method: "POST".into(),
            },
            Action::MessageSend {
                channel: "mail".into(),
                recipient: "a@example.org".into(),
                body: "hi".into(),
            },
        ]
    }

    /// The schema names exactly the fields the request's kinds have, requires exactly `kind`
    /// and `session`, and lists exactly the kinds.
    #[test]
    fn the_action_request_schema_is_the_type() {
        let s = schema("action");
        let mut fields = BTreeSet::new();
        let mut kinds = Vec::new();
        for action in every_action() {
            let req = ActionRequest::new(action, "s1").with_request_id("r1");
            let v = serde_json::to_value(&req).unwrap();
            kinds.push(v["kind"].as_str().unwrap().to_string());
            fields.extend(keys(&v));
            // and it reads back as it was written
            let back: ActionRequest = serde_json::from_value(v).unwrap();
            assert_eq!(back, req);
        }
        assert_eq!(fields, keys(&s["properties"]));
        assert_eq!(kinds, ACTION_KINDS);
        assert_eq!(s["properties"]["kind"]["enum"], json!(ACTION_KINDS));
        assert_eq!(
            strings(&s["required"]),
            BTreeSet::from(["kind".into(), "session".into()])
        );
        assert_eq!(s["additionalProperties"], json!(false));
    }

    #[test]
    fn the_scan_request_schema_is_the_type() {
        let s = schema("scan");
        let mut req = ScanRequest {
            text: "hello".into(),
            direction: None,
            record: None,
        };
        assert_eq!(
            keys(&serde_json::to_value(&req).unwrap()),
            strings(&s["required"])
        );
        req.direction = Some(ScanDirection::User);
        req.record = Some(ScanRecord {
            session: "s".into(),
            source: "mcp:x:tools/call".into(),
            handling: Some("block".into()),
        });
        let v = serde_json::to_value(&req).unwrap();
        assert_eq!(keys(&v), keys(&s["properties"]));
        assert_eq!(
            s["properties"]["direction"]["enum"],
            json!(["user", "tool"])
        );
        let rec = &s["properties"]["record"];
        assert_eq!(keys(&v["record"]), keys(&rec["properties"]));
        assert_eq!(
            strings(&rec["required"]),
            BTreeSet::from(["session".into(), "source".into()])
        );
        assert_eq!(s["additionalProperties"], json!(false));
        assert_eq!(rec["additionalProperties"], json!(false));
        let back: ScanRequest = serde_json::from_value(v).unwrap();
        assert_eq!(back, req);
        // unknown fields are refused, at both levels
        assert!(serde_json::from_value::<ScanRequest>(json!({"text": "x", "mode": 1})).is_err());
        assert!(
            serde_json::from_value::<ScanRequest>(
                json!({"text": "x", "record": {"session": "s", "source": "t", "x": 1}})
            )
            .is_err()
        );
    }

    #[test]
    fn the_output_request_schema_is_the_type() {
        let s = schema("output");
        let mut req = OutputRequest {
            session: "s".into(),
            tool: "mcp__w__now".into(),
            output: json!({"t": 1}),
            cwd: None,
        };
        assert_eq!(
            keys(&serde_json::to_value(&req).unwrap()),
            strings(&s["required"])
        );
        req.cwd = Some("/w".into());
        let v = serde_json::to_value(&req).unwrap();
        assert_eq!(keys(&v), keys(&s["properties"]));
        assert_eq!(s["additionalProperties"], json!(false));
        let back: OutputRequest = serde_json::from_value(v).unwrap();
        assert_eq!(back, req);
        assert!(
            serde_json::from_value::<OutputRequest>(
                json!({"session": "s", "tool": "t", "output": 1, "x": 1})
            )
            .is_err()
        );
    }

    #[test]
    fn the_privacy_request_schema_is_the_type() {
        let s = schema("privacy");
        let req = PrivacyRequest {
            session: "s".into(),
            surface: "mcp:w:sampling".into(),
            value: json!({"messages": []}),
        };
        let v = serde_json::to_value(&req).unwrap();
        assert_eq!(keys(&v), strings(&s["required"]));
        assert_eq!(keys(&v), keys(&s["properties"]));
        assert_eq!(s["additionalProperties"], json!(false));
        let back: PrivacyRequest = serde_json::from_value(v).unwrap();
        assert_eq!(back, req);
        assert!(
            serde_json::from_value::<PrivacyRequest>(
                json!({"session": "s", "surface": "t", "value": 1, "x": 1})
            )
            .is_err()
        );
    }

    #[test]
    fn a_working_directory_goes_to_a_shell_action_only() {
        let shell = ActionRequest::new(Action::shell("ls"), "s").in_dir(Some("/w"));
        assert_eq!(serde_json::to_value(&shell).unwrap()["cwd"], "/w");
        // one the action already has stays
        let own = ActionRequest::new(
            Action::Shell {
                command: "ls".into(),
                cwd: Some("/own".into()),
            },
            "s",
        )
        .in_dir(Some("/w"));
        assert_eq!(serde_json::to_value(&own).unwrap()["cwd"], "/own");
        // a file write has no working directory on the wire: the daemon would refuse the field
        let write = ActionRequest::new(
            Action::FileWrite {
                path: "/w/a".into(),
                content: None,
                edit: false,
            },
            "s",
        )
        .in_dir(Some("/w"));
        let v = serde_json::to_value(&write).unwrap();
        assert!(v.get("cwd").is_none(), "{v}");
        assert!(serde_json::from_value::<ActionRequest>(v).is_ok());
    }

    #[test]
    fn bodies_that_are_no_request_say_why_in_the_daemons_order() {
        let ok = |_: &'static str, _: &str| Ok::<(), String>(());
        let err = |v: Value| ActionRequest::parse_with(v, ok).unwrap_err().to_string();
        assert_eq!(err(json!([1])), "the body must be a JSON object");
        assert_eq!(
            err(json!({"kind": "shell", "command": "ls"})),
            "missing field `session`"
        );
        assert_eq!(
            err(json!({"kind": "shell", "command": "ls", "session": 1})),
            "session must be a string"
        );
        assert_eq!(
            err(json!({"kind": "shell", "command": "ls", "session": "s", "request_id": 2})),
            "request_id must be a string"
        );
        assert!(
            err(json!({"kind": "bogus", "session": "s"})).starts_with("kind must be one of shell")
        );
        assert!(
            err(json!({"kind": "shell", "command": "ls", "session": "s", "x": 1}))
                .contains("unknown field")
        );
        // the caller's label check runs on the session before anything after it is read
        let picky = |what: &'static str, _: &str| Err::<(), String>(format!("bad {what}"));
        let e = ActionRequest::parse_with(
            json!({"kind": "bogus", "session": "s", "request_id": 3}),
            picky,
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "bad session");
    }
}
