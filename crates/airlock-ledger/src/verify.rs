//! Verification of a whole log: registry replay, every receipt's form and signature (against the
//! ledger key in force at its time), leaf positions, per-session chains and Lamport order, and
//! every checkpoint's signature and root. The first problem stops the run and names the receipt,
//! checkpoint or registry event at fault. Signatures are checked in parallel batches; a batch
//! that fails is re-checked one by one so the first bad receipt can be named.

use std::collections::HashMap;

use ed25519_dalek::VerifyingKey;

use crate::batch::{BatchItem, verify_batch};
use crate::canonical::{parse_hash, sha256};
use crate::keys::{KeyRole, parse_signature};
use crate::merkle::{MerkleFrontier, leaf_hash};
use crate::registry::{Registry, RegistryEvent};
use crate::{Checkpoint, LedgerError, Receipt};

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

/// Receipts per batch signature check: enough to spread the multiscalar multiplication's fixed
/// cost thin, few enough that re-checking a failed batch one by one stays quick.
#[cfg(not(test))]
const BATCH: usize = 2048;
/// Small in tests, so a test log of a few hundred receipts spans several batches per thread.
#[cfg(test)]
const BATCH: usize = 32;

/// Below this many receipts one thread does all the work (spawning costs more than it saves).
const PARALLEL_FROM: usize = 256;

/// One receipt after the parallel stage: parsed and signature checked, with its hashes.
struct Checked {
    receipt: Receipt,
    /// `prev`, decoded.
    prev: Option<[u8; 32]>,
    /// SHA-256 of the stored bytes: the next receipt's `prev`.
    hash: [u8; 32],
    /// Its RFC 9162 leaf hash in the Merkle log.
    leaf_hash: [u8; 32],
}

