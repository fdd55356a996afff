//! Verification of a whole log: registry replay, every receipt's form and signature (against the
//! ledger key in force at its time), leaf positions, per-session chains and Lamport order, and
//! every checkpoint's signature and root. The first problem stops the run and names the receipt,
//! checkpoint or registry event at fault. Signatures are checked in parallel batches; a batch
//! that fails is re-checked one by one so the first bad receipt can be named.

use std::collections::HashMap;

use ed25519_dalek::{Signature, VerifyingKey};

use crate::canonical::sha256;
use crate::keys::{KeyRole, parse_signature};
use crate::registry::{Registry, RegistryEvent};
use crate::{Checkpoint, LedgerError, MerkleLog, Receipt};

/// What a successful verification saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    pub receipts: u64,
    pub sessions: u64,
    pub checkpoints: u64,
    pub registry_events: u64,
    pub root: String,
    /// Receipts after the last checkpoint (not yet committed to by a signed tree head).
    pub uncovered: u64,
    /// The first admin key: compare it with the one you trust.
    pub anchor: String,
}

/// One receipt after the parallel stage: parsed, its hash, and whether its signature holds.
struct Checked {
    receipt: Receipt,
    hash: [u8; 32],
}

pub struct LogVerifier {
    registry: Registry,
}

impl LogVerifier {
    pub fn new(events: &[Vec<u8>]) -> Result<LogVerifier, LedgerError> {
        let mut parsed = Vec::with_capacity(events.len());
        for (i, b) in events.iter().enumerate() {
            parsed.push(
                RegistryEvent::parse(b).map_err(|e| LedgerError::BadRegistryEvent {
                    seq: i as u64,
                    detail: e.to_string(),
                })?,
            );
        }
        Ok(LogVerifier {
            registry: Registry::replay(parsed)?,
        })
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Verifies receipts given as `(stored leaf index, canonical bytes)` in leaf order, and
    /// checkpoints as canonical bytes.
    pub fn verify(
        &self,
        receipts: &[(u64, Vec<u8>)],
        checkpoints: &[Vec<u8>],
    ) -> Result<VerifyReport, LedgerError> {
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(8);
        let chunk = receipts.len().div_ceil(threads).max(1);
        let checked: Vec<Result<Vec<Checked>, LedgerError>> = std::thread::scope(|s| {
            let handles: Vec<_> = receipts
                .chunks(chunk)
                .map(|part| s.spawn(move || self.check_part(part)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(LedgerError::BadProof("verifier thread panicked".into()))
                    })
                })
                .collect()
        });
        let mut log = MerkleLog::new();
        let mut cps = Vec::with_capacity(checkpoints.len());
        for b in checkpoints {
            cps.push(Checkpoint::parse(b)?);
        }
        cps.sort_by_key(|c| c.size);
        for c in &cps {
            c.verify(&self.registry)?;
        }
        let mut next_cp = cps.iter().peekable();
        while let Some(c) = next_cp.peek() {
            if c.size == 0 {
                next_cp.next();
            } else {
                break;
            }
        }
        let mut heads: HashMap<String, (u64, [u8; 32])> = HashMap::new();
        let mut position = 0u64;
        for part in checked {
            for c in part? {
                let r = &c.receipt;
                if r.leaf != position {
                    return Err(LedgerError::receipt(
                        &r.id,
                        format!(
                            "found at position {position} of the log but signed as leaf {} (receipts dropped or reordered)",
                            r.leaf
                        ),
                    ));
                }
                match heads.get(&r.session) {
                    None if r.lamport != 1 => {
                        return Err(LedgerError::receipt(
                            &r.id,
                            format!(
                                "first receipt seen for session {:?} has Lamport {} (earlier receipts of the session are missing)",
                                r.session, r.lamport
                            ),
                        ));
                    }
                    Some((lamport, hash)) => {
                        if r.lamport <= *lamport {
                            return Err(LedgerError::receipt(
                                &r.id,
                                format!(
                                    "Lamport {} does not follow {} in session {:?} (reordered or forked)",
                                    r.lamport, lamport, r.session
                                ),
                            ));
                        }
                        if r.prev.as_deref() != Some(hex::encode(hash).as_str()) {
                            return Err(LedgerError::receipt(
                                &r.id,
                                format!(
                                    "prev does not match the previous receipt of session {:?} (a receipt was dropped, altered or inserted)",
                                    r.session
                                ),
                            ));
                        }
                    }
                    None => {}
                }
                heads.insert(r.session.clone(), (r.lamport, c.hash));
                log.push(c.hash);
                position += 1;
                while let Some(cp) = next_cp.peek() {
                    if cp.size != position {
                        break;
                    }
                    if cp.root != log.root_hex() {
                        return Err(LedgerError::BadCheckpoint {
                            size: cp.size,
                            detail: format!(
                                "root does not match the first {} receipts (last: {})",
                                cp.size, r.id
                            ),
                        });
                    }
                    next_cp.next();
                }
            }
        }
        if let Some(cp) = next_cp.next() {
            return Err(LedgerError::BadCheckpoint {
                size: cp.size,
                detail: format!(
                    "signed for {} receipts but the log holds {position} (receipts missing at the end)",
                    cp.size
                ),
            });
        }
        let covered = cps.last().map(|c| c.size).unwrap_or(0);
        Ok(VerifyReport {
            receipts: position,
            sessions: heads.len() as u64,
            checkpoints: cps.len() as u64,
            registry_events: self.registry.events().len() as u64,
            root: log.root_hex(),
            uncovered: position.saturating_sub(covered),
            anchor: self.registry.anchor().unwrap_or_default().to_string(),
        })
    }

    /// Parses, checks fields and signatures of one slice of receipts.
    fn check_part(&self, part: &[(u64, Vec<u8>)]) -> Result<Vec<Checked>, LedgerError> {
        let mut out = Vec::with_capacity(part.len());
        let mut msgs: Vec<Vec<u8>> = Vec::with_capacity(part.len());
        let mut sigs: Vec<Signature> = Vec::with_capacity(part.len());
        let mut keys: Vec<VerifyingKey> = Vec::with_capacity(part.len());
        for (stored_leaf, bytes) in part {
            let r = Receipt::parse(bytes).map_err(|e| match e {
                LedgerError::BadReceipt { .. } => e,
                other => LedgerError::receipt(&format!("at leaf {stored_leaf}"), other.to_string()),
            })?;
            if r.leaf != *stored_leaf {
                return Err(LedgerError::receipt(
                    &r.id,
                    format!("stored at leaf {stored_leaf} but signed as leaf {}", r.leaf),
                ));
            }
            let vk = self
                .registry
                .key_valid_at(&r.key_id, KeyRole::Ledger, &r.time)
                .map_err(|d| LedgerError::receipt(&r.id, d))?;
            let sig = parse_signature(&r.sig)
                .ok_or_else(|| LedgerError::receipt(&r.id, "signature is not 128 hex digits"))?;
            msgs.push(unsigned_from_canonical(bytes).unwrap_or(r.signing_bytes()?));
            sigs.push(sig);
            keys.push(*vk);
            out.push(Checked {
                hash: sha256(bytes),
                receipt: r,
            });
        }
        let refs: Vec<&[u8]> = msgs.iter().map(|m| m.as_slice()).collect();
        if ed25519_dalek::verify_batch(&refs, &sigs, &keys).is_err() || out.is_empty() {
            for (i, c) in out.iter().enumerate() {
                if keys[i].verify_strict(refs[i], &sigs[i]).is_err() {
                    return Err(LedgerError::receipt(
                        &c.receipt.id,
                        format!("signature does not verify with key {}", c.receipt.key_id),
                    ));
                }
            }
        }
        Ok(out)
    }
}

