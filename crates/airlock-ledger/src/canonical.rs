//! Canonical JSON (RFC 8785, JCS) and SHA-256, the two primitives every hash and signature in the
//! ledger is built on. A value has exactly one canonical byte form, so two parties hashing the
//! same arguments or receipt always agree.

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::LedgerError;

/// The RFC 8785 canonical form of `value`.
pub fn to_canonical<T: Serialize>(value: &T) -> Result<Vec<u8>, LedgerError> {
    serde_json_canonicalizer::to_vec(value).map_err(|e| LedgerError::malformed("JSON value", e))
}

/// Re-canonicalises JSON text (for example arguments as an agent sent them).
pub fn canonicalize_str(json: &str) -> Result<Vec<u8>, LedgerError> {
    let v: serde_json::Value =
        serde_json::from_str(json).map_err(|e| LedgerError::malformed("JSON text", e))?;
    to_canonical(&v)
}

pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(sha256(bytes))
}

/// SHA-256 (hex) of the canonical form of `value`: the `args_sha256` of a receipt.
pub fn hash_value<T: Serialize>(value: &T) -> Result<String, LedgerError> {
    Ok(sha256_hex(&to_canonical(value)?))
}

/// Parses a 64-hex-digit SHA-256 value.
pub fn parse_hash(what: &'static str, s: &str) -> Result<[u8; 32], LedgerError> {
    let mut out = [0u8; 32];
    if s.len() != 64 || s.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err(LedgerError::malformed(
            what,
            "expected 64 lowercase hex digits",
        ));
    }
    hex::decode_to_slice(s, &mut out).map_err(|e| LedgerError::malformed(what, e))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// RFC 8785 §3.2.2 / Appendix: the sample object and its canonical text.
    #[test]
    fn rfc8785_sample() {
        let input = r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#;
        let out = String::from_utf8(canonicalize_str(input).unwrap()).unwrap();
        assert_eq!(
            out,
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }

    /// RFC 8785 §3.2.3: property sorting by UTF-16 code units, not by UTF-8 bytes.
    #[test]
    fn rfc8785_utf16_key_order() {
        let input = r#"{
          "\u20ac": "Euro Sign",
          "\r": "Carriage Return",
          "\ufb33": "Hebrew Letter Dalet With Dagesh",
          "1": "One",
          "\ud83d\ude00": "Emoji: Grinning Face",
          "\u0080": "Control",
          "\u00f6": "Latin Small Letter O With Diaeresis"
        }"#;
        let out = String::from_utf8(canonicalize_str(input).unwrap()).unwrap();
        let keys: Vec<String> =
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&out)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
        assert!(!keys.is_empty());
        let order: Vec<&str> = out
            .split("\":\"")
            .skip(1)
            .map(|s| s.split('"').next().unwrap())
            .collect();
        assert_eq!(
            order,
            vec![
                "Carriage Return",
                "One",
                "Control",
                "Latin Small Letter O With Diaeresis",
                "Euro Sign",
                "Emoji: Grinning Face",
                "Hebrew Letter Dalet With Dagesh",
            ]
        );
    }

    /// RFC 8785 Appendix B: IEEE 754 doubles and their ECMAScript serialisation.
    #[test]
    fn rfc8785_number_vectors() {
        let cases: &[(u64, &str)] = &[
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ];
        for (bits, want) in cases {
            let v = f64::from_bits(*bits);
            let got = String::from_utf8(to_canonical(&json!(v)).unwrap()).unwrap();
            assert_eq!(&got, want, "bits {bits:#018x}");
        }
    }

    #[test]
    fn hash_is_of_canonical_form() {
        let a = hash_value(&json!({"b": 1, "a": [1, 2]})).unwrap();
        let b = hash_value(
            &serde_json::from_str::<serde_json::Value>(r#"{ "a":[1,2] ,"b":1.0}"#).unwrap(),
        )
        .unwrap();
        assert_eq!(a, b);
        assert_eq!(parse_hash("h", &a).map(hex::encode).unwrap(), a);
        assert!(parse_hash("h", "zz").is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Canonicalising is idempotent, and key order / whitespace never change the result.
        #[test]
        fn canonical_is_stable(entries in proptest::collection::btree_map("[a-zA-Z0-9\u{80}-\u{2000}]{0,8}", -1_000_000i64..1_000_000, 0..8)) {
            let forward: serde_json::Map<String, serde_json::Value> =
                entries.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
            let once = to_canonical(&forward).unwrap();
            let twice = canonicalize_str(std::str::from_utf8(&once).unwrap()).unwrap();
            proptest::prop_assert_eq!(&once, &twice);
            let mut text = String::from("{ ");
            for (i, (k, v)) in entries.iter().rev().enumerate() {
                if i > 0 { text.push_str(" ,\n "); }
                text.push_str(&serde_json::to_string(k).unwrap());
                text.push_str(" : ");
                text.push_str(&v.to_string());
            }
            text.push_str(" }");
            proptest::prop_assert_eq!(canonicalize_str(&text).unwrap(), once);
        }
    }
}
