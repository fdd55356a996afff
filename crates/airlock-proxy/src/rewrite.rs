//! Rewriting a whole (non-streamed) chat completion: the tool calls of every choice are read
//! out of the JSON as it came, and after the decisions the blocked ones are removed and
//! explained in the assistant's text. Everything else in the document, fields airlock does not
//! know included, stays as the upstream sent it.

use serde_json::{Map, Value};

use super::gate::{Call, CallVerdict};

/// The explanation of one blocked call, from the configured template.
pub fn explain(template: &str, tool: &str, code: &str, reason: &str) -> String {
    template
        .replace("{tool}", tool)
        .replace("{code}", code)
        .replace("{reason}", reason)
}

/// A tool call's function name and arguments, as far as they are there.
pub fn call_of(tc: &Value) -> Call {
    let f = tc.get("function");
    let s = |k: &str| {
        f.and_then(|f| f.get(k))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    Call {
        name: s("name"),
        arguments: s("arguments"),
    }
}

/// Every tool call of the completion, in order: (choice position, call). A legacy
/// `function_call` of a message counts as a call after its `tool_calls`.
pub fn calls(doc: &Value) -> Vec<(usize, Call)> {
    let mut out = Vec::new();
    let Some(choices) = doc.get("choices").and_then(Value::as_array) else {
        return out;
    };
    for (i, c) in choices.iter().enumerate() {
        if let Some(tcs) = c.pointer("/message/tool_calls").and_then(Value::as_array) {
            out.extend(tcs.iter().map(|tc| (i, call_of(tc))));
        }
        if let Some(fc) = c
            .pointer("/message/function_call")
            .filter(|v| v.is_object())
        {
            out.push((i, call_of(&serde_json::json!({ "function": fc }))));
        }
    }
    out
}

/// Applies `verdicts` (one per call of [`calls`], same order): blocked calls are removed and
/// explained after the message's text; a choice left without calls finishes with `stop`.
pub fn apply(doc: &mut Value, verdicts: &[CallVerdict], template: &str) {
    let mut next = verdicts.iter();
    let Some(choices) = doc.get_mut("choices").and_then(Value::as_array_mut) else {
        return;
    };
    for choice in choices {
        let Some(msg) = choice.get_mut("message").and_then(Value::as_object_mut) else {
            continue;
        };
        let mut notes = Vec::new();
        let mut had = false;
        let mut left = false;
        if let Some(tcs) = msg.get_mut("tool_calls").and_then(Value::as_array_mut) {
            let mut kept = Vec::new();
            for tc in tcs.drain(..) {
                had = true;
                match judge(next.next(), template, &call_of(&tc).name) {
                    None => kept.push(tc),
                    Some(note) => notes.push(note),
                }
            }
            left |= !kept.is_empty();
            if kept.is_empty() {
                msg.remove("tool_calls");
            } else {
                *tcs = kept;
            }
        }
        if let Some(fc) = msg.get("function_call").filter(|v| v.is_object()) {
            had = true;
            let name = call_of(&serde_json::json!({ "function": fc })).name;
            match judge(next.next(), template, &name) {
                None => left = true,
                Some(note) => {
                    msg.remove("function_call");
                    notes.push(note);
                }
            }
        }
        if !notes.is_empty() {
            add_text(msg, &notes.join("\n"));
        }
        if had
            && !left
            && let Some(fr) = choice.get_mut("finish_reason")
            && matches!(fr.as_str(), Some("tool_calls" | "function_call"))
        {
            *fr = Value::String("stop".into());
        }
    }
}

/// `None` for an allowed call, else its explanation. More calls than verdicts cannot happen;
/// a call without one is never let through undecided.
fn judge(v: Option<&CallVerdict>, template: &str, name: &str) -> Option<String> {
    match v {
        Some(CallVerdict::Allow) => None,
        Some(CallVerdict::Block { code, reason }) => Some(explain(template, name, code, reason)),
        None => Some(explain(
            template,
            name,
            "INTERNAL_ERROR",
            "it was not decided.",
        )),
    }
}

/// Puts `text` before every choice's text (crisis guidance comes first).
pub fn prepend(doc: &mut Value, text: &str) {
    let Some(choices) = doc.get_mut("choices").and_then(Value::as_array_mut) else {
        return;
    };
    for choice in choices {
        let Some(msg) = choice.get_mut("message").and_then(Value::as_object_mut) else {
            continue;
        };
        match msg.get_mut("content") {
            Some(Value::String(s)) if !s.is_empty() => *s = format!("{text}\n\n{s}"),
            Some(Value::Array(parts)) => {
                parts.insert(0, serde_json::json!({"type": "text", "text": text}));
            }
            _ => {
                msg.insert("content".into(), Value::String(text.to_string()));
            }
        }
    }
}

/// Appends `text` to the message's content (a string, null, or a list of parts).
fn add_text(msg: &mut Map<String, Value>, text: &str) {
    match msg.get_mut("content") {
        Some(Value::String(s)) if !s.is_empty() => {
            s.push_str("\n\n");
            s.push_str(text);
        }
        Some(Value::Array(parts)) => {
            parts.push(serde_json::json!({"type": "text", "text": text}));
        }
        _ => {
            msg.insert("content".into(), Value::String(text.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tc(id: &str, name: &str, args: &str) -> Value {
        json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}, "x_extra": 1})
    }

    #[test]
    fn blocked_calls_are_removed_and_explained() {
        let mut doc = json!({
            "id": "c1", "vendor_field": {"a": [1, 2]},
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [tc("a", "bash", "{\"command\":\"ls\"}"), tc("b", "bash", "{\"command\":\"rm -rf /\"}")]
            }}]
        });
        let cs = calls(&doc);
        assert_eq!(cs.len(), 2);
        assert_eq!(cs[1].1.arguments, "{\"command\":\"rm -rf /\"}");
        let v = vec![
            CallVerdict::Allow,
            CallVerdict::Block {
                code: "RULE_MATCH".into(),
                reason: "it deletes everything.".into(),
            },
        ];
        apply(&mut doc, &v, "{tool}|{code}|{reason}");
        let m = &doc["choices"][0]["message"];
        assert_eq!(m["tool_calls"].as_array().unwrap().len(), 1);
        assert_eq!(m["tool_calls"][0]["id"], "a");
        assert_eq!(m["tool_calls"][0]["x_extra"], 1);
        assert_eq!(m["content"], "bash|RULE_MATCH|it deletes everything.");
        assert_eq!(doc["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(doc["vendor_field"], json!({"a": [1, 2]}));

        let mut doc2 = json!({"choices": [{"finish_reason": "tool_calls", "message": {"content": "I will", "tool_calls": [tc("a", "x", "{}")]}}]});
        apply(
            &mut doc2,
            &[CallVerdict::Block {
                code: "C".into(),
                reason: "r".into(),
            }],
            "{tool} {code} {reason}",
        );
        assert_eq!(doc2["choices"][0]["message"]["content"], "I will\n\nx C r");
        assert!(doc2["choices"][0]["message"].get("tool_calls").is_none());
        assert_eq!(doc2["choices"][0]["finish_reason"], "stop");

        // The legacy function_call is a call too.
        let mut doc3 = json!({"choices": [{"finish_reason": "function_call", "message": {"content": null,
            "function_call": {"name": "bash", "arguments": "{\"command\":\"rm -rf /\"}"}}}]});
        let cs = calls(&doc3);
        assert_eq!(cs[0].1.name, "bash");
        apply(
            &mut doc3,
            &[CallVerdict::Block {
                code: "C".into(),
                reason: "r".into(),
            }],
            "{tool} {code}",
        );
        assert!(doc3["choices"][0]["message"].get("function_call").is_none());
        assert_eq!(doc3["choices"][0]["message"]["content"], "bash C");
        assert_eq!(doc3["choices"][0]["finish_reason"], "stop");
    }
}
