//! Evidence packs: everything needed to verify a ledger offline, as plain files. A pack holds
//! `receipts.jsonl` (one canonical receipt per line, line N is leaf N), `checkpoints.jsonl`,
//! `registry.jsonl` and `manifest.json`, which lists every other file with its SHA-256 and size.
//! This module builds and checks the files' bytes; reading and writing the directory is the
//! CLI's business.

use serde::{Deserialize, Serialize};

use crate::canonical::{sha256_hex, to_canonical};
use crate::verify::{LogVerifier, VerifyReport};
use crate::{LedgerError, Receipt};

pub const MANIFEST: &str = "manifest.json";
pub const RECEIPTS: &str = "receipts.jsonl";
pub const CHECKPOINTS: &str = "checkpoints.jsonl";
pub const REGISTRY: &str = "registry.jsonl";
/// The files a pack must contain besides the manifest.
pub const FILES: [&str; 3] = [RECEIPTS, CHECKPOINTS, REGISTRY];
pub const MAX_MANIFEST_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEntry {
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub v: u32,
    pub created: String,
    pub receipts: u64,
    pub root: String,
    pub anchor: String,
    pub files: Vec<FileEntry>,
}

fn jsonl(items: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(items.iter().map(|i| i.len() + 1).sum());
    for i in items {
        out.extend_from_slice(i);
        out.push(b'\n');
    }
    out
}

fn lines(name: &str, bytes: &[u8]) -> Result<Vec<Vec<u8>>, LedgerError> {
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    let body = bytes
        .strip_suffix(b"\n")
        .ok_or_else(|| LedgerError::BadPack(format!("{name} does not end with a newline")))?;
    Ok(body.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect())
}

/// Builds a pack from canonical receipts (in leaf order), checkpoints and registry events.
/// Verifies the content first, so a pack is never made of a broken log. Returns the files.
pub fn build(
    receipts: &[Vec<u8>],
    checkpoints: &[Vec<u8>],
    events: &[Vec<u8>],
    created: String,
) -> Result<Vec<(String, Vec<u8>)>, LedgerError> {
    let indexed: Vec<(u64, Vec<u8>)> = receipts
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, b)| (i as u64, b))
        .collect();
    let report = LogVerifier::new(events)?.verify(&indexed, checkpoints)?;
    let mut files = vec![
        (RECEIPTS.to_string(), jsonl(receipts)),
        (CHECKPOINTS.to_string(), jsonl(checkpoints)),
        (REGISTRY.to_string(), jsonl(events)),
    ];
    let manifest = Manifest {
        v: crate::FORMAT_VERSION,
        created,
        receipts: report.receipts,
        root: report.root,
        anchor: report.anchor,
        files: files
            .iter()
            .map(|(p, b)| FileEntry {
                path: p.clone(),
                sha256: sha256_hex(b),
                bytes: b.len() as u64,
            })
            .collect(),
    };
    let mut m = to_canonical(&manifest)?;
    m.push(b'\n');
    files.push((MANIFEST.to_string(), m));
    Ok(files)
}

/// Parses a manifest (bounded, strict).
pub fn parse_manifest(bytes: &[u8]) -> Result<Manifest, LedgerError> {
    if bytes.len() > MAX_MANIFEST_BYTES {
        return Err(LedgerError::TooLarge {
            what: "manifest",
            limit: MAX_MANIFEST_BYTES,
        });
    }
    let m: Manifest =
        serde_json::from_slice(bytes).map_err(|e| LedgerError::malformed("manifest", e))?;
    if m.v != crate::FORMAT_VERSION {
        return Err(LedgerError::BadPack(format!(
            "unsupported manifest version {}",
            m.v
        )));
    }
    Ok(m)
}

