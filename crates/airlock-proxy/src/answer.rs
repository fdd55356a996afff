//! The tool calls and usage of a whole (non-streamed) chat completion, read from the upstream's
//! bytes without building a tree. Most answers pass unchanged, so a `serde_json::Value` of each
//! (an allocation per string and object, freed again at once) was work for nothing.
//!
//! The reader is strict where the tree is lenient: anything it cannot read the way a tree
//! would — a field it reads given twice, a value of another type than expected where it looks,
//! nesting past `serde_json`'s own limit — gives `None`, and the caller falls back to the tree,
//! so every such answer is judged exactly as before. A lone surrogate escape or an out-of-range
//! number in a part the reader skips is left to the client, where a tree refused the answer.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::gate::Call;
use super::object::Obj;

/// What the proxy needs of a completion: every tool call in order, and its `usage` (unparsed).
pub struct Answer<'a> {
    pub calls: Vec<Call>,
    pub usage: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Completion<'a> {
    #[serde(borrow, default)]
    choices: Option<Vec<Obj<Choice<'a>>>>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow, default)]
    message: Option<Obj<Message<'a>>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    tool_calls: Option<Vec<Obj<ToolCall<'a>>>>,
    #[serde(borrow, default)]
    function_call: Option<Obj<Function<'a>>>,
}

#[derive(Deserialize)]
struct ToolCall<'a> {
    #[serde(borrow, default)]
    function: Option<Obj<Function<'a>>>,
}

#[derive(Deserialize)]
struct Function<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<Cow<'a, str>>,
}

impl Function<'_> {
    fn call(self) -> Call {
        Call {
            name: self.name.map(Cow::into_owned).unwrap_or_default(),
            arguments: self.arguments.map(Cow::into_owned).unwrap_or_default(),
        }
    }
}

/// Reads `body`; `None` when only a tree can say what it holds (see the module documentation).
pub fn read(body: &[u8]) -> Option<Answer<'_>> {
    let text = std::str::from_utf8(body).ok()?;
    let Obj(c) = serde_json::from_str::<Obj<Completion>>(text).ok()?;
    if super::request::nested_deeper_than(body, super::request::MAX_NESTING) {
        return None;
    }
    let mut calls = Vec::new();
    for Obj(m) in c
        .choices
        .into_iter()
        .flatten()
        .filter_map(|Obj(c)| c.message)
    {
        let tcs = m.tool_calls.into_iter().flatten();
        calls.extend(tcs.map(|Obj(tc)| tc.function.map_or_else(Call::default, |Obj(f)| f.call())));
        calls.extend(m.function_call.map(|Obj(f)| f.call()));
    }
    Some(Answer {
        calls,
        usage: c.usage,
    })
}

