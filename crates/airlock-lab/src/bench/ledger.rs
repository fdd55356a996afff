//! `airlock bench ledger`: durable appends per second (signed, chained, checkpointed receipts
//! committed to the store the global options select, a fresh temporary SQLite by default),
//! verifications per second (the full `ledger verify` work over what was appended: the log, every
//! stored payload against its receipt, and the witnessed tree heads the appends left), and the time
//! to build and check an inclusion proof in a log of a million receipts (leaves built in memory).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use airlock_core::{Action, Assessment};
use airlock_ledger::MerkleLog;
use airlock_ledger::canonical::sha256;
use airlock_store::{Ledger, LedgerConfig, LedgerStore, StoreOptions, audit};
use anyhow::Result;

use airlock_confirm::receipt::{self as record, RecordContext};

#[derive(clap::Args)]
pub struct Args {
    /// Receipts to append.
    #[arg(long, default_value_t = 50_000)]
    count: u64,
    /// Concurrent appenders (their appends are committed in batches).
    #[arg(long, default_value_t = 256)]
    concurrency: u64,
    /// Sessions the receipts are spread over.
    #[arg(long, default_value_t = 64)]
    sessions: u64,
    /// Size of the in-memory log for the inclusion-proof figure.
    #[arg(long, default_value_t = 1_000_000)]
    proof_log: u64,
    /// Print the figures as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, store: &StoreOptions) -> Result<u8> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(bench(args, store))
}

async fn bench(args: Args, global: &StoreOptions) -> Result<u8> {
    let tmp = tempfile_dir()?;
    let opts = match global.database.clone() {
        Some(url) => StoreOptions::new(&tmp).with_database(Some(url)),
        None => StoreOptions::new(&tmp),
    };
    let backend = if opts.database.is_some() {
        "postgres"
    } else {
        "sqlite"
    };
    let ledger = Arc::new(Ledger::open(&opts, LedgerConfig::default()).await?);

    // Appends.
    let next = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let run_id = record::random_id()?;
    let mut tasks = Vec::new();
    for _ in 0..args.concurrency.max(1) {
        let (ledger, next, run_id) = (ledger.clone(), next.clone(), run_id.clone());
        let (count, sessions) = (args.count, args.sessions.max(1));
        tasks.push(tokio::spawn(async move {
            let a = Assessment::allow();
            let mut ctx = RecordContext::from_env();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count {
                    return Ok::<(), anyhow::Error>(());
                }
                ctx.request_id = Some(format!("{run_id}-{i}"));
                ctx.session = format!("{run_id}-s{}", i % sessions);
                ledger
                    .append(record::request(
                        &Action::shell(format!("ls /tmp/{i}")),
                        &a,
                        &ctx,
                    )?)
                    .await?;
            }
        }));
    }
    for t in tasks {
        t.await??;
    }
    let append_secs = started.elapsed().as_secs_f64();
    let (ahead_used, ahead_dropped) = ledger.sealed_ahead();

    // Verification of everything appended (read from the store first, not timed).
    let snap = audit::snapshot(ledger.db()).await?;
    let started = Instant::now();
    let report = audit::verify_snapshot(
        &snap,
        Some(ledger.witness_dir()),
        Some(&record::payload_matches),
    )?;
    let verify_secs = started.elapsed().as_secs_f64();
    if let Ok(l) = Arc::try_unwrap(ledger) {
        l.close().await;
    }
    let _ = std::fs::remove_dir_all(&tmp);

    // Inclusion proofs in a log of `proof_log` leaves.
    let started = Instant::now();
    let log = MerkleLog::from_leaves((0..args.proof_log).map(|i| sha256(&i.to_le_bytes())));
    let build_secs = started.elapsed().as_secs_f64();
    let probes = 1000u64.min(args.proof_log);
    let started = Instant::now();
    let mut path_len = 0;
    for k in 0..probes {
        let idx = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) % args.proof_log.max(1);
        path_len = log.prove_inclusion(idx)?.len();
    }
    let prove_us = started.elapsed().as_secs_f64() * 1e6 / probes.max(1) as f64;

    let appends_per_s = args.count as f64 / append_secs;
    let verified_per_s = report.receipts as f64 / verify_secs;
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "backend": backend, "receipts": args.count, "concurrency": args.concurrency,
                "appends_per_s": appends_per_s.round(), "verified_per_s": verified_per_s.round(),
                "proof_log": args.proof_log, "tree_build_s": build_secs, "inclusion_proof_us": prove_us,
                "proof_hashes": path_len,
                "batches_sealed_ahead": ahead_used, "sealed_ahead_dropped": ahead_dropped,
            })
        );
    } else {
        println!(
            "backend            {backend} ({} receipts, {} concurrent appenders)",
            args.count, args.concurrency
        );
        println!("durable appends    {appends_per_s:>10.0} receipts/s  (goal >= 20000 on SQLite)");
        println!(
            "sealed ahead       {ahead_used:>10} batches  ({ahead_dropped} sealed again: the database had moved)"
        );
        println!("verification       {verified_per_s:>10.0} receipts/s  (goal >= 100000)");
        println!(
            "inclusion proof    {prove_us:>10.1} µs in a log of {} receipts ({path_len} hashes; tree built in memory in {build_secs:.2} s)",
            args.proof_log
        );
    }
    Ok(crate::EXIT_ALLOW)
}

fn tempfile_dir() -> Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("airlock-bench-ledger-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
