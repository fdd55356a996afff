//! Ed25519 keys and their ids. A key id is `ed25519:` followed by the first 16 bytes (hex) of the
//! SHA-256 of the public key, short enough to print and long enough not to collide by accident.
//! Secret key bytes never leave this type except through [`LedgerKey::secret_bytes`], which the
//! store uses to write the owner-only key file.

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};

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
    id: String,
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
        LedgerKey { signing, id }
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
}
