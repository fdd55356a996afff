//! Verification of a whole log: registry replay, every receipt's form and signature (against the
//! ledger key in force at its time), leaf positions, per-session chains and Lamport order, and
//! every checkpoint's signature and root. The first problem stops the run and names the receipt,
//! checkpoint or registry event at fault. Signatures are checked in parallel batches; a batch
//! that fails is re-checked one by one so the first bad receipt can be named.
//!
//! Two checks need what the log alone cannot give (`Extra`): tree heads a witness kept outside
//! the database (the log must extend each one: same root at its size, and an RFC 9162
//! consistency proof from the newest one to the current tree; a log shorter than a witnessed
//! head was cut), and the stored payloads (each must be what the receipt's signed
//! `args_sha256` says, by the recorder's rule).

use std::collections::HashMap;

use ed25519_dalek::VerifyingKey;

use crate::batch::{BatchItem, verify_batch};
use crate::canonical::{parse_hash, sha256};
use crate::keys::{KeyRole, parse_signature};
use crate::merkle::{MerkleFrontier, MerkleLog, leaf_hash, verify_consistency};
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
    /// Size of the newest witnessed tree head the log was checked against (0: none given).
    pub witnessed: u64,
    /// Stored payloads checked against their receipts.
    pub payloads: u64,
}

/// Whether a stored payload is what a receipt signed (`Err` says how it is not).
pub type PayloadCheck = dyn Fn(&Receipt, &str) -> Result<(), String> + Sync;

