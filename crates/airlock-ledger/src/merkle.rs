//! The Merkle log: every receipt is a leaf of one append-only tree hashed as RFC 9162 (Certificate
//! Transparency) specifies, through `ct-merkle`. The leaf input is the receipt's 32-byte hash,
//! so a log of a million receipts fits in memory. Signed checkpoints (tree heads) commit to a
//! size and a root; inclusion proofs tie one receipt to a checkpoint, consistency proofs tie an
//! older checkpoint to a newer one. Both are JSON documents that verify offline.

use ct_merkle::mem_backed_tree::MemoryBackedTree;
use ct_merkle::{ConsistencyProof, InclusionProof, RootHash};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::canonical::{parse_hash, to_canonical};
use crate::keys::{KeyRole, verify_hex};
use crate::registry::{Registry, RegistryEvent};
use crate::{LedgerError, LedgerKey, Receipt, time};

pub const MAX_PROOF_BYTES: usize = 1024 * 1024;

/// The in-memory tree over receipt hashes.
#[derive(Default, Clone)]
pub struct MerkleLog {
    tree: MemoryBackedTree<Sha256, [u8; 32]>,
}

impl MerkleLog {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn from_leaves(leaves: impl IntoIterator<Item = [u8; 32]>) -> Self {
        let mut log = Self::new();
        for l in leaves {
            log.push(l);
        }
        log
    }

    pub fn push(&mut self, leaf: [u8; 32]) {
        self.tree.push(leaf);
    }

    pub fn len(&self) -> u64 {
        self.tree.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tree.is_empty()
    }

    pub fn leaf(&self, idx: u64) -> Option<&[u8; 32]> {
        self.tree.get(usize::try_from(idx).ok()?)
    }

    /// The root of the whole tree (hex).
    pub fn root_hex(&self) -> String {
        hex::encode(self.tree.root().as_bytes())
    }

    /// A tree holding only the first `size` leaves (for proofs against an older checkpoint).
    pub fn prefix(&self, size: u64) -> MerkleLog {
        let n = usize::try_from(size)
            .unwrap_or(usize::MAX)
            .min(self.tree.items().len());
        MerkleLog::from_leaves(self.tree.items()[..n].iter().copied())
    }

    /// Inclusion proof of leaf `idx` in the current tree (hex digests, leaf to root).
    pub fn prove_inclusion(&self, idx: u64) -> Result<Vec<String>, LedgerError> {
        if idx >= self.len() {
            return Err(LedgerError::BadProof(format!(
                "leaf {idx} is not in a tree of {} leaves",
                self.len()
            )));
        }
        let p = self.tree.prove_inclusion(idx as usize);
        Ok(p.as_bytes().chunks(32).map(hex::encode).collect())
    }

    /// Consistency proof from the tree of `old_size` leaves to the current tree.
    pub fn prove_consistency(&self, old_size: u64) -> Result<Vec<String>, LedgerError> {
        if old_size == 0 || old_size > self.len() {
            return Err(LedgerError::BadProof(format!(
                "no consistency proof from size {old_size} to size {}",
                self.len()
            )));
        }
        let p = self
            .tree
            .prove_consistency((self.len() - old_size) as usize);
        Ok(p.as_bytes().chunks(32).map(hex::encode).collect())
    }

    /// Signs a checkpoint of the current tree.
    pub fn checkpoint(&self, key: &LedgerKey, at: String) -> Result<Checkpoint, LedgerError> {
        Checkpoint::sign(self.len(), self.root_hex(), key, at)
    }
}

/// Checks an RFC 9162 consistency proof (`path`, hex digests as `MerkleLog::prove_consistency`
/// makes them) that the tree of `old_size` leaves with root `old_root` is a prefix of the tree
/// of `new_size` leaves with root `new_root`.
pub fn verify_consistency(
    old_size: u64,
    old_root: &[u8; 32],
    new_size: u64,
    new_root: &[u8; 32],
    path: &[String],
) -> Result<(), LedgerError> {
    let proof = ConsistencyProof::<Sha256>::try_from_bytes(proof_bytes(path)?)
        .map_err(|e| LedgerError::BadProof(format!("{e:?}")))?;
    RootHash::<Sha256>::new((*new_root).into(), new_size)
        .verify_consistency(&RootHash::new((*old_root).into(), old_size), &proof)
        .map_err(|e| {
            LedgerError::BadProof(format!(
                "the tree of {old_size} leaves is not a prefix of the tree of {new_size}: {e:?}"
            ))
        })
}

