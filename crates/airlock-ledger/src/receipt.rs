//! The receipt, format version 1: what was asked, what was decided, under which policy, approved
//! by whom, signed by the ledger key. The signature covers the RFC 8785 form of the receipt
//! without its `sig` field; the receipt's hash (which the next receipt of the session carries
//! as `prev`, and which is the receipt's leaf in the Merkle log) covers the whole signed receipt.
//! `docs/receipts.md` and `docs/receipt.schema.json` describe the wire format.

use airlock_core::{ActionKind, Decision};
use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};

use crate::canonical::{parse_hash, sha256, sha256_hex};
use crate::keys::verify_hex;
use crate::{FORMAT_VERSION, LedgerError, LedgerKey, time};

/// The largest integer RFC 8785 (ECMAScript numbers) represents exactly.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Receipts larger than this are refused when parsed (a receipt holds hashes, not payloads).
pub const MAX_RECEIPT_BYTES: usize = 64 * 1024;

/// One reason behind the decision, as stable identifiers only (messages stay out of receipts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReasonRef {
    /// The stable reason code (`RULE_MATCH`, …), kept as text so that a verifier built before a
    /// code was added still reads the receipt.
    pub code: String,
    pub rule: String,
}

/// A signed receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    // Fields are declared in RFC 8785 order (keys sorted), so serde_json's compact output is
    // already the canonical form; `fast_path_is_canonical` checks that against the canonicaliser.
    pub action: ActionKind,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvers: Vec<String>,
    pub args_sha256: String,
    pub decision: Decision,
    /// Set when the receipt records an event (a scan verdict, a refusal before the policy, a
    /// person's pin approval, a grant's life cycle) rather than a decision on an agent's
    /// action; absent on decisions and on receipts written before events were marked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<EventKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<String>,
    pub id: String,
    pub key_id: String,
    /// Per-session Lamport counter: 1 for the first receipt of a session, then strictly increasing.
    pub lamport: u64,
    /// Position of this receipt in the ledger's Merkle log (0-based).
    pub leaf: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_sha256: Option<String>,
    pub policy_sha256: String,
    /// Hash of the previous receipt of the same session; `None` for the first.
    pub prev: Option<String>,
    pub principal: String,
    pub reasons: Vec<ReasonRef>,
    pub request_id: String,
    pub session: String,
    pub sig: String,
    pub time: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub v: u32,
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
    /// `Some` for an event's receipt ([`EventKind`]); `None` for a decision.
    #[serde(default)]
    pub event: Option<EventKind>,
}

