//! Pinned JSON Schemas for tool arguments and outputs. A schema is identified by the SHA-256 of
//! its RFC 8785 canonical form, so the same schema written in TOML or in a JSON file has one
//! hash. Fields a schema does not name are refused: every object schema that lists
//! `properties` and says nothing about `additionalProperties` is closed before compiling.
//! External `$ref`s are never fetched (the validator is built without network or file access).

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Nesting beyond this in a schema or in arguments is refused, not recursed into.
pub const MAX_DEPTH: usize = 64;

/// A schema ready to validate, or the reason it cannot be used.
#[derive(Debug)]
pub enum Pinned {
    Ready {
        sha256: String,
        validator: Box<jsonschema::Validator>,
    },
    /// The hash pinned in the policy differs from the schema's.
    PinMismatch { expected: String, actual: String },
    /// The schema does not compile (or could not be read).
    Invalid(String),
}

/// SHA-256 (hex) of a JSON value's RFC 8785 canonical form.
pub fn canonical_sha256(v: &Value) -> Result<String, String> {
    canonical_with_sha256(v).map(|(_, h)| h)
}

/// The RFC 8785 canonical text of `v` and its SHA-256 (lowercase hex).
pub fn canonical_with_sha256(v: &Value) -> Result<(String, String), String> {
    let text = serde_json_canonicalizer::to_string(v).map_err(|e| e.to_string())?;
    let h = hex(&Sha256::digest(text.as_bytes()));
    Ok((text, h))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Compiles `schema`, checking it against the pinned hash when one is given.
pub fn pin(schema: &Value, pinned: Option<&str>) -> Pinned {
    if depth(schema) > MAX_DEPTH {
        return Pinned::Invalid(format!("the schema nests deeper than {MAX_DEPTH} levels"));
    }
    let sha256 = match canonical_sha256(schema) {
        Ok(h) => h,
        Err(e) => return Pinned::Invalid(format!("cannot canonicalise the schema: {e}")),
    };
    if let Some(expected) = pinned {
        let expected = expected.trim().to_ascii_lowercase();
        if expected != sha256 {
            return Pinned::PinMismatch {
                expected,
                actual: sha256,
            };
        }
    }
    let mut closed = schema.clone();
    close_objects(&mut closed);
    match jsonschema::options().build(&closed) {
        Ok(v) => Pinned::Ready {
            sha256,
            validator: Box::new(v),
        },
        Err(e) => Pinned::Invalid(format!("the schema does not compile: {e}")),
    }
}

/// Every failure, as `pointer: message`, at most `limit` of them.
pub fn violations(v: &jsonschema::Validator, instance: &Value, limit: usize) -> Vec<String> {
    if depth(instance) > MAX_DEPTH {
        return vec![format!("the value nests deeper than {MAX_DEPTH} levels")];
    }
    v.iter_errors(instance)
        .take(limit)
        .map(|e| {
            let at = e.instance_path().to_string();
            let at = if at.is_empty() { "/".to_string() } else { at };
            format!("{at}: {e}")
        })
        .collect()
}

fn close_objects(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if map.contains_key("properties")
                && !map.contains_key("additionalProperties")
                && !map.contains_key("patternProperties")
                && !map.contains_key("unevaluatedProperties")
            {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            for (k, child) in map.iter_mut() {
                // `properties` and the like hold schemas by name; `enum`/`const` hold data
                if k == "enum" || k == "const" || k == "examples" || k == "default" {
                    continue;
                }
                close_objects(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(close_objects),
        _ => {}
    }
}

/// Nesting depth without recursion (bounded work on hostile input).
pub fn depth(v: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        max = max.max(d);
        if d > MAX_DEPTH {
            return d;
        }
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|c| (c, d + 1))),
            Value::Object(o) => stack.extend(o.values().map(|c| (c, d + 1))),
            _ => {}
        }
    }
    max
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ready(s: &Value) -> Box<jsonschema::Validator> {
        match pin(s, None) {
            Pinned::Ready { validator, .. } => validator,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unknown_fields_are_refused_at_every_level() {
        let v = ready(&json!({
            "type": "object",
            "properties": {"title": {"type": "string"}, "meta": {"type": "object", "properties": {"a": {"type": "integer"}}}},
            "required": ["title"]
        }));
        assert!(violations(&v, &json!({"title": "x"}), 5).is_empty());
        assert!(!violations(&v, &json!({"title": "x", "extra": 1}), 5).is_empty());
        assert!(!violations(&v, &json!({"title": "x", "meta": {"b": 1}}), 5).is_empty());
        assert!(!violations(&v, &json!({"title": 3}), 5).is_empty());
    }

    #[test]
    fn an_explicit_open_schema_stays_open() {
        let v = ready(
            &json!({"type": "object", "properties": {"a": {}}, "additionalProperties": true}),
        );
        assert!(violations(&v, &json!({"a": 1, "b": 2}), 5).is_empty());
    }

    #[test]
    fn pins_are_checked_on_canonical_form() {
        let a = json!({"type": "object", "properties": {"x": {"type": "string"}}});
        let b: Value =
            serde_json::from_str(r#"{ "properties": {"x": {"type":"string"}}, "type":"object" }"#)
                .unwrap();
        let ha = canonical_sha256(&a).unwrap();
        assert_eq!(ha, canonical_sha256(&b).unwrap());
        assert!(matches!(pin(&b, Some(&ha)), Pinned::Ready { .. }));
        assert!(matches!(
            pin(&b, Some(&"0".repeat(64))),
            Pinned::PinMismatch { .. }
        ));
    }

    #[test]
    fn bad_schemas_and_deep_values_are_errors() {
        assert!(matches!(
            pin(&json!({"type": 12}), None),
            Pinned::Invalid(_)
        ));
        assert!(matches!(
            pin(&json!({"$ref": "https://example.invalid/s.json"}), None),
            Pinned::Invalid(_)
        ));
        let v = ready(&json!({}));
        let mut deep = json!(1);
        for _ in 0..100 {
            deep = json!([deep]);
        }
        assert!(!violations(&v, &deep, 5).is_empty());
    }
}
