//! Ed25519 keys and their ids. A key id is `ed25519:` followed by the first 16 bytes (hex) of the
//! SHA-256 of the public key, short enough to print and long enough not to collide by accident.
//! Secret key bytes never leave this type except through [`LedgerKey::secret_bytes`], which the
//! store uses to write the owner-only key file.
//!
//! [`LedgerKey::sign_many`] signs independent messages together: Ed25519 is deterministic, so its
//! signatures are byte for byte those of [`LedgerKey::sign_hex`], but the nonce points of the
//! batch are compressed with one shared field inversion instead of one each.

use curve25519_dalek::edwards::EdwardsPoint;
use curve25519_dalek::scalar::{Scalar, clamp_integer};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha512};

use crate::LedgerError;
use crate::canonical::sha256;

/// What a key in the trust registry may sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyRole {
    /// Adds, rotates and revokes other keys.
    Admin,
    /// Signs receipts and checkpoints.
    Ledger,
    /// Signs approvals (a person or an approving LLM); never receipts.
    Approver,
}

/// A signing key with its id.
pub struct LedgerKey {
    signing: SigningKey,
    /// RFC 8032's expanded secret (the clamped scalar and the nonce prefix, the two halves of
    /// SHA-512 of the seed), kept for [`LedgerKey::sign_many`].
    expanded: Expanded,
    id: String,
}

struct Expanded {
    scalar: Scalar,
    prefix: [u8; 32],
}

impl Drop for Expanded {
    fn drop(&mut self) {
        // Best effort: secrets should not outlive the key in freed memory.
        self.scalar = Scalar::ZERO;
        self.prefix = [0; 32];
    }
}

fn sha512(parts: &[&[u8]]) -> [u8; 64] {
    let mut h = Sha512::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

impl LedgerKey {
    /// A fresh key from the operating system's random source.
    pub fn generate() -> Result<Self, LedgerError> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| LedgerError::Random(e.to_string()))?;
        Ok(Self::from_secret(&secret))
    }

    pub fn from_secret(secret: &[u8; 32]) -> Self {
        let signing = SigningKey::from_bytes(secret);
        let id = key_id(&signing.verifying_key());
        let h = sha512(&[secret]);
        let mut lower = [0u8; 32];
        let mut prefix = [0u8; 32];
        lower.copy_from_slice(&h[..32]);
        prefix.copy_from_slice(&h[32..]);
        let expanded = Expanded {
            scalar: Scalar::from_bytes_mod_order(clamp_integer(lower)),
            prefix,
        };
        LedgerKey {
            signing,
            expanded,
            id,
        }
    }

    pub fn secret_bytes(&self) -> [u8; 32] {
        self.signing.to_bytes()
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn verifying_key(&self) -> VerifyingKey {
        self.signing.verifying_key()
    }

    pub fn public_hex(&self) -> String {
        hex::encode(self.verifying_key().to_bytes())
    }

    /// Signs `msg` and returns the signature as lowercase hex.
    pub fn sign_hex(&self, msg: &[u8]) -> String {
        hex::encode(self.signing.sign(msg).to_bytes())
    }

    /// Signs each message (RFC 8032 PureEdDSA, the same bytes `sign_hex` gives). The nonce
    /// points `R = r·B` are compressed together, which shares one field inversion among the
    /// batch; the rest is the usual per-message work.
    pub fn sign_many(&self, msgs: &[&[u8]]) -> Vec<[u8; 64]> {
        let nonces: Vec<Scalar> = msgs
            .iter()
            .map(|m| Scalar::from_bytes_mod_order_wide(&sha512(&[&self.expanded.prefix, m])))
            .collect();
        let points: Vec<EdwardsPoint> = nonces.iter().map(EdwardsPoint::mul_base).collect();
        let compressed = EdwardsPoint::compress_batch_alloc(&points);
        let public = self.signing.verifying_key().to_bytes();
        msgs.iter()
            .zip(nonces)
            .zip(compressed)
            .map(|((m, r), big_r)| {
                let k = Scalar::from_bytes_mod_order_wide(&sha512(&[big_r.as_bytes(), &public, m]));
                let s = k * self.expanded.scalar + r;
                let mut sig = [0u8; 64];
                sig[..32].copy_from_slice(big_r.as_bytes());
                sig[32..].copy_from_slice(s.as_bytes());
                sig
            })
            .collect()
    }
}

