//! `airlock ledger`: verify a ledger (the store, a SQLite file, an evidence pack or a proof),
//! prove a receipt's inclusion, prove two checkpoints consistent, export an evidence pack, and
//! replay recorded actions against the current analyser.
//!
//! Exit codes: 0 verified / no difference, 1 tampering found / decisions differ, 3 error.

use std::io::Write;
use std::path::{Path, PathBuf};

use airlock_core::Action;
use airlock_ledger::canonical::hash_value;
use airlock_ledger::{
    ConsistencyDoc, InclusionDoc, MerkleLog, Receipt, RegistryEvent, VerifyReport, pack,
};
use airlock_store::{Db, Ledger, LedgerConfig, LedgerStore, StoreOptions, audit};
use anyhow::{Context, Result, bail};

use crate::record;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(clap::Subcommand)]
enum What {
    /// Verify signatures, chains, Lamport order, Merkle roots and the key registry, every
    /// stored payload against its receipt, and that the log extends every witnessed tree head
    /// (RFC 9162 consistency). PATH is a SQLite file, an evidence pack directory, or a proof
    /// file; default: the configured store.
    Verify {
        path: Option<PathBuf>,
        /// The witness directory (default: $AIRLOCK_WITNESS_DIR, else `witness/` in the data
        /// directory, or beside the SQLite file PATH).
        #[arg(long, value_name = "DIR")]
        witness: Option<PathBuf>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print an inclusion proof for a receipt (JSON, verifiable offline with `ledger verify FILE`).
    Prove {
        receipt_id: String,
        /// Write the proof here instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Print a consistency proof between the checkpoints of two tree sizes (default: the newest).
    Consistency {
        old_size: u64,
        new_size: Option<u64>,
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Write an evidence pack: receipts, checkpoints, registry events and a manifest of hashes.
    Export {
        #[arg(long)]
        out: PathBuf,
    },
    /// Re-decide every recorded shell action with the current analyser and report differences.
    Replay {
        /// Exit 1 when any decision would differ (or a payload does not match its receipt).
        #[arg(long)]
        verify: bool,
    },
    /// Replace the ledger signing key (the old key signs the rotation).
    RotateKey,
    /// Append synthetic receipts, printing each id once its append returned (for crash and load
    /// tests of the store).
    #[command(hide = true)]
    Load {
        #[arg(long, default_value_t = 1000)]
        count: u64,
        #[arg(long, default_value_t = 4)]
        sessions: u64,
        #[arg(long, default_value_t = 8)]
        concurrency: u64,
        #[arg(long, default_value = "load")]
        prefix: String,
    },
}

pub fn run(args: Args, store: &StoreOptions) -> Result<u8> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async move {
        match args.what {
            What::Verify {
                path,
                witness,
                json,
            } => verify(store, path, witness, json).await,
            What::Prove { receipt_id, out } => prove(store, &receipt_id, out).await,
            What::Consistency {
                old_size,
                new_size,
                out,
            } => consistency(store, old_size, new_size, out).await,
            What::Export { out } => export(store, &out).await,
            What::Replay { verify } => replay(store, verify).await,
            What::RotateKey => {
                let e = airlock_store::rotate_ledger_key(store).await?;
                println!("rotated: registry event {} ({})", e.seq, e.signer);
                Ok(super::EXIT_ALLOW)
            }
            What::Load {
                count,
                sessions,
                concurrency,
                prefix,
            } => load(store, count, sessions, concurrency, &prefix).await,
        }
    })
}

async fn open_ledger(opts: &StoreOptions) -> Result<Ledger> {
    Ledger::open(opts, LedgerConfig::default())
        .await
        .with_context(|| format!("opening the ledger in {}", opts.data_dir.display()))
}

/// The configured store for reading, without creating anything.
async fn open_existing(opts: &StoreOptions) -> Result<Db> {
    if opts.database.is_some() {
        return Ok(Db::open(opts).await?);
    }
    let path = opts.sqlite_path();
    if !path.is_file() {
        bail!(
            "no ledger at {} (use --data-dir DIR or --database URL)",
            path.display()
        );
    }
    Ok(Db::open_sqlite_readonly(&path).await?)
}

fn write_out(out: Option<&Path>, bytes: &[u8]) -> Result<()> {
    match out {
        // Proofs name receipts and sessions: the owner's only, like the ledger they come from.
        Some(p) => airlock_store::keyfile::write_private(p, bytes)
            .with_context(|| format!("writing {}", p.display())),
        None => {
            let mut o = std::io::stdout().lock();
            o.write_all(bytes)?;
            o.write_all(b"\n")?;
            Ok(())
        }
    }
}

/// What `ledger verify` found intact: a whole log (its report) or one proof (its anchor).
enum Verified {
    Log(VerifyReport),
    Proof(String),
}

/// The whole stored log, its payloads, and the witness in `witness`.
async fn verify_store(
    db: Db,
    witness: &Path,
) -> Result<std::result::Result<Verified, airlock_ledger::LedgerError>> {
    let r = audit::verify_full(&db, Some(witness), Some(&record::payload_matches)).await;
    db.close().await;
    match r {
        Ok(rep) => Ok(Ok(Verified::Log(rep))),
        Err(airlock_store::StoreError::Ledger(e)) => Ok(Err(e)),
        Err(e) => Err(e.into()),
    }
}

async fn verify(
    opts: &StoreOptions,
    path: Option<PathBuf>,
    witness: Option<PathBuf>,
    json: bool,
) -> Result<u8> {
    let result = match &path {
        None => {
            let db = open_existing(opts).await?;
            verify_store(db, &witness.unwrap_or_else(|| opts.witness())).await?
        }
        Some(p) if p.is_dir() && p.join(pack::MANIFEST).is_file() => verify_pack(p)?,
        Some(p) if p.is_dir() => bail!(
            "{} is a directory without {}: not an evidence pack",
            p.display(),
            pack::MANIFEST
        ),
        Some(p) => {
            let head = read_head(p)?;
            if head.first() == Some(&b'{') {
                verify_proof(p)?
            } else {
                let db = Db::open_sqlite_readonly(p).await?;
                let beside = p
                    .parent()
                    .unwrap_or(Path::new("."))
                    .join(airlock_store::witness::WITNESS_DIR);
                verify_store(db, &witness.unwrap_or(beside)).await?
            }
        }
    };
    report(result, json)
}

/// Prints a verification's outcome; the exit code.
fn report(
    result: std::result::Result<Verified, airlock_ledger::LedgerError>,
    json: bool,
) -> Result<u8> {
    match result {
        Ok(Verified::Log(rep)) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({
                        "ok": true, "receipts": rep.receipts, "sessions": rep.sessions,
                        "checkpoints": rep.checkpoints, "registry_events": rep.registry_events,
                        "root": rep.root, "uncovered": rep.uncovered, "anchor": rep.anchor,
                    })
                );
            } else {
                println!(
                    "ok: {} receipts in {} sessions, {} checkpoints, {} registry events\nroot {}\ntrust anchor {} (compare with the admin key you trust)",
                    rep.receipts,
                    rep.sessions,
                    rep.checkpoints,
                    rep.registry_events,
                    rep.root,
                    rep.anchor
                );
                if rep.uncovered > 0 {
                    println!(
                        "note: the last {} receipts are not yet covered by a signed checkpoint",
                        rep.uncovered
                    );
                }
                if rep.witnessed > 0 {
                    println!(
                        "extends the tree head witnessed for {} receipts (RFC 9162 consistency); {} stored payloads match their receipts",
                        rep.witnessed, rep.payloads
                    );
                } else if rep.receipts > 0 {
                    println!(
                        "note: no witnessed tree head to check against (a cut of the log's end would not show); {} stored payloads match their receipts",
                        rep.payloads
                    );
                }
            }
            Ok(super::EXIT_ALLOW)
        }
        Ok(Verified::Proof(anchor)) => {
            if json {
                println!("{}", serde_json::json!({"ok": true, "anchor": anchor}));
            } else {
                println!(
                    "ok: proof verifies\ntrust anchor {anchor} (compare with the admin key you trust)"
                );
            }
            Ok(super::EXIT_ALLOW)
        }
        Err(e) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({"ok": false, "error": e.to_string()})
                );
            } else {
                println!("FAILED: {e}");
            }
            Ok(super::EXIT_DENY)
        }
    }
}