/// The RFC 9162 root of a growing list of leaves, kept in O(log n) memory: the roots of the
/// perfect subtrees the tree is made of so far (one per set bit of its size), largest first.
/// Each leaf costs one leaf hash and, amortised, one node hash (`MerkleLog::push` rehashes the
/// whole path to the root), so the verifier recomputes every checkpoint's root in one pass. The
/// property test `frontier_matches_the_tree` checks it against `ct-merkle` for every size.
#[derive(Debug, Default, Clone)]
pub struct MerkleFrontier {
    subtrees: Vec<[u8; 32]>,
    size: u64,
}

impl MerkleFrontier {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> u64 {
        self.size
    }

    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// Appends a leaf whose RFC 9162 leaf hash ([`leaf_hash`]) is `hash`.
    pub fn push_leaf_hash(&mut self, hash: [u8; 32]) {
        let mut node = hash;
        let mut n = self.size;
        // Each trailing 1 bit of the old size is a perfect subtree of the new leaf's size
        // that now has a right sibling: merge them.
        while n & 1 == 1 {
            let Some(left) = self.subtrees.pop() else {
                break;
            };
            node = node_hash(&left, &node);
            n >>= 1;
        }
        self.subtrees.push(node);
        self.size += 1;
    }

    /// The root of the tree of every leaf pushed so far.
    pub fn root(&self) -> [u8; 32] {
        let mut it = self.subtrees.iter().rev();
        let Some(last) = it.next() else {
            return crate::canonical::sha256(b"");
        };
        it.fold(*last, |right, left| node_hash(left, &right))
    }
}

/// RFC 9162 leaf hash of a receipt hash: SHA-256(0x00 ‖ leaf).
pub fn leaf_hash(leaf: &[u8; 32]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(leaf);
    h.finalize().into()
}

/// RFC 9162 interior node hash: SHA-256(0x01 ‖ left ‖ right).
fn node_hash(left: &[u8; 32], right: &[u8; 32]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// A signed tree head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    pub v: u32,
    pub size: u64,
    pub root: String,
    pub time: String,
    pub key_id: String,
    pub sig: String,
}

impl Checkpoint {
    pub fn sign(
        size: u64,
        root: String,
        key: &LedgerKey,
        at: String,
    ) -> Result<Checkpoint, LedgerError> {
        let mut c = Checkpoint {
            v: crate::FORMAT_VERSION,
            size,
            root,
            time: at,
            key_id: key.id().into(),
            sig: String::new(),
        };
        c.sig = key.sign_hex(&c.signing_bytes()?);
        Ok(c)
    }

    fn signing_bytes(&self) -> Result<Vec<u8>, LedgerError> {
        let mut v =
            serde_json::to_value(self).map_err(|e| LedgerError::malformed("checkpoint", e))?;
        if let Some(m) = v.as_object_mut() {
            m.remove("sig");
        }
        to_canonical(&v)
    }

    pub fn canonical_bytes(&self) -> Result<Vec<u8>, LedgerError> {
        to_canonical(self)
    }

    pub fn parse(bytes: &[u8]) -> Result<Checkpoint, LedgerError> {
        if bytes.len() > 4096 {
            return Err(LedgerError::TooLarge {
                what: "checkpoint",
                limit: 4096,
            });
        }
        let c: Checkpoint =
            serde_json::from_slice(bytes).map_err(|e| LedgerError::malformed("checkpoint", e))?;
        if c.canonical_bytes()? != bytes {
            return Err(LedgerError::BadCheckpoint {
                size: c.size,
                detail: "not in canonical form".into(),
            });
        }
        Ok(c)
    }

    /// Checks the signature against the ledger key in force at the checkpoint's time.
    pub fn verify(&self, registry: &Registry) -> Result<(), LedgerError> {
        let bad = |d: String| LedgerError::BadCheckpoint {
            size: self.size,
            detail: d,
        };
        if self.v != crate::FORMAT_VERSION {
            return Err(bad(format!("unsupported version {}", self.v)));
        }
        time::check("checkpoint time", &self.time).map_err(|e| bad(e.to_string()))?;
        parse_hash("checkpoint root", &self.root).map_err(|e| bad(e.to_string()))?;
        let vk = registry
            .key_valid_at(&self.key_id, KeyRole::Ledger, &self.time)
            .map_err(bad)?;
        if !verify_hex(vk, &self.signing_bytes()?, &self.sig) {
            return Err(bad(format!(
                "signature does not verify with key {}",
                self.key_id
            )));
        }
        Ok(())
    }