/// What kind of event a receipt records, when it records no decision on an agent's action.
/// Readers (`ledger verify`, `ledger replay`) tell events from decisions by this field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A verdict of the text scanner (an MCP server's answer, an inbound message, `POST /v1/scan`).
    Scan,
    /// A tool call refused before the policy saw it (its arguments could not be read).
    Refusal,
    /// A model request refused because the agent's budget for the period is spent.
    BudgetRefusal,
    /// A person re-approved the changed definition of a quarantined MCP tool.
    PinApproval,
    /// A grant was created, confirmed or revoked, or a session's grants ended.
    Grant,
    /// A tool's output as airlock saw it (its SHA-256 in `output_sha256`), checked against the
    /// output schema its declaration pins.
    ToolOutput,
    /// A session was put in crisis mode (a crisis verdict on the person's text), or an
    /// approver ended its crisis mode.
    Crisis,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Scan => "scan",
            EventKind::Refusal => "refusal",
            EventKind::BudgetRefusal => "budget_refusal",
            EventKind::PinApproval => "pin_approval",
            EventKind::Grant => "grant",
            EventKind::ToolOutput => "tool_output",
            EventKind::Crisis => "crisis",
        }
    }

    /// The event a receipt written before the `event` field recorded, from its exact tool
    /// name (those receipts named events as tools). A refusal kept the refused tool's name and
    /// is not recognised: it reads as the decision it also was, a deny.
    pub fn of_legacy_tool(tool: &str) -> Option<EventKind> {
        match tool {
            "airlock.scan" | "airlock.proxy.inbound_text" => Some(EventKind::Scan),
            "airlock.proxy.request" => Some(EventKind::BudgetRefusal),
            "airlock.mcp.approve_tool" => Some(EventKind::PinApproval),
            "airlock.grant.add"
            | "airlock.grant.confirm"
            | "airlock.grant.revoke"
            | "airlock.grant.end_session" => Some(EventKind::Grant),
            // named so since events have had a type; read by name like the others
            "airlock.crisis.set" | "airlock.crisis.clear" => Some(EventKind::Crisis),
            _ => None,
        }
    }
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
        Ok(self.seal_bytes(key, lamport, prev, leaf, time)?.receipt)
    }

    /// [`NewReceipt::seal`], also returning the canonical bytes and their SHA-256 (what a store
    /// writes and the next receipt of the session chains to), from one serialisation: the
    /// receipt is serialised with a placeholder signature of the right length, the signed bytes
    /// are those without the `sig` member, and the signature then takes the placeholder's place.
    pub fn seal_bytes(
        &self,
        key: &LedgerKey,
        lamport: u64,
        prev: Option<String>,
        leaf: u64,
        time: String,
    ) -> Result<Sealed, LedgerError> {
        let p = self.prepare(key, lamport, prev, leaf, time)?;
        let sig = key.sign_hex(p.signing_bytes());
        p.finish(&sig)
    }

    /// The first half of sealing: the receipt in its place, serialised once with a placeholder
    /// signature, and the bytes the signature will cover. [`Prepared::finish`] takes the
    /// signature; between the two, independent receipts can be signed together
    /// ([`LedgerKey::sign_many`]).
    pub fn prepare(
        &self,
        key: &LedgerKey,
        lamport: u64,
        prev: Option<String>,
        leaf: u64,
        time: String,
    ) -> Result<Prepared, LedgerError> {
        self.validate()?;
        let r = Receipt {
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
            event: self.event,
            key_id: key.id().to_string(),
            sig: "0".repeat(SIG_HEX_LEN),
        };
        r.check_fields()?;
        let bytes = r.canonical_bytes()?;
        let (from, to) = crate::verify::sig_member(&bytes)
            .ok_or_else(|| LedgerError::receipt(&r.id, "no sig member in the canonical form"))?;
        let mut unsigned = Vec::with_capacity(bytes.len() - (to - from));
        unsigned.extend_from_slice(&bytes[..from]);
        unsigned.extend_from_slice(&bytes[to..]);
        // The value sits between the member's opening and closing quotes.
        let value = to.saturating_sub(1 + SIG_HEX_LEN)..to.saturating_sub(1);
        Ok(Prepared {
            receipt: r,
            bytes,
            unsigned,
            value,
        })
    }
}

/// A receipt placed and serialised, waiting for its signature.
#[derive(Debug)]
pub struct Prepared {
    receipt: Receipt,
    bytes: Vec<u8>,
    unsigned: Vec<u8>,
    /// Where the signature's hex digits go in `bytes`.
    value: std::ops::Range<usize>,
}

impl Prepared {
    /// The bytes the signature covers: the canonical receipt without its `sig` member.
    pub fn signing_bytes(&self) -> &[u8] {
        &self.unsigned
    }

    /// Writes the signature (lowercase hex) in place and hashes the signed receipt.
    pub fn finish(self, sig: &str) -> Result<Sealed, LedgerError> {
        let Prepared {
            mut receipt,
            mut bytes,
            value,
            ..
        } = self;
        let slot = bytes
            .get_mut(value)
            .filter(|v| v.len() == SIG_HEX_LEN && sig.len() == SIG_HEX_LEN)
            .ok_or_else(|| LedgerError::receipt(&receipt.id, "signature of the wrong length"))?;
        slot.copy_from_slice(sig.as_bytes());
        receipt.sig = sig.to_string();
        let hash = sha256(&bytes);
        Ok(Sealed {
            receipt,
            bytes,
            hash,
        })
    }
}

/// Hex digits of an Ed25519 signature.
const SIG_HEX_LEN: usize = 128;

