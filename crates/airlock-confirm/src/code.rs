//! The deliberate-confirmation code of a tier-4 approval: derived from the action's hash, so a
//! person must look at this action's card to type it, and short, from an alphabet without
//! look-alikes (no 0/O, 1/I/L, 2/Z, 5/S, 8/B, U/V).

use sha2::{Digest, Sha256};

const ALPHABET: &[u8] = b"ACDEFGHJKMNPQRTWXY34679";
const LEN: usize = 6;

/// The code an approver types to approve the action whose hash is `action_sha256`.
pub fn deliberate_code(action_sha256: &str) -> String {
    let digest = Sha256::new()
        .chain_update(b"airlock.deliberate-code.v1\0")
        .chain_update(action_sha256.as_bytes())
        .finalize();
    digest
        .iter()
        .take(LEN)
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect()
}

/// Whether `given` is the code, ignoring case, spaces and dashes people add when typing.
pub fn code_matches(action_sha256: &str, given: &str) -> bool {
    let typed: String = given
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| c.to_ascii_uppercase())
        .collect();
    let want = deliberate_code(action_sha256);
    subtle::ConstantTimeEq::ct_eq(typed.as_bytes(), want.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_unambiguous_and_bound_to_the_hash() {
        let a = deliberate_code(&"a".repeat(64));
        let b = deliberate_code(&"b".repeat(64));
        assert_eq!(a.len(), LEN);
        assert_ne!(a, b);
        assert!(a.chars().all(|c| !"01IOLZ2S5B8UV".contains(c)), "{a}");
        assert!(code_matches(&"a".repeat(64), &a.to_lowercase()));
        assert!(!code_matches(&"a".repeat(64), &b));
        assert!(!code_matches(&"a".repeat(64), ""));
    }
}