    fn root_hash(&self) -> Result<RootHash<Sha256>, LedgerError> {
        let r = parse_hash("checkpoint root", &self.root)?;
        Ok(RootHash::new(r.into(), self.size))
    }
}

fn proof_bytes(hashes: &[String]) -> Result<Vec<u8>, LedgerError> {
    let mut out = Vec::with_capacity(hashes.len() * 32);
    for h in hashes {
        out.extend_from_slice(&parse_hash("proof hash", h)?);
    }
    Ok(out)
}

/// A self-contained inclusion proof: the receipt, its leaf index, a signed checkpoint, the
/// audit path, and the registry events needed to check the signatures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InclusionDoc {
    pub v: u32,
    pub receipt: Receipt,
    pub leaf_index: u64,
    pub checkpoint: Checkpoint,
    pub path: Vec<String>,
    pub registry: Vec<RegistryEvent>,
}

impl InclusionDoc {
    pub fn parse(bytes: &[u8]) -> Result<InclusionDoc, LedgerError> {
        if bytes.len() > MAX_PROOF_BYTES {
            return Err(LedgerError::TooLarge {
                what: "proof",
                limit: MAX_PROOF_BYTES,
            });
        }
        serde_json::from_slice(bytes).map_err(|e| LedgerError::malformed("inclusion proof", e))
    }

    /// Verifies everything offline; returns the trust anchor (first admin key id) that the
    /// reader should compare with the one they trust.
    pub fn verify(&self) -> Result<String, LedgerError> {
        let reg = Registry::replay(self.registry.iter().cloned())?;
        let anchor = reg.anchor().unwrap_or_default().to_string();
        self.checkpoint.verify(&reg)?;
        let r = &self.receipt;
        r.check_fields()?;
        let vk = reg
            .key_valid_at(&r.key_id, KeyRole::Ledger, &r.time)
            .map_err(|d| LedgerError::receipt(&r.id, d))?;
        r.verify_signature(vk)?;
        if r.leaf != self.leaf_index {
            return Err(LedgerError::BadProof(format!(
                "receipt says leaf {}, proof says {}",
                r.leaf, self.leaf_index
            )));
        }
        let proof = InclusionProof::<Sha256>::try_from_bytes(proof_bytes(&self.path)?)
            .map_err(|e| LedgerError::BadProof(format!("{e:?}")))?;
        self.checkpoint
            .root_hash()?
            .verify_inclusion(&r.hash()?, self.leaf_index, &proof)
            .map_err(|e| {
                LedgerError::BadProof(format!(
                    "receipt {} is not in checkpoint {}: {e:?}",
                    r.id, self.checkpoint.size
                ))
            })?;
        Ok(anchor)
    }
}

/// A consistency proof between two checkpoints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsistencyDoc {
    pub v: u32,
    pub old: Checkpoint,
    pub new: Checkpoint,
    pub path: Vec<String>,
    pub registry: Vec<RegistryEvent>,
}

impl ConsistencyDoc {
    pub fn parse(bytes: &[u8]) -> Result<ConsistencyDoc, LedgerError> {
        if bytes.len() > MAX_PROOF_BYTES {
            return Err(LedgerError::TooLarge {
                what: "proof",
                limit: MAX_PROOF_BYTES,
            });
        }
        serde_json::from_slice(bytes).map_err(|e| LedgerError::malformed("consistency proof", e))
    }