/// Verifies a pack given its manifest and a way to read each listed file.
pub fn verify(
    manifest_bytes: &[u8],
    mut read: impl FnMut(&str) -> Result<Vec<u8>, LedgerError>,
) -> Result<VerifyReport, LedgerError> {
    let m = parse_manifest(manifest_bytes)?;
    let mut content = std::collections::HashMap::new();
    for name in FILES {
        let entry = m
            .files
            .iter()
            .find(|f| f.path == name)
            .ok_or_else(|| LedgerError::BadPack(format!("manifest does not list {name}")))?;
        let bytes = read(name)?;
        if bytes.len() as u64 != entry.bytes || sha256_hex(&bytes) != entry.sha256 {
            return Err(LedgerError::BadPack(format!(
                "{name} does not match the hash in the manifest"
            )));
        }
        content.insert(name, bytes);
    }
    let get = |n: &str| content.get(n).map(Vec::as_slice).unwrap_or_default();
    let receipts: Vec<(u64, Vec<u8>)> = lines(RECEIPTS, get(RECEIPTS))?
        .into_iter()
        .enumerate()
        .map(|(i, b)| (i as u64, b))
        .collect();
    let report = LogVerifier::new(&lines(REGISTRY, get(REGISTRY))?)?
        .verify(&receipts, &lines(CHECKPOINTS, get(CHECKPOINTS))?)?;
    if report.receipts != m.receipts || report.root != m.root || report.anchor != m.anchor {
        return Err(LedgerError::BadPack(
            "manifest totals do not match the content".into(),
        ));
    }
    Ok(report)
}

/// Every receipt of a pack's `receipts.jsonl`, parsed (for `prove` and `replay` over a pack).
pub fn receipts(bytes: &[u8]) -> Result<Vec<Receipt>, LedgerError> {
    lines(RECEIPTS, bytes)?
        .iter()
        .map(|l| Receipt::parse(l))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeyRole;
    use crate::receipt::tests::sample;
    use crate::{LedgerKey, MerkleLog, Registry};

    fn files(n: u64) -> Vec<(String, Vec<u8>)> {
        let admin = LedgerKey::from_secret(&[1; 32]);
        let key = LedgerKey::from_secret(&[2; 32]);
        let t = "2026-11-22T14:00:00.000Z".to_string();
        let (mut reg, _) = Registry::genesis(&admin, t.clone()).unwrap();
        reg.add_key(&key, KeyRole::Ledger, &admin, t.clone())
            .unwrap();
        let mut log = MerkleLog::new();
        let mut rs = vec![];
        let mut prev = None;
        for i in 0..n {
            let r = sample(&format!("q{i}"), "s")
                .seal(&key, i + 1, prev.clone(), i, t.clone())
                .unwrap();
            prev = Some(r.hash_hex().unwrap());
            log.push(r.hash().unwrap());
            rs.push(r.canonical_bytes().unwrap());
        }
        let cp = log
            .checkpoint(&key, t.clone())
            .unwrap()
            .canonical_bytes()
            .unwrap();
        let ev: Vec<_> = reg
            .events()
            .iter()
            .map(|e| e.canonical_bytes().unwrap())
            .collect();
        build(&rs, &[cp], &ev, t).unwrap()
    }

    fn check(files: &[(String, Vec<u8>)]) -> Result<VerifyReport, LedgerError> {
        let get = |n: &str| files.iter().find(|(p, _)| p == n).map(|(_, b)| b.clone());
        verify(&get(MANIFEST).unwrap(), |n| {
            get(n).ok_or_else(|| LedgerError::BadPack(format!("{n} missing")))
        })
    }

    #[test]
    fn round_trip_and_tamper() {
        let f = files(5);
        assert_eq!(check(&f).unwrap().receipts, 5);
        let mut t = f.clone();
        t[0].1[10] ^= 1;
        assert!(
            check(&t)
                .unwrap_err()
                .to_string()
                .contains("receipts.jsonl")
        );
        assert_eq!(receipts(&f[0].1).unwrap().len(), 5);
        assert!(parse_manifest(b"{").is_err());
    }
}