/// The signed bytes of a receipt already known to be canonical: the same bytes without the
/// `"sig":"…",` member. In canonical JSON a quote inside a string is escaped, so the unescaped
/// sequence `,"sig":"` can only be the top-level key (receipts have no other `sig` member).
pub fn unsigned_from_canonical(bytes: &[u8]) -> Option<Vec<u8>> {
    const KEY: &[u8] = b",\"sig\":\"";
    let at = bytes.windows(KEY.len()).position(|w| w == KEY)?;
    let value_start = at + KEY.len();
    let end = value_start + bytes[value_start..].iter().position(|b| *b == b'"')?;
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(&bytes[..at]);
    out.extend_from_slice(&bytes[end + 1..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeyRole;
    use crate::receipt::tests::sample;
    use crate::{LedgerKey, time};

    pub struct Fixture {
        pub events: Vec<Vec<u8>>,
        pub receipts: Vec<(u64, Vec<u8>)>,
        pub checkpoints: Vec<Vec<u8>>,
    }

    fn fixture(n: u64) -> Fixture {
        let admin = LedgerKey::from_secret(&[1; 32]);
        let key = LedgerKey::from_secret(&[2; 32]);
        let t0 = "2026-11-22T14:00:00.000Z".to_string();
        let (mut reg, _) = Registry::genesis(&admin, t0.clone()).unwrap();
        reg.add_key(&key, KeyRole::Ledger, &admin, t0).unwrap();
        let mut heads: HashMap<String, (u64, String)> = HashMap::new();
        let mut log = MerkleLog::new();
        let mut receipts = vec![];
        let mut checkpoints = vec![];
        for i in 0..n {
            let session = format!("s{}", i % 3);
            let (lamport, prev) = heads
                .get(&session)
                .map(|(l, h)| (l + 1, Some(h.clone())))
                .unwrap_or((1, None));
            let r = sample(&format!("q{i}"), &session)
                .seal(
                    &key,
                    lamport,
                    prev,
                    i,
                    time::format_millis(1_795_357_110_000 + i as i64),
                )
                .unwrap();
            heads.insert(session, (lamport, r.hash_hex().unwrap()));
            log.push(r.hash().unwrap());
            receipts.push((i, r.canonical_bytes().unwrap()));
            if (i + 1) % 4 == 0 {
                checkpoints.push(
                    log.checkpoint(&key, time::format_millis(1_795_357_110_000 + i as i64))
                        .unwrap()
                        .canonical_bytes()
                        .unwrap(),
                );
            }
        }
        Fixture {
            events: reg
                .events()
                .iter()
                .map(|e| e.canonical_bytes().unwrap())
                .collect(),
            receipts,
            checkpoints,
        }
    }

    fn run(f: &Fixture) -> Result<VerifyReport, LedgerError> {
        LogVerifier::new(&f.events)?.verify(&f.receipts, &f.checkpoints)
    }

    #[test]
    fn clean_log_verifies() {
        let f = fixture(10);
        let rep = run(&f).unwrap();
        assert_eq!(
            (rep.receipts, rep.sessions, rep.checkpoints, rep.uncovered),
            (10, 3, 2, 2)
        );
    }

    #[test]
    fn unsigned_splice_matches_signing_bytes() {
        let f = fixture(1);
        let r = Receipt::parse(&f.receipts[0].1).unwrap();
        assert_eq!(
            unsigned_from_canonical(&f.receipts[0].1).unwrap(),
            r.signing_bytes().unwrap()
        );
    }

    fn id_of(bytes: &[u8]) -> String {
        serde_json::from_slice::<serde_json::Value>(bytes).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    #[test]
    fn every_tamper_is_named() {
        // Flip one byte inside a signed field.
        let mut f = fixture(10);
        let victim = id_of(&f.receipts[5].1);
        let pos = f.receipts[5]
            .1
            .windows(9)
            .position(|w| w == b"agent:cla")
            .unwrap()
            + 6;
        f.receipts[5].1[pos] ^= 0x01;
        let e = run(&f).unwrap_err().to_string();
        assert!(e.contains(&victim), "{e}");
        // Drop one.
        let mut f = fixture(10);
        let next = id_of(&f.receipts[5].1);
        f.receipts.remove(4);
        let e = run(&f).unwrap_err().to_string();
        assert!(e.contains(&next), "{e}");
        // Reorder two.
        let mut f = fixture(10);
        let second = id_of(&f.receipts[3].1);
        f.receipts.swap(3, 6);
        let (a, b) = (f.receipts[3].0, f.receipts[6].0);
        f.receipts[3].0 = b;
        f.receipts[6].0 = a;
        let e = run(&f).unwrap_err().to_string();
        assert!(
            e.contains(&id_of(&f.receipts[3].1)) || e.contains(&second),
            "{e}"
        );
        // Drop the last, which a checkpoint covered.
        let mut f = fixture(8);
        f.receipts.pop();
        assert!(
            run(&f)
                .unwrap_err()
                .to_string()
                .contains("checkpoint at size 8")
        );
        // Replace the ledger key in the registry.
        let mut f = fixture(4);
        let other = LedgerKey::from_secret(&[9; 32]);
        let mut ev: RegistryEvent = serde_json::from_slice(&f.events[1]).unwrap();
        if let crate::registry::KeyChange::Added {
            key_id, public_key, ..
        } = &mut ev.change
        {
            *key_id = other.id().into();
            *public_key = other.public_hex();
        }
        f.events[1] = ev.canonical_bytes().unwrap();
        assert!(
            run(&f)
                .unwrap_err()
                .to_string()
                .contains("registry event 1")
        );
    }

    #[test]
    fn receipt_after_revocation_fails() {
        let admin = LedgerKey::from_secret(&[1; 32]);
        let key = LedgerKey::from_secret(&[2; 32]);
        let (mut reg, _) = Registry::genesis(&admin, "2026-11-22T14:00:00.000Z".into()).unwrap();
        reg.add_key(
            &key,
            KeyRole::Ledger,
            &admin,
            "2026-11-22T14:00:00.000Z".into(),
        )
        .unwrap();
        reg.append(
            crate::registry::KeyChange::Revoked {
                key_id: key.id().into(),
                reason: String::new(),
            },
            &admin,
            "2026-11-22T14:00:05.000Z".into(),
        )
        .unwrap();
        let before = sample("a", "s")
            .seal(&key, 1, None, 0, "2026-11-22T14:00:04.999Z".into())
            .unwrap();
        let after = sample("b", "t")
            .seal(&key, 1, None, 1, "2026-11-22T14:00:05.000Z".into())
            .unwrap();
        let events: Vec<_> = reg
            .events()
            .iter()
            .map(|e| e.canonical_bytes().unwrap())
            .collect();
        let v = LogVerifier::new(&events).unwrap();
        assert!(
            v.verify(&[(0, before.canonical_bytes().unwrap())], &[])
                .is_ok()
        );
        let e = v
            .verify(
                &[
                    (0, before.canonical_bytes().unwrap()),
                    (1, after.canonical_bytes().unwrap()),
                ],
                &[],
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains(&after.id) && e.contains("revoked"), "{e}");
    }
}
