//! Fuzzes the ledger's parsers of untrusted input: receipts, checkpoints, registry events,
//! proofs and evidence packs (manifest plus files). None may panic; whatever parses must
//! re-serialise to the same canonical bytes.

#![no_main]

use airlock_ledger::registry::RegistryEvent;
use airlock_ledger::{Checkpoint, ConsistencyDoc, InclusionDoc, Receipt, pack};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(r) = Receipt::parse(data) {
        assert_eq!(r.canonical_bytes().ok().as_deref(), Some(data));
        let _ = r.hash();
    }
    let _ = Checkpoint::parse(data);
    let _ = RegistryEvent::parse(data);
    if let Ok(d) = InclusionDoc::parse(data) {
        let _ = d.verify();
    }
    if let Ok(d) = ConsistencyDoc::parse(data) {
        let _ = d.verify();
    }
    // A pack: the input split into a manifest and three files at 0xFF bytes.
    let mut parts = data.split(|b| *b == 0xFF);
    let manifest = parts.next().unwrap_or_default().to_vec();
    let files: Vec<Vec<u8>> = parts.map(<[u8]>::to_vec).collect();
    let _ = pack::verify(&manifest, |name| {
        let i = pack::FILES.iter().position(|f| *f == name).unwrap_or(0);
        Ok(files.get(i).cloned().unwrap_or_default())
    });
    let _ = pack::receipts(data);
});