impl std::fmt::Debug for LedgerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LedgerKey({})", self.id)
    }
}

pub fn key_id(vk: &VerifyingKey) -> String {
    format!("ed25519:{}", hex::encode(&sha256(vk.as_bytes())[..16]))
}

pub fn parse_public(key_id_hint: &str, hex_key: &str) -> Result<VerifyingKey, LedgerError> {
    let mut b = [0u8; 32];
    hex::decode_to_slice(hex_key, &mut b).map_err(|e| LedgerError::Key {
        key_id: key_id_hint.to_string(),
        detail: format!("public key is not 64 hex digits: {e}"),
    })?;
    VerifyingKey::from_bytes(&b).map_err(|e| LedgerError::Key {
        key_id: key_id_hint.to_string(),
        detail: format!("not an Ed25519 public key: {e}"),
    })
}

pub fn parse_signature(hex_sig: &str) -> Option<Signature> {
    let mut b = [0u8; 64];
    hex::decode_to_slice(hex_sig, &mut b).ok()?;
    Some(Signature::from_bytes(&b))
}

/// Strict single verification of a hex signature.
pub fn verify_hex(vk: &VerifyingKey, msg: &[u8], hex_sig: &str) -> bool {
    parse_signature(hex_sig).is_some_and(|s| vk.verify_strict(msg, &s).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_and_verify() {
        let k = LedgerKey::generate().unwrap();
        let s = k.sign_hex(b"hello");
        assert!(verify_hex(&k.verifying_key(), b"hello", &s));
        assert!(!verify_hex(&k.verifying_key(), b"hellO", &s));
        assert!(!verify_hex(&k.verifying_key(), b"hello", "00"));
        let again = LedgerKey::from_secret(&k.secret_bytes());
        assert_eq!(again.id(), k.id());
        assert!(k.id().starts_with("ed25519:") && k.id().len() == 8 + 32);
        assert_eq!(
            parse_public(k.id(), &k.public_hex()).unwrap(),
            k.verifying_key()
        );
    }

    #[test]
    fn sign_many_of_nothing_is_nothing() {
        let k = LedgerKey::generate().unwrap();
        assert!(k.sign_many(&[]).is_empty());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Ed25519 is deterministic: the batch must give exactly the one-by-one signatures,
        /// which must verify strictly, for any key and any messages (empty and repeated too).
        #[test]
        fn sign_many_equals_one_by_one(
            seed in proptest::array::uniform32(proptest::num::u8::ANY),
            msgs in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..300), 0..12),
        ) {
            let k = LedgerKey::from_secret(&seed);
            let refs: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
            let batch = k.sign_many(&refs);
            proptest::prop_assert_eq!(batch.len(), msgs.len());
            for (m, sig) in msgs.iter().zip(&batch) {
                proptest::prop_assert_eq!(hex::encode(sig), k.sign_hex(m));
                proptest::prop_assert!(verify_hex(&k.verifying_key(), m, &hex::encode(sig)));
            }
        }
    }

    /// RFC 8032 section 7.1, test 3 (two-byte message): a fixed vector, so the batch path is
    /// checked against the standard and not only against the library it sits beside.
    #[test]
    fn sign_many_matches_rfc8032_vector() {
        let mut seed = [0u8; 32];
        hex::decode_to_slice(
            "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
            &mut seed,
        )
        .unwrap();
        let k = LedgerKey::from_secret(&seed);
        assert_eq!(
            k.public_hex(),
            "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025"
        );
        let sigs = k.sign_many(&[&[0xaf, 0x82], &[0xaf, 0x82]]);
        let want = "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac\
                    18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a";
        assert_eq!(hex::encode(sigs[0]), want);
        assert_eq!(sigs[0], sigs[1]);
    }
}
