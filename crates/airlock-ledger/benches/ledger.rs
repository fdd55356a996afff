//! In-process costs behind `airlock bench ledger`: sealing (canonical form + Ed25519 signature)
//! one receipt, parsing one stored receipt, single and batch signature checks, and the whole
//! `LogVerifier::verify` over a log of receipts spread over 64 sessions with a checkpoint every
//! 1,000 (what `airlock ledger verify` does once the bytes are read).

use std::collections::HashMap;
use std::hint::black_box;

use airlock_core::{ActionKind, Decision};
use airlock_ledger::canonical::{hash_value, sha256_hex};
use airlock_ledger::keys::parse_signature;
use airlock_ledger::{
    KeyRole, LedgerError, LedgerKey, LogVerifier, MerkleLog, NewReceipt, ReasonRef, Receipt,
    Registry, time,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

struct Log {
    events: Vec<Vec<u8>>,
    receipts: Vec<(u64, Vec<u8>)>,
    checkpoints: Vec<Vec<u8>>,
}

fn request(i: u64, sessions: u64) -> NewReceipt {
    NewReceipt {
        request_id: format!("bench-{i}"),
        session: format!("bench-s{}", i % sessions),
        principal: "agent:claude-code".into(),
        action: ActionKind::Shell,
        tool: None,
        args_sha256: hash_value(&serde_json::json!({"command": format!("ls /tmp/{i}")}))
            .unwrap_or_default(),
        decision: Decision::Allow,
        reasons: vec![ReasonRef {
            code: "READ_ONLY".into(),
            rule: "readonly".into(),
        }],
        grant: None,
        approvers: vec![],
        policy_sha256: sha256_hex(b"policy"),
        output_sha256: None,
        event: None,
    }
}

fn build_log(n: u64) -> Result<Log, LedgerError> {
    let admin = LedgerKey::from_secret(&[1; 32]);
    let key = LedgerKey::from_secret(&[2; 32]);
    let t0 = "2026-11-22T14:00:00.000Z".to_string();
    let (mut reg, _) = Registry::genesis(&admin, t0.clone())?;
    reg.add_key(&key, KeyRole::Ledger, &admin, t0)?;
    let mut heads: HashMap<String, (u64, String)> = HashMap::new();
    let mut log = MerkleLog::new();
    let mut receipts = Vec::new();
    let mut checkpoints = Vec::new();
    for i in 0..n {
        let req = request(i, 64);
        let (lamport, prev) = heads
            .get(&req.session)
            .map(|(l, h)| (l + 1, Some(h.clone())))
            .unwrap_or((1, None));
        let at = time::format_millis(1_795_357_110_000 + i as i64);
        let r = req.seal(&key, lamport, prev, i, at.clone())?;
        heads.insert(req.session.clone(), (lamport, r.hash_hex()?));
        log.push(r.hash()?);
        receipts.push((i, r.canonical_bytes()?));
        if (i + 1) % 1000 == 0 {
            let cp = log.checkpoint(&key, at)?;
            checkpoints.push(cp.canonical_bytes()?);
        }
    }
    Ok(Log {
        events: reg
            .events()
            .iter()
            .map(|e| e.canonical_bytes())
            .collect::<Result<_, _>>()?,
        receipts,
        checkpoints,
    })
}

/// Set-up failures end the run with a message (the bench has no `Result` to return).
fn or_exit<T>(r: Result<T, LedgerError>) -> T {
    r.unwrap_or_else(|e| {
        eprintln!("bench set-up failed: {e}");
        std::process::exit(1)
    })
}

fn parts(c: &mut Criterion) {
    let key = LedgerKey::from_secret(&[2; 32]);
    let vk = key.verifying_key();
    let at = "2026-11-22T14:18:30.000Z".to_string();
    let prev = Some(sha256_hex(b"prev"));
    let req = request(7, 64);
    let r = or_exit(req.seal(&key, 2, prev.clone(), 7, at.clone()));
    let bytes = or_exit(r.canonical_bytes());
    let unsigned = or_exit(r.signing_bytes());
    let sig = or_exit(parse_signature(&r.sig).ok_or(LedgerError::BadProof("sig".into())));

    let mut g = c.benchmark_group("receipt");
    g.bench_function("seal", |b| {
        b.iter(|| black_box(req.seal(&key, 2, prev.clone(), 7, at.clone())))
    });
    g.bench_function("sign_only", |b| {
        b.iter(|| black_box(key.sign_hex(&unsigned)))
    });
    // 32 independent receipts signed together (one per session of a writer's round), per batch.
    let many: Vec<&[u8]> = (0..32).map(|_| unsigned.as_slice()).collect();
    g.bench_function("sign_many_32", |b| {
        b.iter(|| black_box(key.sign_many(&many)))
    });
    g.bench_function("parse", |b| b.iter(|| black_box(Receipt::parse(&bytes))));
    g.bench_function("verify_strict", |b| {
        b.iter(|| black_box(vk.verify_strict(&unsigned, &sig)))
    });
    g.finish();
}

fn whole_log(c: &mut Criterion) {
    let n = 10_000;
    let log = or_exit(build_log(n));
    let verifier = or_exit(LogVerifier::new(&log.events));
    // Time only a log that verifies (a failing run would stop early and look fast).
    or_exit(verifier.verify(&log.receipts, &log.checkpoints));
    let mut g = c.benchmark_group("log");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n));
    g.bench_function("verify_10k", |b| {
        b.iter(|| black_box(verifier.verify(black_box(&log.receipts), &log.checkpoints)))
    });
    g.finish();
}

criterion_group!(benches, parts, whole_log);
criterion_main!(benches);
