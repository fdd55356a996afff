//! Batch verification of many Ed25519 signatures made by a few keys (a ledger signs every
//! receipt with one key, so a log of a million receipts has one or a handful of signers).
//!
//! A signature `(R, s)` by key `A` on message `M` holds when `s·B = R + k·A`, with
//! `k = SHA-512(R ‖ A ‖ M) mod ℓ`. A batch holds when, for random 128-bit weights `zᵢ`,
//!
//! ```text
//! (−Σ zᵢ·sᵢ)·B + Σ_A (Σ_{i signed by A} zᵢ·kᵢ)·A + Σ zᵢ·Rᵢ = 0
//! ```
//!
//! which is the equation `ed25519_dalek::verify_batch` checks, with the terms of each key summed
//! into one scalar first: one multiscalar multiplication over `n + keys + 1` points instead of
//! `2n + 1`, and the `n` remaining scalars are the short `zᵢ`, so it costs about a third of
//! dalek's. As there, a batch that holds means every signature holds except with probability
//! about 2⁻¹²⁸; a batch that fails says only that some signature may be bad, and the caller
//! re-checks one by one with `verify_strict` to name it. Like `verify_strict`, `s` must be
//! canonical and neither `R` nor `A` may be of small order; the weights are fresh randomness from
//! the operating system for every batch, so a forger cannot aim at them.

use std::iter::once;

use curve25519_dalek::constants::ED25519_BASEPOINT_POINT;
use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{IsIdentity, VartimeMultiscalarMul};
use ed25519_dalek::{Signature, VerifyingKey};
use sha2::{Digest, Sha256, Sha512};

/// One signature to check: by `keys[key]`, over the concatenation of `msg` (the signed bytes may
/// be a stored receipt with its `sig` member cut out, handed over as the parts around it).
pub struct BatchItem<'a> {
    pub key: usize,
    pub sig: Signature,
    pub msg: [&'a [u8]; 2],
}

/// True when every item's signature holds (with overwhelming probability); false when at least
/// one may not, or when no randomness was available: then check the items one by one.
pub fn verify_batch(keys: &[VerifyingKey], items: &[BatchItem<'_>]) -> bool {
    if items.is_empty() {
        return true;
    }
    let mut seed = [0u8; 32];
    if getrandom::fill(&mut seed).is_err() {
        return false;
    }
    let key_points: Vec<EdwardsPoint> = keys.iter().map(VerifyingKey::to_edwards).collect();
    if key_points.iter().any(EdwardsPoint::is_small_order) {
        return false;
    }
    let mut key_coeffs = vec![Scalar::ZERO; keys.len()];
    let mut base_coeff = Scalar::ZERO;
    let mut weights = Vec::with_capacity(items.len());
    let mut nonces = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Some(key) = keys.get(item.key) else {
            return false;
        };
        let Some(s) = Option::<Scalar>::from(Scalar::from_canonical_bytes(*item.sig.s_bytes()))
        else {
            return false;
        };
        let Some(r) = CompressedEdwardsY(*item.sig.r_bytes()).decompress() else {
            return false;
        };
        if r.is_small_order() {
            return false;
        }
        let mut h = Sha512::new();
        h.update(item.sig.r_bytes());
        h.update(key.as_bytes());
        h.update(item.msg[0]);
        h.update(item.msg[1]);
        let k = Scalar::from_bytes_mod_order_wide(&h.finalize().into());
        let z = weight(&seed, i as u64);
        base_coeff += z * s;
        key_coeffs[item.key] += z * k;
        weights.push(z);
        nonces.push(r);
    }
    let scalars = once(-base_coeff).chain(key_coeffs).chain(weights);
    let points = once(ED25519_BASEPOINT_POINT)
        .chain(key_points)
        .chain(nonces);
    EdwardsPoint::vartime_multiscalar_mul(scalars, points).is_identity()
}

