//! The receipt, format version 1: what was asked, what was decided, under which policy, approved
//! by whom, signed by the ledger key. The signature covers the RFC 8785 form of the receipt
//! without its `sig` field; the receipt's hash (which the next receipt of the session carries
//! as `prev`, and which is the receipt's leaf in the Merkle log) covers the whole signed receipt.
//! `docs/receipts.md` and `docs/receipt.schema.json` describe the wire format.

use airlock_core::{ActionKind, Decision};
use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};

use crate::canonical::{parse_hash, sha256, sha256_hex, to_canonical};
use crate::keys::verify_hex;
use crate::{FORMAT_VERSION, LedgerError, LedgerKey, time};

/// Receipts larger than this are refused when parsed (a receipt holds hashes, not payloads).
pub const MAX_RECEIPT_BYTES: usize = 64 * 1024;

/// One reason behind the decision, as stable identifiers only (messages stay out of receipts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReasonRef {
    pub rule: String,
    /// The stable reason code (`RULE_MATCH`, …), kept as text so that a verifier built before a
    /// code was added still reads the receipt.
    pub code: String,
}

/// A signed receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    pub v: u32,
    pub id: String,
    pub request_id: String,
    pub session: String,
    /// Per-session Lamport counter: 1 for the first receipt of a session, then strictly increasing.
    pub lamport: u64,
    /// Hash of the previous receipt of the same session; `None` for the first.
    pub prev: Option<String>,
    /// Position of this receipt in the ledger's Merkle log (0-based).
    pub leaf: u64,
    pub time: String,
    pub principal: String,
    pub action: ActionKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub args_sha256: String,
    pub decision: Decision,
    pub reasons: Vec<ReasonRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvers: Vec<String>,
    pub policy_sha256: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_sha256: Option<String>,
    pub key_id: String,
    pub sig: String,
}

/// What a caller supplies; the ledger fills in the chain, the counter, the time and the signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewReceipt {
    pub request_id: String,
    pub session: String,
    pub principal: String,
    pub action: ActionKind,
    pub tool: Option<String>,
    pub args_sha256: String,
    pub decision: Decision,
    pub reasons: Vec<ReasonRef>,
    pub grant: Option<String>,
    pub approvers: Vec<String>,
    pub policy_sha256: String,
    pub output_sha256: Option<String>,
}

/// The receipt id for a request id: deterministic, so the same request always names the same
/// receipt (idempotency), and opaque, so request ids do not leak through receipt ids.
pub fn receipt_id(request_id: &str) -> String {
    let mut input = b"airlock.receipt-id.v1\0".to_vec();
    input.extend_from_slice(request_id.as_bytes());
    format!("r-{}", &sha256_hex(&input)[..32])
}

impl NewReceipt {
    /// Checks what a caller could get wrong before anything is signed.
    pub fn validate(&self) -> Result<(), LedgerError> {
        let id = receipt_id(&self.request_id);
        let bad = |d: &str| Err(LedgerError::receipt(&id, d.to_string()));
        if self.request_id.is_empty() || self.request_id.len() > 256 {
            return bad("request id must be 1-256 bytes");
        }
        if self.session.is_empty() || self.session.len() > 256 {
            return bad("session must be 1-256 bytes");
        }
        if self.principal.len() > 256 {
            return bad("principal is longer than 256 bytes");
        }
        parse_hash("args_sha256", &self.args_sha256)?;
        parse_hash("policy_sha256", &self.policy_sha256)?;
        if let Some(o) = &self.output_sha256 {
            parse_hash("output_sha256", o)?;
        }
        Ok(())
    }

    /// Signs the receipt at position `leaf`, as number `lamport` of its session after `prev`.
    pub fn seal(
        &self,
        key: &LedgerKey,
        lamport: u64,
        prev: Option<String>,
        leaf: u64,
        time: String,
    ) -> Result<Receipt, LedgerError> {
        self.validate()?;
        let mut r = Receipt {
            v: FORMAT_VERSION,
            id: receipt_id(&self.request_id),
            request_id: self.request_id.clone(),
            session: self.session.clone(),
            lamport,
            prev,
            leaf,
            time,
            principal: self.principal.clone(),
            action: self.action,
            tool: self.tool.clone(),
            args_sha256: self.args_sha256.clone(),
            decision: self.decision,
            reasons: self.reasons.clone(),
            grant: self.grant.clone(),
            approvers: self.approvers.clone(),
            policy_sha256: self.policy_sha256.clone(),
            output_sha256: self.output_sha256.clone(),
            key_id: key.id().to_string(),
            sig: String::new(),
        };
        r.sig = key.sign_hex(&r.signing_bytes()?);
        Ok(r)
    }
}

impl Receipt {
    /// The bytes the signature covers: the canonical receipt without `sig`.
    pub fn signing_bytes(&self) -> Result<Vec<u8>, LedgerError> {
        let mut v = serde_json::to_value(self).map_err(|e| LedgerError::malformed("receipt", e))?;
        if let Some(m) = v.as_object_mut() {
            m.remove("sig");
        }
        to_canonical(&v)
    }

    /// The canonical bytes of the whole signed receipt: what the store keeps and packs carry.
    pub fn canonical_bytes(&self) -> Result<Vec<u8>, LedgerError> {
        to_canonical(self)
    }

    /// SHA-256 of the canonical signed receipt.
    pub fn hash(&self) -> Result<[u8; 32], LedgerError> {
        Ok(sha256(&self.canonical_bytes()?))
    }

    pub fn hash_hex(&self) -> Result<String, LedgerError> {
        Ok(hex::encode(self.hash()?))
    }