/// What verification checks beyond the log itself.
#[derive(Default, Clone, Copy)]
pub struct Extra<'a> {
    /// Signed tree heads (canonical checkpoint bytes) a witness kept.
    pub witnessed: &'a [Vec<u8>],
    /// The stored payload of each receipt (same order and length as the receipts), with the
    /// rule it must meet.
    pub payloads: Option<(&'a [Option<String>], &'a PayloadCheck)>,
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
        self.verify_with(receipts, checkpoints, Extra::default())
    }

    /// `verify`, and the log against witnessed tree heads and payloads against receipts.
    pub fn verify_with(
        &self,
        receipts: &[(u64, Vec<u8>)],
        checkpoints: &[Vec<u8>],
        extra: Extra<'_>,
    ) -> Result<VerifyReport, LedgerError> {
        if let Some((p, _)) = extra.payloads
            && p.len() != receipts.len()
        {
            return Err(LedgerError::BadProof(format!(
                "{} payloads given for {} receipts",
                p.len(),
                receipts.len()
            )));
        }
        let witnessed = self.witnessed(extra.witnessed)?;
        let payloads =
            |from: usize, n: usize| extra.payloads.map(|(p, check)| (&p[from..from + n], check));
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(8);
        let parts: Vec<Part> = if threads == 1 || receipts.len() < PARALLEL_FROM {
            vec![self.check_part(receipts, payloads(0, receipts.len()))]
        } else {
            let chunk = receipts.len().div_ceil(threads).max(1);
            std::thread::scope(|s| {
                let handles: Vec<_> = receipts
                    .chunks(chunk)
                    .enumerate()
                    .map(|(i, part)| {
                        let p = payloads(i * chunk, part.len());
                        s.spawn(move || self.check_part(part, p))
                    })
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
        let mut next_w = witnessed.iter().peekable();
        // The leaves, for the consistency proof from the newest witnessed head.
        let mut leaves: Vec<[u8; 32]> = Vec::new();
        if !witnessed.is_empty() {
            leaves.reserve(receipts.len());
        }
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
                if !witnessed.is_empty() {
                    leaves.push(c.hash);
                }
                while let Some(w) = next_w.peek() {
                    if w.size != position {
                        break;
                    }
                    if w.root != hex::encode(tree.root()) {
                        return Err(witness_error(
                            w,
                            format!(
                                "the first {} receipts (last: {}) have another root: the log was rewritten",
                                w.size, r.id
                            ),
                        ));
                    }
                    next_w.next();
                }
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
        // The newest head the log falls short of, the one that shows most of what is missing.
        if let Some(w) = next_w.last() {
            return Err(witness_error(
                w,
                format!(
                    "the log holds only {position} receipts: it was cut (receipts removed from its end)"
                ),
            ));
        }
        // The newest witnessed head, proved a prefix of the whole current tree (RFC 9162).
        if let Some(w) = witnessed.last()
            && w.size < position
        {
            let log = MerkleLog::from_leaves(leaves);
            let path = log.prove_consistency(w.size)?;
            let old = crate::canonical::parse_hash("witnessed root", &w.root)?;
            verify_consistency(w.size, &old, position, &tree.root(), &path)
                .map_err(|e| witness_error(w, e.to_string()))?;
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
            witnessed: witnessed.last().map(|w| w.size).unwrap_or(0),
            payloads: extra
                .payloads
                .map(|(p, _)| p.iter().filter(|x| x.is_some()).count() as u64)
                .unwrap_or(0),
        })
    }

    /// Witnessed tree heads: each a checkpoint signed by a ledger key of the registry, sorted
    /// by size, one per size (two different roots for one size are a fork).
    fn witnessed(&self, lines: &[Vec<u8>]) -> Result<Vec<Checkpoint>, LedgerError> {
        let mut out: Vec<Checkpoint> = Vec::with_capacity(lines.len());
        for (i, b) in lines.iter().enumerate() {
            let bad =
                |e: LedgerError| LedgerError::BadProof(format!("witnessed head {}: {e}", i + 1));
            let c = Checkpoint::parse(b).map_err(bad)?;
            c.verify(&self.registry).map_err(bad)?;
            out.push(c);
        }
        out.sort_by_key(|c| c.size);
        let mut kept: Vec<Checkpoint> = Vec::with_capacity(out.len());
        for c in out {
            match kept.last() {
                Some(k) if k.size == c.size && k.root != c.root => {
                    return Err(witness_error(
                        &c,
                        format!(
                            "another head was witnessed for the same size with root {}: the log forked",
                            k.root
                        ),
                    ));
                }
                Some(k) if k.size == c.size => {}
                _ if c.size == 0 => {}
                _ => kept.push(c),
            }
        }
        Ok(kept)
    }

    /// Parses and checks one run of receipts, signatures in batches. Stops at the first
    /// receipt that fails.
    fn check_part(
        &self,
        part: &[(u64, Vec<u8>)],
        payloads: Option<(&[Option<String>], &PayloadCheck)>,
    ) -> Part {
        let mut ok: Vec<Checked> = Vec::with_capacity(part.len());
        for (b, batch) in part.chunks(BATCH).enumerate() {
            let start = ok.len();
            let mut keys: Vec<VerifyingKey> = Vec::new();
            let mut items: Vec<BatchItem<'_>> = Vec::with_capacity(batch.len());
            let mut err = None;
            for (j, (stored_leaf, bytes)) in batch.iter().enumerate() {
                let payload = payloads.and_then(|(p, check)| {
                    p.get(b * BATCH + j)
                        .and_then(|x| x.as_deref())
                        .map(|x| (x, check))
                });
                match self.check_one(*stored_leaf, bytes, payload, &mut keys) {
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
        payload: Option<(&str, &PayloadCheck)>,
        keys: &mut Vec<VerifyingKey>,
    ) -> Result<(Checked, BatchItem<'a>), LedgerError> {
        let r = Receipt::parse(bytes).map_err(|e| match e {
            LedgerError::BadReceipt { .. } => e,
            other => LedgerError::receipt(&format!("at leaf {stored_leaf}"), other.to_string()),
        })?;
        if let Some((p, check)) = payload {
            check(&r, p).map_err(|d| {
                LedgerError::receipt(
                    &r.id,
                    format!("the stored payload is not what the receipt signed: {d} (the recorded action was edited)"),
                )
            })?;
        }
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

fn witness_error(w: &Checkpoint, detail: String) -> LedgerError {
    LedgerError::Witness {
        size: w.size,
        time: w.time.clone(),
        detail,
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
        fixture_as(n, "q")
    }

    /// A log of `n` receipts whose request ids start with `prefix` (another prefix, another
    /// log under the same keys).
    fn fixture_as(n: u64, prefix: &str) -> Fixture {
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
            let r = sample(&format!("{prefix}{i}"), &session)
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

    fn with(f: &Fixture, extra: Extra<'_>) -> Result<VerifyReport, LedgerError> {
        LogVerifier::new(&f.events)?.verify_with(&f.receipts, &f.checkpoints, extra)
    }

    fn witnessing(w: &[Vec<u8>]) -> Extra<'_> {
        Extra {
            witnessed: w,
            payloads: None,
        }
    }

    #[test]
    fn the_log_must_extend_every_witnessed_head() {
        // Checkpoints at 4, 8 and 12; the witness kept the one at 8.
        let f = fixture(14);
        let w = vec![f.checkpoints[1].clone()];
        let rep = with(&f, witnessing(&w)).unwrap();
        assert_eq!((rep.receipts, rep.witnessed), (14, 8));
        // Exactly at the witnessed size.
        let mut at = fixture(8);
        at.checkpoints.truncate(2);
        assert_eq!(with(&at, witnessing(&w)).unwrap().witnessed, 8);

        // Cut to 6 receipts with the checkpoints beyond removed: fine alone, not against 8.
        let mut cut = fixture(14);
        cut.receipts.truncate(6);
        cut.checkpoints.truncate(1);
        assert!(run(&cut).is_ok());
        let e = with(&cut, witnessing(&w)).unwrap_err().to_string();
        assert!(
            e.contains("witnessed for 8 receipts") && e.contains("it was cut"),
            "{e}"
        );
        // Cut to nothing.
        let mut none = fixture(14);
        none.receipts.clear();
        none.checkpoints.clear();
        assert!(run(&none).is_ok());
        assert!(with(&none, witnessing(&w)).is_err());

        // Rewritten under the same keys, as long or longer: fine alone, not against 8.
        let other = fixture_as(14, "z");
        assert!(run(&other).is_ok());
        let e = with(&other, witnessing(&w)).unwrap_err().to_string();
        assert!(e.contains("rewritten"), "{e}");

        // Two witnessed heads of one size with different roots: a fork.
        let forked = vec![f.checkpoints[1].clone(), other.checkpoints[1].clone()];
        let e = with(&f, witnessing(&forked)).unwrap_err().to_string();
        assert!(e.contains("forked"), "{e}");
        // A witness line that is not a signed head of this registry's keys is refused.
        let mut forged = f.checkpoints[1].clone();
        let at = forged.windows(7).position(|x| x == b"\"sig\":\"").unwrap() + 7;
        forged[at] = if forged[at] == b'0' { b'1' } else { b'0' };
        let e = with(&f, witnessing(&[forged])).unwrap_err().to_string();
        assert!(e.contains("witnessed head 1"), "{e}");
    }

    #[test]
    fn every_stored_payload_is_checked_in_every_part() {
        // Large enough to be checked on several threads, in several batches each.
        let f = fixture(600);
        let payloads: Vec<Option<String>> = (0..600)
            .map(|i| (i % 7 != 0).then(|| format!("q{i}")))
            .collect();
        let check: &PayloadCheck = &|r: &Receipt, p: &str| {
            if r.request_id == p {
                Ok(())
            } else {
                Err(format!("{p} is not {}", r.request_id))
            }
        };
        let extra = Extra {
            witnessed: &[],
            payloads: Some((&payloads, check)),
        };
        let rep = with(&f, extra).unwrap();
        assert_eq!(rep.payloads, payloads.iter().flatten().count() as u64);
        let mut edited = payloads.clone();
        edited[433] = Some("rm -rf /".into());
        let extra = Extra {
            witnessed: &[],
            payloads: Some((&edited, check)),
        };
        let e = with(&f, extra).unwrap_err().to_string();
        assert!(e.contains(&id_of(&f.receipts[433].1)), "{e}");
        assert!(e.contains("rm -rf /"), "{e}");
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