fn read_head(p: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut f = std::fs::File::open(p).with_context(|| format!("opening {}", p.display()))?;
    let mut buf = vec![0u8; 16];
    let n = f.read(&mut buf)?;
    buf.truncate(n);
    let first = buf
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(buf.len());
    Ok(buf[first..].to_vec())
}

fn verify_pack(dir: &Path) -> Result<std::result::Result<Verified, airlock_ledger::LedgerError>> {
    let manifest = read_bounded(&dir.join(pack::MANIFEST), pack::MAX_MANIFEST_BYTES as u64)?;
    Ok(pack::verify(&manifest, |name| {
        std::fs::read(dir.join(name))
            .map_err(|e| airlock_ledger::LedgerError::BadPack(format!("{name}: {e}")))
    })
    .map(Verified::Log))
}

fn verify_proof(p: &Path) -> Result<std::result::Result<Verified, airlock_ledger::LedgerError>> {
    let bytes = read_bounded(p, airlock_ledger::merkle::MAX_PROOF_BYTES as u64)?;
    let v: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            return Ok(Err(airlock_ledger::LedgerError::BadProof(format!(
                "not JSON: {e}"
            ))));
        }
    };
    Ok(if v.get("receipt").is_some() {
        InclusionDoc::parse(&bytes)
            .and_then(|d| d.verify())
            .map(Verified::Proof)
    } else {
        ConsistencyDoc::parse(&bytes)
            .and_then(|d| d.verify())
            .map(Verified::Proof)
    })
}