/// What the parallel stage made of a run of receipts: the good ones in order, then the error
/// that stopped it, which belongs to the receipt right after them.
struct Part {
    ok: Vec<Checked>,
    err: Option<LedgerError>,
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
    ///
    /// Two stages: receipts are parsed, checked field by field and their signatures checked in
    /// batches on every core; then one pass in leaf order checks positions, per-session chains and
    /// Lamport order, and recomputes the Merkle root at every checkpoint. An error found in the
    /// first stage is reported at its place in the second, so the first bad receipt in leaf order
    /// is the one named.
    pub fn verify(
        &self,
        receipts: &[(u64, Vec<u8>)],
        checkpoints: &[Vec<u8>],
    ) -> Result<VerifyReport, LedgerError> {
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(8);
        let parts: Vec<Part> = if threads == 1 || receipts.len() < PARALLEL_FROM {
            vec![self.check_part(receipts)]
        } else {
            let chunk = receipts.len().div_ceil(threads).max(1);
            std::thread::scope(|s| {
                let handles: Vec<_> = receipts
                    .chunks(chunk)
                    .map(|part| s.spawn(move || self.check_part(part)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| Part {
                            ok: Vec::new(),
                            err: Some(LedgerError::BadProof("verifier thread panicked".into())),
                        })
                    })
                    .collect()
            })
        };
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
        let mut heads: HashMap<&str, (u64, [u8; 32])> = HashMap::new();
        let mut tree = MerkleFrontier::new();
        let mut position = 0u64;
        for part in &parts {
            for c in &part.ok {
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
                match heads.get(r.session.as_str()) {
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
                        if c.prev.as_ref() != Some(hash) {
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
                heads.insert(r.session.as_str(), (r.lamport, c.hash));
                tree.push_leaf_hash(c.leaf_hash);
                position += 1;
                while let Some(cp) = next_cp.peek() {
                    if cp.size != position {
                        break;
                    }
                    if cp.root != hex::encode(tree.root()) {
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
            if let Some(e) = &part.err {
                return Err(e.clone());
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
            root: hex::encode(tree.root()),
            uncovered: position.saturating_sub(covered),
            anchor: self.registry.anchor().unwrap_or_default().to_string(),
        })
    }

    /// Parses and checks one run of receipts, signatures in batches. Stops at the first
    /// receipt that fails.
    fn check_part(&self, part: &[(u64, Vec<u8>)]) -> Part {
        let mut ok: Vec<Checked> = Vec::with_capacity(part.len());
        for batch in part.chunks(BATCH) {
            let start = ok.len();
            let mut keys: Vec<VerifyingKey> = Vec::new();
            let mut items: Vec<BatchItem<'_>> = Vec::with_capacity(batch.len());
            let mut err = None;
            for (stored_leaf, bytes) in batch {
                match self.check_one(*stored_leaf, bytes, &mut keys) {
                    Ok((c, item)) => {
                        ok.push(c);
                        items.push(item);
                    }
                    Err(e) => {
                        err = Some(e);
                        break;
                    }
                }
            }
            // The signatures of the receipts before the error, if any, come first: a bad one
            // among them is the first bad receipt.
            if !verify_batch(&keys, &items) {
                let bad = items.iter().position(|item| {
                    let msg = [item.msg[0], item.msg[1]].concat();
                    keys[item.key].verify_strict(&msg, &item.sig).is_err()
                });
                if let Some(i) = bad {
                    let r = &ok[start + i].receipt;
                    let e = LedgerError::receipt(
                        &r.id,
                        format!("signature does not verify with key {}", r.key_id),
                    );
                    ok.truncate(start + i);
                    return Part { ok, err: Some(e) };
                }
            }
            if err.is_some() {
                return Part { ok, err };
            }
        }
        Part { ok, err: None }
    }

    /// Parses one stored receipt, checks its fields and finds its key; the signature goes to
    /// the batch.
    fn check_one<'a>(
        &self,
        stored_leaf: u64,
        bytes: &'a [u8],
        keys: &mut Vec<VerifyingKey>,
    ) -> Result<(Checked, BatchItem<'a>), LedgerError> {
        let r = Receipt::parse(bytes).map_err(|e| match e {
            LedgerError::BadReceipt { .. } => e,
            other => LedgerError::receipt(&format!("at leaf {stored_leaf}"), other.to_string()),
        })?;
        if r.leaf != stored_leaf {
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
        let (cut_from, cut_to) = sig_member(bytes)
            .ok_or_else(|| LedgerError::receipt(&r.id, "no sig member in the stored bytes"))?;
        let key = match keys.iter().position(|k| k == vk) {
            Some(i) => i,
            None => {
                keys.push(*vk);
                keys.len() - 1
            }
        };
        let prev = match &r.prev {
            Some(p) => Some(
                parse_hash("prev", p).map_err(|e| LedgerError::receipt(&r.id, e.to_string()))?,
            ),
            None => None,
        };
        let hash = sha256(bytes);
        Ok((
            Checked {
                receipt: r,
                prev,
                hash,
                leaf_hash: leaf_hash(&hash),
            },
            BatchItem {
                key,
                sig,
                msg: [&bytes[..cut_from], &bytes[cut_to..]],
            },
        ))
    }
}

/// Where the `,"sig":"…"` member of canonical receipt bytes starts and ends. In canonical JSON a
/// quote inside a string is escaped, so the unescaped sequence `,"sig":"` can only be the
/// top-level key (receipts have no other `sig` member); it sits near the end, so the search
/// runs backwards.
pub(crate) fn sig_member(bytes: &[u8]) -> Option<(usize, usize)> {
    const KEY: &[u8] = b",\"sig\":\"";
    let at = bytes.windows(KEY.len()).rposition(|w| w == KEY)?;
    let value_start = at + KEY.len();
    let end = value_start + bytes[value_start..].iter().position(|b| *b == b'"')?;
    Some((at, end + 1))
}

/// The signed bytes of a receipt already known to be canonical: the same bytes without the
/// `"sig":"…",` member.
pub fn unsigned_from_canonical(bytes: &[u8]) -> Option<Vec<u8>> {
    let (from, to) = sig_member(bytes)?;
    let mut out = Vec::with_capacity(bytes.len() - (to - from));
    out.extend_from_slice(&bytes[..from]);
    out.extend_from_slice(&bytes[to..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeyRole;
    use crate::receipt::tests::sample;
    use crate::{LedgerKey, MerkleLog, time};

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

    /// Changes one hex digit of a receipt's signature (the bytes stay canonical).
    fn break_signature(bytes: &mut [u8]) {
        let at = bytes.windows(7).position(|w| w == b"\"sig\":\"").unwrap() + 7 + 10;
        bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
    }

    #[test]
    fn bad_signature_in_a_large_batch_is_named() {
        let clean = fixture(300);
        run(&clean).unwrap();
        for victim in [0, 149, 150, 230] {
            let mut f = fixture_copy(&clean);
            break_signature(&mut f.receipts[victim].1);
            let e = run(&f).unwrap_err().to_string();
            assert!(
                e.contains(&id_of(&f.receipts[victim].1))
                    && e.contains("signature does not verify"),
                "{victim}: {e}"
            );
        }
        // Two bad signatures in one batch: the first is named.
        let mut f = fixture_copy(&clean);
        break_signature(&mut f.receipts[270].1);
        break_signature(&mut f.receipts[260].1);
        let e = run(&f).unwrap_err().to_string();
        assert!(e.contains(&id_of(&f.receipts[260].1)), "{e}");
    }

    /// A problem the first (parallel) stage finds later in the log does not hide one the second
    /// (in-order) stage finds earlier.
    #[test]
    fn first_bad_receipt_in_leaf_order_is_named() {
        let mut f = fixture(300);
        let next = id_of(&f.receipts[101].1);
        break_signature(&mut f.receipts[120].1);
        f.receipts.remove(100);
        let e = run(&f).unwrap_err().to_string();
        assert!(e.contains(&next), "{e}");
    }

    fn fixture_copy(f: &Fixture) -> Fixture {
        Fixture {
            events: f.events.clone(),
            receipts: f.receipts.clone(),
            checkpoints: f.checkpoints.clone(),
        }
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