/// Checks the reader against a tree of the same bytes (the fuzz target's and the tests'
/// property): where both read `body`, they find the same calls in the same order and the same
/// `usage`. Where the reader gives up, the proxy uses the tree, so there is nothing to compare.
#[doc(hidden)]
pub fn agrees_with_tree(body: &[u8]) -> Result<(), String> {
    let Some(a) = read(body) else {
        return Ok(());
    };
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(body) else {
        return Ok(());
    };
    let tree: Vec<Call> = super::rewrite::calls(&doc)
        .into_iter()
        .map(|(_, c)| c)
        .collect();
    if a.calls != tree {
        return Err(format!(
            "the reader found {:?}, a tree holds {tree:?}",
            a.calls
        ));
    }
    let usage = a
        .usage
        .map(|u| serde_json::from_str::<serde_json::Value>(u.get()));
    let tree_usage = doc.get("usage").filter(|u| !u.is_null());
    match (usage, tree_usage) {
        (None, None) => Ok(()),
        (Some(Ok(u)), Some(t)) if &u == t => Ok(()),
        (u, t) => Err(format!("usage: the reader has {u:?}, a tree {t:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    fn calls(body: &str) -> Option<Vec<(String, String)>> {
        read(body.as_bytes()).map(|a| a.calls.into_iter().map(|c| (c.name, c.arguments)).collect())
    }

    fn pair(n: &str, a: &str) -> (String, String) {
        (n.to_string(), a.to_string())
    }

    #[test]
    fn reads_tool_calls_and_the_legacy_function_call_in_order() {
        let body = r#"{"id":"x","choices":[
            {"message":{"content":null,"tool_calls":[
                {"id":"a","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"},"x":[1,{"y":2}]},
                {"id":"b","function":{"name":"b\u0061sh","arguments":"{}"}}]}},
            {"message":{"function_call":{"name":"exec","arguments":"{\"cmd\":\"rm -rf /\"}"}}},
            {"message":null},{"finish_reason":"stop"}],
            "usage":{"prompt_tokens":3,"total_tokens":5},"vendor":{"deep":[[[]]]}}"#;
        assert_eq!(
            calls(body).unwrap(),
            vec![
                pair("bash", r#"{"command":"ls"}"#),
                pair("bash", "{}"),
                pair("exec", r#"{"cmd":"rm -rf /"}"#),
            ]
        );
        assert_eq!(
            read(body.as_bytes()).unwrap().usage.unwrap().get(),
            r#"{"prompt_tokens":3,"total_tokens":5}"#
        );
        assert_eq!(agrees_with_tree(body.as_bytes()), Ok(()));
    }

    #[test]
    fn a_call_without_a_function_is_still_a_call() {
        assert_eq!(
            calls(r#"{"choices":[{"message":{"tool_calls":[{"id":"a"},{"function":null}]}}]}"#)
                .unwrap(),
            vec![pair("", ""), pair("", "")]
        );
    }

    #[test]
    fn what_only_a_tree_reads_is_left_to_the_tree() {
        for body in [
            // A key read here given twice: a tree keeps the last, as most clients do.
            r#"{"choices":[{"message":{"tool_calls":[],"tool_calls":[{"function":{"name":"bash"}}]}}]}"#,
            r#"{"choices":[],"choices":[{"message":{"function_call":{"name":"x"}}}]}"#,
            // Another type than expected where a call may be.
            r#"{"choices":{"0":{"message":{}}}}"#,
            r#"{"choices":[1]}"#,
            r#"{"choices":[{"message":{"tool_calls":[7]}}]}"#,
            r#"{"choices":[{"message":{"tool_calls":{"function":{}}}}]}"#,
            r#"{"choices":[{"message":{"function_call":"bash"}}]}"#,
            r#"{"choices":[{"message":{"tool_calls":[{"function":{"name":5}}]}}]}"#,
            // Arrays where objects belong (a derived struct would read them field by field).
            r#"[[{"message":{"function_call":{"name":"x"}}}]]"#,
            r#"{"choices":[[{"function_call":{"name":"x"}}]]}"#,
            r#"{"choices":[{"message":[[{"function":["x"]}]]}]}"#,
            r#"{"choices":[{"message":{"tool_calls":[[["x","{}"]]]}}]}"#,
            r#"{"choices":[{"message":{"function_call":["x","{}"]}}]}"#,
            // Not an answer at all.
            "[]",
            "{\"choices\":[",
            "{\"a\":\"\u{7f}\"",
        ] {
            assert!(calls(body).is_none(), "{body}");
            assert_eq!(agrees_with_tree(body.as_bytes()), Ok(()), "{body}");
        }
        assert!(read(b"{\"x\":\"\xff\"}").is_none());
        let deep = format!("{{\"x\":{}{}}}", "[".repeat(200), "]".repeat(200));
        assert!(calls(&deep).is_none());
        let fine = format!("{{\"x\":{}{}}}", "[".repeat(100), "]".repeat(100));
        assert_eq!(calls(&fine), Some(vec![]));
    }

    fn function() -> impl Strategy<Value = Value> {
        let s = prop_oneof!["[a-z_\"\\\\]{0,8}", "\\PC{0,6}"];
        prop_oneof![
            (proptest::option::of(s.clone()), proptest::option::of(s)).prop_map(|(n, a)| {
                let mut f = serde_json::Map::new();
                if let Some(n) = n {
                    f.insert("name".into(), n.into());
                }
                if let Some(a) = a {
                    f.insert("arguments".into(), a.into());
                }
                Value::Object(f)
            }),
            Just(Value::Null),
            Just(json!("bash")),
            Just(json!({"name": 1})),
        ]
    }

    fn message() -> impl Strategy<Value = Value> {
        let tool_call = prop_oneof![
            function().prop_map(|f| json!({"id": "c", "type": "function", "function": f})),
            Just(json!({"id": "c"})),
            Just(json!(3)),
            Just(json!([["bash", "{}"]])),
        ];
        let tool_calls = prop_oneof![
            proptest::collection::vec(tool_call, 0..3).prop_map(Value::from),
            Just(Value::Null),
            Just(json!({})),
        ];
        (
            proptest::option::of(tool_calls),
            proptest::option::of(function()),
        )
            .prop_map(|(tcs, fc)| {
                let mut m = serde_json::Map::new();
                m.insert("role".into(), "assistant".into());
                m.insert("content".into(), Value::Null);
                if let Some(t) = tcs {
                    m.insert("tool_calls".into(), t);
                }
                if let Some(f) = fc {
                    m.insert("function_call".into(), f);
                }
                Value::Object(m)
            })
    }

    fn completion() -> impl Strategy<Value = Value> {
        let choice = prop_oneof![
            message()
                .prop_map(|m| json!({"index": 0, "message": m, "finish_reason": "tool_calls"})),
            Just(json!({"index": 1, "message": null})),
            Just(json!(0)),
            message().prop_map(|m| json!([m])),
            message().prop_map(|m| json!({"message": [m["tool_calls"], m["function_call"]]})),
        ];
        (
            proptest::option::of(proptest::collection::vec(choice, 0..3)),
            proptest::option::of(prop_oneof![
                Just(json!({"prompt_tokens": 5, "completion_tokens": 2})),
                Just(Value::Null),
                Just(json!(7)),
            ]),
        )
            .prop_map(|(choices, usage)| {
                let mut c = serde_json::Map::new();
                c.insert("id".into(), "chatcmpl-1".into());
                if let Some(ch) = choices {
                    c.insert("choices".into(), Value::from(ch));
                }
                if let Some(u) = usage {
                    c.insert("usage".into(), u);
                }
                Value::Object(c)
            })
    }

    proptest! {
        /// Any completion of the usual shapes: the reader finds what a tree holds, or leaves
        /// the answer to the tree; well-typed completions are always read.
        #[test]
        fn the_reader_finds_the_calls_a_tree_holds(doc in completion(), pretty in any::<bool>()) {
            let bytes = if pretty {
                serde_json::to_vec_pretty(&doc).unwrap()
            } else {
                serde_json::to_vec(&doc).unwrap()
            };
            prop_assert_eq!(agrees_with_tree(&bytes), Ok(()));
            let odd = |v: &Value| matches!(v, Value::Number(_) | Value::String(_) | Value::Array(_))
                || v.get("function").is_some_and(|f| f.is_string() || f.get("name").is_some_and(Value::is_number))
                || v.get("name").is_some_and(Value::is_number);
            let choices = doc.get("choices").and_then(Value::as_array).cloned().unwrap_or_default();
            let well_typed = choices.iter().all(|c| {
                c.is_object()
                    && c.get("message").is_none_or(|m| m.is_object() || m.is_null())
                    && c.pointer("/message/tool_calls").is_none_or(|t| {
                        t.is_null() || t.as_array().is_some_and(|a| !a.iter().any(odd))
                    })
                    && c.pointer("/message/function_call").is_none_or(|f| !odd(f))
            });
            if well_typed {
                prop_assert!(read(&bytes).is_some(), "{}", String::from_utf8_lossy(&bytes));
            }
        }

        /// Any bytes: no panic, and agreement wherever both read them.
        #[test]
        fn any_bytes_agree_or_are_left_to_the_tree(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(agrees_with_tree(&bytes), Ok(()));
        }
    }
}