fn read_bounded(p: &Path, limit: u64) -> Result<Vec<u8>> {
    let len = std::fs::metadata(p)
        .with_context(|| format!("reading {}", p.display()))?
        .len();
    if len > limit {
        bail!("{} is larger than the {limit}-byte limit", p.display());
    }
    std::fs::read(p).with_context(|| format!("reading {}", p.display()))
}

fn parse_events(events: &[String]) -> Result<Vec<RegistryEvent>> {
    Ok(events
        .iter()
        .map(|e| RegistryEvent::parse(e.as_bytes()))
        .collect::<Result<_, _>>()?)
}

async fn prove(store: &StoreOptions, receipt_id: &str, out: Option<PathBuf>) -> Result<u8> {
    let ledger = open_ledger(store).await?;
    let Some(stored) = ledger.receipt(receipt_id).await? else {
        ledger.close().await;
        bail!("no receipt {receipt_id} in the ledger");
    };
    let receipt = Receipt::parse(stored.body.as_bytes())?;
    // A checkpoint must cover the receipt; sign one now if none does yet.
    let mut cps = ledger.checkpoints().await?;
    let covers = |cps: &[String]| -> Result<Option<airlock_ledger::Checkpoint>> {
        for c in cps.iter().rev() {
            let c = airlock_ledger::Checkpoint::parse(c.as_bytes())?;
            if c.size > stored.leaf {
                return Ok(Some(c));
            }
        }
        Ok(None)
    };
    if covers(&cps)?.is_none() {
        ledger.checkpoint().await?;
        cps = ledger.checkpoints().await?;
    }
    let cp = covers(&cps)?.context("no checkpoint covers the receipt")?;
    let snap = audit::snapshot(ledger.db()).await?;
    let events = ledger.registry_events().await?;
    ledger.close().await;
    let log = tree_of(&snap.receipts, cp.size)?;
    let doc = InclusionDoc {
        v: airlock_ledger::FORMAT_VERSION,
        leaf_index: stored.leaf,
        path: log.prove_inclusion(stored.leaf)?,
        checkpoint: cp,
        receipt,
        registry: parse_events(&events)?,
    };
    doc.verify().context(
        "the proof just built does not verify: the ledger is damaged; run `airlock ledger verify`",
    )?;
    write_out(out.as_deref(), &serde_json::to_vec_pretty(&doc)?)?;
    Ok(super::EXIT_ALLOW)
}