    /// Parses stored or exported bytes, refusing anything that is not exactly the canonical form
    /// of a well-formed version-1 receipt (so a flipped byte anywhere is caught, even in a place
    /// JSON would ignore).
    pub fn parse(bytes: &[u8]) -> Result<Receipt, LedgerError> {
        if bytes.len() > MAX_RECEIPT_BYTES {
            return Err(LedgerError::TooLarge {
                what: "receipt",
                limit: MAX_RECEIPT_BYTES,
            });
        }
        let r: Receipt =
            serde_json::from_slice(bytes).map_err(|e| LedgerError::malformed("receipt", e))?;
        r.check_fields()?;
        if r.canonical_bytes()? != bytes {
            return Err(LedgerError::receipt(
                &r.id,
                "stored bytes are not the canonical form",
            ));
        }
        Ok(r)
    }

    /// Field-level checks that do not need a key.
    pub fn check_fields(&self) -> Result<(), LedgerError> {
        let bad = |d: String| Err(LedgerError::receipt(&self.id, d));
        if self.v != FORMAT_VERSION {
            return bad(format!("unsupported receipt version {}", self.v));
        }
        if self.id != receipt_id(&self.request_id) {
            return bad("id does not match its request id".into());
        }
        if self.lamport == 0 {
            return bad("Lamport counter must start at 1".into());
        }
        if (self.lamport == 1) != self.prev.is_none() {
            return bad("only the first receipt of a session (lamport 1) has no prev".into());
        }
        let hashes = [
            ("args_sha256", Some(&self.args_sha256)),
            ("policy_sha256", Some(&self.policy_sha256)),
            ("prev", self.prev.as_ref()),
            ("output_sha256", self.output_sha256.as_ref()),
        ];
        for (what, h) in hashes {
            if let Some(h) = h
                && let Err(e) = parse_hash(what, h)
            {
                return bad(e.to_string());
            }
        }
        if let Err(e) = time::check("receipt time", &self.time) {
            return bad(e.to_string());
        }
        Ok(())
    }

    /// Checks the signature with the given key (the caller chose the key valid at `self.time`).
    pub fn verify_signature(&self, vk: &VerifyingKey) -> Result<(), LedgerError> {
        if verify_hex(vk, &self.signing_bytes()?, &self.sig) {
            Ok(())
        } else {
            Err(LedgerError::receipt(
                &self.id,
                format!("signature does not verify with key {}", self.key_id),
            ))
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::canonical::hash_value;

    pub fn sample(request_id: &str, session: &str) -> NewReceipt {
        NewReceipt {
            request_id: request_id.into(),
            session: session.into(),
            principal: "agent:claude-code".into(),
            action: ActionKind::Shell,
            tool: None,
            args_sha256: hash_value(&serde_json::json!({"command": "ls -la"})).unwrap(),
            decision: Decision::Allow,
            reasons: vec![ReasonRef {
                rule: "readonly".into(),
                code: "READ_ONLY".into(),
            }],
            grant: None,
            approvers: vec![],
            policy_sha256: sha256_hex(b"policy"),
            output_sha256: None,
        }
    }

    #[test]
    fn seal_parse_verify() {
        let k = LedgerKey::from_secret(&[7; 32]);
        let r = sample("q1", "s1")
            .seal(&k, 1, None, 0, "2026-11-22T14:18:30.000Z".into())
            .unwrap();
        let bytes = r.canonical_bytes().unwrap();
        let back = Receipt::parse(&bytes).unwrap();
        assert_eq!(back, r);
        back.verify_signature(&k.verifying_key()).unwrap();
        // Any change to a signed field breaks the signature.
        let mut t = r.clone();
        t.decision = Decision::Deny;
        assert!(t.verify_signature(&k.verifying_key()).is_err());
        // Non-canonical bytes are refused.
        let mut spaced = bytes.clone();
        spaced.insert(1, b' ');
        assert!(Receipt::parse(&spaced).is_err());
        // Unknown fields are refused.
        let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        v["extra"] = 1.into();
        assert!(Receipt::parse(&to_canonical(&v).unwrap()).is_err());
    }

    #[test]
    fn wire_snapshot() {
        let k = LedgerKey::from_secret(&[7; 32]);
        let mut n = sample("q1", "s1");
        n.grant = Some("g-1".into());
        n.approvers = vec!["human:alice".into()];
        n.output_sha256 = Some(sha256_hex(b"out"));
        let r = n
            .seal(
                &k,
                2,
                Some(sha256_hex(b"prev")),
                5,
                "2026-11-22T14:18:30.000Z".into(),
            )
            .unwrap();
        insta::assert_snapshot!(String::from_utf8(r.canonical_bytes().unwrap()).unwrap());
    }

    #[test]
    fn chain_rules_in_fields() {
        let k = LedgerKey::from_secret(&[7; 32]);
        let t = "2026-11-22T14:18:30.000Z".to_string();
        assert!(
            sample("q", "s")
                .seal(&k, 2, None, 0, t.clone())
                .unwrap()
                .check_fields()
                .is_err()
        );
        assert!(
            sample("q", "s")
                .seal(&k, 1, Some(sha256_hex(b"x")), 0, t.clone())
                .unwrap()
                .check_fields()
                .is_err()
        );
        let mut bad = sample("q", "s");
        bad.args_sha256 = "nope".into();
        assert!(bad.seal(&k, 1, None, 0, t).is_err());
        assert_eq!(receipt_id("q"), receipt_id("q"));
        assert_ne!(receipt_id("q"), receipt_id("q2"));
    }
}
