//! The deliberate-confirmation code of a tier-4 approval: short, from an alphabet without
//! look-alikes (no 0/O, 1/I/L, 2/Z, 5/S, 8/B, U/V), and keyed: HMAC-SHA256 of the action's hash
//! under a secret the store keeps (`store_secrets`, drawn once, shared by every node). An agent
//! sees its action's hash but not the secret, so it cannot compute the code; a person must read
//! it on the approval's card. Wrong codes are counted per approval and, after
//! `MAX_CODE_ATTEMPTS`, the approval is locked out: denied, with reason `CODE_LOCKOUT`.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

const ALPHABET: &[u8] = b"ACDEFGHJKMNPQRTWXY34679";
const LEN: usize = 6;

/// Wrong codes an approval takes before it is locked out.
pub const MAX_CODE_ATTEMPTS: i64 = 3;
/// The name of the codes' secret in the store.
pub(crate) const SECRET_NAME: &str = "deliberate-code.v2";

/// The code an approver types to approve the action whose hash is `action_sha256`, under the
/// store's secret `key`.
pub fn deliberate_code(key: &[u8], action_sha256: &str) -> String {
    // HMAC takes keys of any length; an empty code never matches (see `code_matches`).
    let Ok(mut m) = <Hmac<Sha256> as KeyInit>::new_from_slice(key) else {
        return String::new();
    };
    m.update(b"airlock.deliberate-code.v2\0");
    m.update(action_sha256.as_bytes());
    m.finalize()
        .into_bytes()
        .iter()
        .take(LEN)
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect()
}

/// Whether `given` is the code, ignoring case, spaces and dashes people add when typing.
pub fn code_matches(key: &[u8], action_sha256: &str, given: &str) -> bool {
    let typed: String = given
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| c.to_ascii_uppercase())
        .collect();
    let want = deliberate_code(key, action_sha256);
    !want.is_empty() && subtle::ConstantTimeEq::ct_eq(typed.as_bytes(), want.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::Digest;

    #[test]
    fn short_unambiguous_and_bound_to_the_hash_and_key() {
        let key = [7u8; 32];
        let a = deliberate_code(&key, &"a".repeat(64));
        let b = deliberate_code(&key, &"b".repeat(64));
        assert_eq!(a.len(), LEN);
        assert_ne!(a, b);
        assert!(a.chars().all(|c| !"01IOLZ2S5B8UV".contains(c)), "{a}");
        assert!(code_matches(&key, &"a".repeat(64), &a.to_lowercase()));
        assert!(!code_matches(&key, &"a".repeat(64), &b));
        assert!(!code_matches(&key, &"a".repeat(64), ""));
        assert_ne!(
            deliberate_code(&[8u8; 32], &"a".repeat(64)),
            a,
            "another key, another code"
        );
    }

    /// The code an agent could compute before: an unkeyed SHA-256 of the action's hash.
    fn unkeyed(action_sha256: &str) -> String {
        sha2::Sha256::new()
            .chain_update(b"airlock.deliberate-code.v1\0")
            .chain_update(action_sha256.as_bytes())
            .finalize()
            .iter()
            .take(LEN)
            .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
            .collect()
    }

    #[test]
    fn what_an_agent_can_compute_is_not_the_code() {
        let key = [9u8; 32];
        // Over many hashes the unkeyed computation matches no more often than a guess would
        // (23^6 codes: a handful of chance matches in a thousand would already be suspect).
        let hits = (0..1000)
            .map(|i| format!("{:064x}", i))
            .filter(|h| code_matches(&key, h, &unkeyed(h)))
            .count();
        assert_eq!(hits, 0);
    }
}