/// A sealed receipt with its canonical bytes and their SHA-256.
#[derive(Debug, Clone)]
pub struct Sealed {
    pub receipt: Receipt,
    pub bytes: Vec<u8>,
    pub hash: [u8; 32],
}

impl Receipt {
    /// The bytes the signature covers: the canonical receipt without `sig`.
    pub fn signing_bytes(&self) -> Result<Vec<u8>, LedgerError> {
        let full = self.canonical_bytes()?;
        crate::verify::unsigned_from_canonical(&full)
            .ok_or_else(|| LedgerError::receipt(&self.id, "no sig member in the canonical form"))
    }

    /// The canonical bytes of the whole signed receipt: what the store keeps and packs carry.
    pub fn canonical_bytes(&self) -> Result<Vec<u8>, LedgerError> {
        // the reference: the RFC 8785 canonicaliser (`--cfg airlock_reference`)
        if cfg!(airlock_reference) {
            return crate::canonical::to_canonical(self);
        }
        serde_json::to_vec(self).map_err(|e| LedgerError::malformed("receipt", e))
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
        if self.lamport > MAX_SAFE_INTEGER || self.leaf > MAX_SAFE_INTEGER {
            return bad("lamport and leaf must stay below 2^53 (RFC 8785 numbers)".into());
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
        if self.event.is_some() && (self.action != ActionKind::Tool || self.tool.is_none()) {
            return bad("an event's receipt records a tool-shaped action with its name".into());
        }
        Ok(())
    }

    /// The event this receipt records, if it records one: its `event` field, or for a receipt
    /// written before that field, the event its tool name stood for.
    pub fn event_kind(&self) -> Option<EventKind> {
        self.event.or_else(|| {
            self.tool
                .as_deref()
                .filter(|_| self.action == ActionKind::Tool)
                .and_then(EventKind::of_legacy_tool)
        })
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
    use crate::canonical::{hash_value, to_canonical};

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
            event: None,
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

    /// `docs/receipt.schema.json` names exactly the fields a receipt has, and requires exactly
    /// the ones always present.
    #[test]
    fn schema_matches_the_struct() {
        use std::collections::BTreeSet;
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../../docs/receipt.schema.json")).unwrap();
        let props: BTreeSet<String> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        let required: BTreeSet<String> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let k = LedgerKey::from_secret(&[7; 32]);
        let t = "2026-11-22T14:18:30.000Z".to_string();
        let keys = |r: &Receipt| -> BTreeSet<String> {
            serde_json::to_value(r)
                .unwrap()
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        };
        let minimal = sample("q", "s").seal(&k, 1, None, 0, t.clone()).unwrap();
        assert_eq!(keys(&minimal), required);
        let mut n = sample("q", "s");
        n.action = ActionKind::Tool;
        n.tool = Some("mcp__fs__read".into());
        n.event = Some(EventKind::Refusal);
        n.grant = Some("g".into());
        n.approvers = vec!["human:alice".into()];
        n.output_sha256 = Some(sha256_hex(b"o"));
        assert_eq!(keys(&n.seal(&k, 1, None, 0, t).unwrap()), props);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// The fast path (serde_json over fields declared in sorted order) is byte for byte the
        /// RFC 8785 canonicaliser's output, for any text in the free-form fields.
        #[test]
        fn fast_path_is_canonical(
            principal in "\\PC{0,12}|[\u{0}-\u{1f}\"\\\\/\u{7f}-\u{a0}\u{2028}\u{fffd}]{0,6}",
            session in "[a-z0-9\u{e9}\u{1F600}]{1,8}",
            tool in proptest::option::of("[ -~]{0,10}"),
            rule in "[ -~\u{80}-\u{10ffff}]{0,10}",
            approvers in proptest::collection::vec("\\PC{0,6}", 0..3),
            lamport in 1u64..MAX_SAFE_INTEGER,
        ) {
            let k = LedgerKey::from_secret(&[7; 32]);
            let mut n = sample("q", &session);
            n.principal = principal;
            // an event's receipt names its tool; `event` sorts between `decision` and `grant`
            n.event = tool.as_ref().and_then(|_| (lamport % 2 == 0).then_some(EventKind::Scan));
            if n.event.is_some() {
                n.action = ActionKind::Tool;
            }
            n.tool = tool;
            n.approvers = approvers;
            n.reasons = vec![ReasonRef { code: "RULE_MATCH".into(), rule }];
            let prev = (lamport > 1).then(|| sha256_hex(b"p"));
            let r = n.seal(&k, lamport, prev, lamport / 2, "2026-11-22T14:18:30.000Z".into()).unwrap();
            proptest::prop_assert_eq!(r.canonical_bytes().unwrap(), to_canonical(&r).unwrap());
            let mut v = serde_json::to_value(&r).unwrap();
            v.as_object_mut().unwrap().remove("sig");
            proptest::prop_assert_eq!(r.signing_bytes().unwrap(), to_canonical(&v).unwrap());
            proptest::prop_assert_eq!(Receipt::parse(&r.canonical_bytes().unwrap()).unwrap(), r.clone());
            let s = n.seal_bytes(&k, lamport, (lamport > 1).then(|| sha256_hex(b"p")), lamport / 2, "2026-11-22T14:18:30.000Z".into()).unwrap();
            proptest::prop_assert_eq!(&s.bytes, &r.canonical_bytes().unwrap());
            proptest::prop_assert_eq!(s.hash, r.hash().unwrap());
            proptest::prop_assert_eq!(s.receipt, r);
        }
    }

    #[test]
    fn events_are_marked_by_type_and_old_receipts_still_read() {
        let k = LedgerKey::from_secret(&[7; 32]);
        let mut n = sample("ev", "s");
        n.action = ActionKind::Tool;
        n.tool = Some("airlock.scan".into());
        let old = n
            .seal(&k, 1, None, 0, "2026-11-22T14:18:30.000Z".into())
            .unwrap();
        let bytes = String::from_utf8(old.canonical_bytes().unwrap()).unwrap();
        assert!(!bytes.contains("\"event\""), "no field when unset: {bytes}");
        assert_eq!(old.event_kind(), Some(EventKind::Scan), "legacy name");
        n.event = Some(EventKind::PinApproval);
        n.tool = Some("anything".into());
        let new = n
            .seal(&k, 1, None, 0, "2026-11-22T14:18:30.000Z".into())
            .unwrap();
        let bytes = new.canonical_bytes().unwrap();
        assert!(String::from_utf8_lossy(&bytes).contains("\"event\":\"pin_approval\""));
        assert_eq!(
            Receipt::parse(&bytes).unwrap().event_kind(),
            Some(EventKind::PinApproval)
        );
        // a decision on a tool whose name merely starts like an event is no event
        n.event = None;
        n.tool = Some("airlock.grant.something_else".into());
        let r = n
            .seal(&k, 1, None, 0, "2026-11-22T14:18:30.000Z".into())
            .unwrap();
        assert_eq!(r.event_kind(), None);
        // an event must name the tool-shaped action it carries
        n.event = Some(EventKind::Grant);
        n.action = ActionKind::Shell;
        n.tool = None;
        assert!(
            n.seal(&k, 1, None, 0, "2026-11-22T14:18:30.000Z".into())
                .is_err()
        );
    }

    #[test]
    fn chain_rules_in_fields() {
        let k = LedgerKey::from_secret(&[7; 32]);
        let t = "2026-11-22T14:18:30.000Z".to_string();
        // The ledger refuses to sign a receipt that would not verify.
        assert!(sample("q", "s").seal(&k, 2, None, 0, t.clone()).is_err());
        assert!(
            sample("q", "s")
                .seal(&k, 1, Some(sha256_hex(b"x")), 0, t.clone())
                .is_err()
        );
        assert!(
            sample("q", "s")
                .seal(&k, 1, None, 1 << 53, t.clone())
                .is_err()
        );
        let mut bad = sample("q", "s");
        bad.args_sha256 = "nope".into();
        assert!(bad.seal(&k, 1, None, 0, t).is_err());
        assert_eq!(receipt_id("q"), receipt_id("q"));
        assert_ne!(receipt_id("q"), receipt_id("q2"));
    }
}