/// The 128-bit weight of item `i`, derived from the batch's random seed.
fn weight(seed: &[u8; 32], i: u64) -> Scalar {
    let mut h = Sha256::new();
    h.update(seed);
    h.update(i.to_le_bytes());
    let d = h.finalize();
    let mut w = [0u8; 16];
    w.copy_from_slice(&d[..16]);
    Scalar::from(u128::from_le_bytes(w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LedgerKey;
    use ed25519_dalek::Signer;
    use ed25519_dalek::SigningKey;

    struct Set {
        keys: Vec<VerifyingKey>,
        msgs: Vec<Vec<u8>>,
        sigs: Vec<(usize, Signature)>,
    }

    fn set(n: usize, signers: u8) -> Set {
        let signing: Vec<SigningKey> = (0..signers)
            .map(|k| SigningKey::from_bytes(&LedgerKey::from_secret(&[k + 1; 32]).secret_bytes()))
            .collect();
        let msgs: Vec<Vec<u8>> = (0..n)
            .map(|i| {
                format!("{{\"receipt\":{i},\"pad\":\"{}\"}}", "x".repeat(i % 300)).into_bytes()
            })
            .collect();
        let sigs = msgs
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let k = i % signers as usize;
                (k, signing[k].sign(m))
            })
            .collect();
        Set {
            keys: signing.iter().map(|s| s.verifying_key()).collect(),
            msgs,
            sigs,
        }
    }

    fn check(s: &Set) -> bool {
        let items: Vec<BatchItem<'_>> = s
            .msgs
            .iter()
            .zip(&s.sigs)
            .map(|(m, (k, sig))| {
                let cut = m.len() / 3;
                BatchItem {
                    key: *k,
                    sig: *sig,
                    msg: [&m[..cut], &m[cut..]],
                }
            })
            .collect();
        verify_batch(&s.keys, &items)
    }

    #[test]
    fn good_batches_hold() {
        assert!(check(&set(0, 1)));
        assert!(check(&set(1, 1)));
        assert!(check(&set(300, 1)));
        assert!(check(&set(300, 3)));
    }

    #[test]
    fn any_bad_signature_fails_the_batch() {
        for at in [0, 1, 150, 299] {
            // A changed message.
            let mut s = set(300, 2);
            s.msgs[at][2] ^= 1;
            assert!(!check(&s), "message {at}");
            // A changed s (still canonical: low byte) and a changed R.
            for byte in [32usize, 0] {
                let mut s = set(300, 2);
                let mut b = s.sigs[at].1.to_bytes();
                b[byte] ^= 1;
                s.sigs[at].1 = Signature::from_bytes(&b);
                assert!(!check(&s), "signature byte {byte} of {at}");
            }
            // The right signature attributed to the other key.
            let mut s = set(300, 2);
            s.sigs[at].0 ^= 1;
            assert!(!check(&s), "key of {at}");
        }
        // Two bad signatures that would cancel in an unweighted sum: swapping two messages.
        let mut s = set(10, 1);
        s.msgs.swap(3, 4);
        assert!(!check(&s));
    }

    #[test]
    fn non_canonical_s_and_small_order_r_are_refused() {
        let mut s = set(5, 1);
        let mut b = s.sigs[2].1.to_bytes();
        b[63] |= 0xF0;
        s.sigs[2].1 = Signature::from_bytes(&b);
        assert!(!check(&s));
        let mut s = set(5, 1);
        let mut b = s.sigs[2].1.to_bytes();
        // The identity point, of small order.
        let mut identity = [0u8; 32];
        identity[0] = 1;
        b[..32].copy_from_slice(&identity);
        s.sigs[2].1 = Signature::from_bytes(&b);
        assert!(!check(&s));
    }

    #[test]
    fn agrees_with_dalek() {
        let s = set(64, 3);
        let refs: Vec<&[u8]> = s.msgs.iter().map(Vec::as_slice).collect();
        let sigs: Vec<Signature> = s.sigs.iter().map(|x| x.1).collect();
        let keys: Vec<VerifyingKey> = s.sigs.iter().map(|x| s.keys[x.0]).collect();
        assert!(ed25519_dalek::verify_batch(&refs, &sigs, &keys).is_ok());
        assert!(check(&s));
    }
}