/// The Merkle tree over the first `size` receipts, hashed from their stored bytes.
fn tree_of(receipts: &[(u64, Vec<u8>)], size: u64) -> Result<MerkleLog> {
    let n = usize::try_from(size)?;
    if receipts.len() < n {
        bail!(
            "the ledger holds {} receipts but a checkpoint covers {size}",
            receipts.len()
        );
    }
    Ok(MerkleLog::from_leaves(
        receipts[..n]
            .iter()
            .map(|(_, b)| airlock_ledger::canonical::sha256(b)),
    ))
}

async fn consistency(
    store: &StoreOptions,
    old_size: u64,
    new_size: Option<u64>,
    out: Option<PathBuf>,
) -> Result<u8> {
    let db = open_existing(store).await?;
    let snap = audit::snapshot(&db).await?;
    let events = db.registry_events().await?;
    db.close().await;
    let cps: Vec<airlock_ledger::Checkpoint> = snap
        .checkpoints
        .iter()
        .map(|c| airlock_ledger::Checkpoint::parse(c))
        .collect::<Result<_, _>>()?;
    let find = |s: u64| cps.iter().find(|c| c.size == s).cloned();
    let old = find(old_size).with_context(|| format!("no checkpoint of size {old_size}"))?;
    let new = match new_size {
        Some(s) => find(s).with_context(|| format!("no checkpoint of size {s}"))?,
        None => cps.last().cloned().context("no checkpoints yet")?,
    };
    if new.size < old.size {
        bail!(
            "the new checkpoint ({}) is older than the old one ({})",
            new.size,
            old.size
        );
    }
    let path = if new.size == old.size {
        Vec::new()
    } else {
        tree_of(&snap.receipts, new.size)?.prove_consistency(old.size)?
    };
    let doc = ConsistencyDoc {
        v: airlock_ledger::FORMAT_VERSION,
        old,
        new,
        path,
        registry: parse_events(&events)?,
    };
    doc.verify()
        .context("the proof just built does not verify: run `airlock ledger verify`")?;
    write_out(out.as_deref(), &serde_json::to_vec_pretty(&doc)?)?;
    Ok(super::EXIT_ALLOW)
}

async fn export(store: &StoreOptions, out: &Path) -> Result<u8> {
    if out.exists() && std::fs::read_dir(out)?.next().is_some() {
        bail!(
            "{} exists and is not empty: choose a new directory",
            out.display()
        );
    }
    let ledger = open_ledger(store).await?;
    // Cover every receipt with a checkpoint, so the pack proves the whole log.
    ledger.checkpoint().await?;
    let snap = audit::snapshot(ledger.db()).await?;
    ledger.close().await;
    let receipts: Vec<Vec<u8>> = snap.receipts.into_iter().map(|(_, b)| b).collect();
    let files = pack::build(
        &receipts,
        &snap.checkpoints,
        &snap.events,
        airlock_ledger::time::now(),
    )
    .context("the ledger does not verify, so no pack was written; run `airlock ledger verify`")?;
    // The pack holds every recorded command: a directory and files for the owner only (share
    // it deliberately, by copying or changing its mode).
    airlock_store::keyfile::create_private_dir(out)
        .with_context(|| format!("creating {}", out.display()))?;
    for (name, bytes) in &files {
        airlock_store::keyfile::write_private(&out.join(name), bytes)
            .with_context(|| format!("writing {name}"))?;
    }
    println!(
        "wrote {} receipts to {} ({} files)",
        receipts.len(),
        out.display(),
        files.len()
    );
    Ok(super::EXIT_ALLOW)
}