    pub fn verify(&self) -> Result<String, LedgerError> {
        let reg = Registry::replay(self.registry.iter().cloned())?;
        self.old.verify(&reg)?;
        self.new.verify(&reg)?;
        if self.old.size == self.new.size {
            return if self.old.root == self.new.root && self.path.is_empty() {
                Ok(reg.anchor().unwrap_or_default().to_string())
            } else {
                Err(LedgerError::BadProof(
                    "two checkpoints of one size with different roots".into(),
                ))
            };
        }
        let proof = ConsistencyProof::<Sha256>::try_from_bytes(proof_bytes(&self.path)?)
            .map_err(|e| LedgerError::BadProof(format!("{e:?}")))?;
        self.new
            .root_hash()?
            .verify_consistency(&self.old.root_hash()?, &proof)
            .map_err(|e| {
                LedgerError::BadProof(format!(
                    "checkpoint {} is not a prefix of checkpoint {}: {e:?}",
                    self.old.size, self.new.size
                ))
            })?;
        Ok(reg.anchor().unwrap_or_default().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::sha256;
    use proptest::prelude::*;

    fn leaves(n: u64) -> Vec<[u8; 32]> {
        (0..n).map(|i| sha256(&i.to_le_bytes())).collect()
    }

    /// RFC 9162 §2.1.1: the hash of an empty tree, one leaf, and two leaves.
    #[test]
    fn rfc9162_hashing() {
        let empty = MerkleLog::new();
        assert_eq!(empty.root_hex(), hex::encode(sha256(b"")));
        let l = [9u8; 32];
        let one = MerkleLog::from_leaves([l]);
        let mut leaf_in = vec![0u8];
        leaf_in.extend_from_slice(&l);
        assert_eq!(one.root_hex(), hex::encode(sha256(&leaf_in)));
        let two = MerkleLog::from_leaves([l, l]);
        let lh = sha256(&leaf_in);
        let mut node_in = vec![1u8];
        node_in.extend_from_slice(&lh);
        node_in.extend_from_slice(&lh);
        assert_eq!(two.root_hex(), hex::encode(sha256(&node_in)));
    }

    fn check_inclusion(log: &MerkleLog, idx: u64) -> Result<(), String> {
        let path = log.prove_inclusion(idx).map_err(|e| e.to_string())?;
        let root =
            RootHash::<Sha256>::new(parse_hash("r", &log.root_hex()).unwrap().into(), log.len());
        let proof = InclusionProof::<Sha256>::try_from_bytes(proof_bytes(&path).unwrap())
            .map_err(|e| format!("{e:?}"))?;
        root.verify_inclusion(log.leaf(idx).unwrap(), idx, &proof)
            .map_err(|e| format!("{e:?}"))
    }

    #[test]
    fn frontier_matches_the_tree() {
        let mut log = MerkleLog::new();
        let mut f = MerkleFrontier::new();
        assert_eq!(hex::encode(f.root()), log.root_hex());
        for l in leaves(1100) {
            log.push(l);
            f.push_leaf_hash(leaf_hash(&l));
            assert_eq!(hex::encode(f.root()), log.root_hex(), "size {}", log.len());
        }
        assert_eq!(f.len(), 1100);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn inclusion_and_consistency_proofs_verify(n in 1u64..200, i in 0u64..200, old in 1u64..200) {
            let log = MerkleLog::from_leaves(leaves(n));
            let idx = i % n;
            prop_assert!(check_inclusion(&log, idx).is_ok());
            // A proof for one leaf does not verify another leaf.
            let path = log.prove_inclusion(idx).unwrap();
            let root = RootHash::<Sha256>::new(parse_hash("r", &log.root_hex()).unwrap().into(), n);
            let proof = InclusionProof::<Sha256>::try_from_bytes(proof_bytes(&path).unwrap()).unwrap();
            prop_assert!(root.verify_inclusion(&[0xAB; 32], idx, &proof).is_err());
            let old = 1 + (old - 1) % n;
            let older = log.prefix(old);
            let cp = log.prove_consistency(old).unwrap();
            let proof = ConsistencyProof::<Sha256>::try_from_bytes(proof_bytes(&cp).unwrap()).unwrap();
            let old_root = RootHash::<Sha256>::new(parse_hash("r", &older.root_hex()).unwrap().into(), old);
            prop_assert!(root.verify_consistency(&old_root, &proof).is_ok());
            if old < n {
                // A forked old tree (one leaf changed) is not consistent.
                let mut forked = leaves(old);
                forked[0] = [0xCD; 32];
                let f = MerkleLog::from_leaves(forked);
                let f_root = RootHash::<Sha256>::new(parse_hash("r", &f.root_hex()).unwrap().into(), old);
                prop_assert!(root.verify_consistency(&f_root, &proof).is_err());
            }
        }
    }
}