async fn replay(store: &StoreOptions, strict: bool) -> Result<u8> {
    let db = open_existing(store).await?;
    let policy = crate::cmd::policy::PolicyArgs::default().load()?;
    let current_policy = policy.hash()?.to_string();
    let ctx = crate::cmd::policy::context_from_env();
    let (mut same, mut differ, mut other_policy, mut skipped, mut bad_payload, mut events) =
        (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
    let mut from = 0u64;
    loop {
        let page = db.receipts(from, 5000).await?;
        let Some(last) = page.last() else { break };
        from = last.leaf + 1;
        for s in page {
            let r = Receipt::parse(s.body.as_bytes())?;
            let Some(payload) = s.payload.as_deref() else {
                skipped += 1;
                continue;
            };
            let action: Action = match serde_json::from_str(payload) {
                Ok(a) => a,
                Err(e) => {
                    bad_payload += 1;
                    println!(
                        "{} (leaf {}): stored action is not readable: {e}",
                        r.id, r.leaf
                    );
                    continue;
                }
            };
            if action.kind() != r.action || hash_value(&record::args_of(&action)?)? != r.args_sha256
            {
                bad_payload += 1;
                println!(
                    "{} (leaf {}): stored action does not match the receipt's args_sha256",
                    r.id, r.leaf
                );
                continue;
            }
            // events (scan verdicts, refusals, pin approvals, grant records) are not decisions
            // to re-make: the receipt says so by type (or, written before that, by its name)
            if r.event_kind().is_some() {
                events += 1;
                continue;
            }
            if r.policy_sha256 != current_policy {
                other_policy += 1;
            }
            let now = policy.evaluate(&action, &ctx);
            // An ask answered by a grant, a person or the LLM reviewer was recorded as that
            // answer (allow or deny): the policy's part of it, the ask, is what must match.
            const ANSWERS: [&str; 4] = [
                "APPROVED",
                "APPROVAL_DENIED",
                "APPROVAL_TIMEOUT",
                "APPROVAL_CANCELLED",
            ];
            let by_grant = r.grant.is_some() && r.decision == airlock_core::Decision::Allow;
            let answered = by_grant || r.reasons.iter().any(|x| ANSWERS.contains(&x.code.as_str()));
            if now.decision == r.decision
                || (answered && now.decision == airlock_core::Decision::Ask)
            {
                same += 1;
            } else {
                differ += 1;
                println!(
                    "{} (leaf {}, session {}): recorded {}, now {}: {}",
                    r.id,
                    r.leaf,
                    r.session,
                    r.decision,
                    now.decision,
                    airlock_policy::examples::describe(&action).escape_debug()
                );
            }
        }
    }
    db.close().await;
    println!(
        "replayed {} actions: {same} same, {differ} differ; {} not re-decided ({skipped} without a stored payload, {events} events); {bad_payload} with a payload that does not match",
        same + differ,
        skipped + events
    );
    if other_policy > 0 {
        println!(
            "note: {other_policy} were recorded under another policy than the current one ({current_policy}); they were re-decided with the current policy, the only one airlock keeps"
        );
    }
    Ok(if strict && (differ > 0 || bad_payload > 0) {
        super::EXIT_DENY
    } else {
        super::EXIT_ALLOW
    })
}

async fn load(
    store: &StoreOptions,
    count: u64,
    sessions: u64,
    concurrency: u64,
    prefix: &str,
) -> Result<u8> {
    let ledger = std::sync::Arc::new(open_ledger(store).await?);
    let next = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..concurrency.max(1) {
        let (ledger, next, prefix) = (ledger.clone(), next.clone(), prefix.to_string());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= count {
                    return Ok::<(), anyhow::Error>(());
                }
                let action = Action::shell(format!("echo {prefix} {i}"));
                let a = airlock_core::Assessment::allow();
                let mut ctx = record::RecordContext::from_env();
                ctx.request_id = Some(format!("{prefix}-{i}"));
                // Sessions are shared by every loader, so concurrent processes extend the same chains.
                ctx.session = format!("load-s{}", i % sessions.max(1));
                let r = record::record(&ledger, &action, &a, &ctx).await?;
                let mut o = std::io::stdout().lock();
                writeln!(o, "{}", r.id)?;
                o.flush()?;
            }
        }));
    }
    for t in tasks {
        t.await??;
    }
    if let Ok(l) = std::sync::Arc::try_unwrap(ledger) {
        l.close().await;
    }
    Ok(super::EXIT_ALLOW)
}
