//! Recording assessed actions as receipts, for `airlock check --record` and the hook (the
//! receipt itself is built by airlock-confirm, as the daemon's broker builds it). Where state
//! lives is the caller's `StoreOptions`, which `main` builds once from the global options
//! (`--data-dir`, `--database`) and hands to each command.
//!
//! What is recorded: the receipt (hashes, decision, reason codes, policy hash) and, beside it in
//! the store, the canonical action so `airlock ledger replay` can re-decide it.

use airlock_core::{Action, Assessment};
use airlock_ledger::Receipt;
use airlock_store::{Ledger, LedgerConfig, LedgerStore, StoreOptions};
use anyhow::{Context, Result};

// Receipt building is shared with the daemon's broker (airlock-confirm); re-exported so the
// commands keep using `record::…`.
pub use airlock_confirm::receipt::{RecordContext, args_of, payload_matches, request};

/// Records one assessed action in an open ledger; returns once the receipt is durable.
pub async fn record(
    ledger: &Ledger,
    action: &Action,
    a: &Assessment,
    ctx: &RecordContext,
) -> Result<Receipt> {
    Ok(ledger.append(request(action, a, ctx)?).await?)
}

/// Opens the configured store, records one action, and closes it (for one-shot commands).
pub fn record_blocking(
    store: &StoreOptions,
    action: &Action,
    a: &Assessment,
    ctx: &RecordContext,
) -> Result<Receipt> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(record_once(store, action, a, ctx))
}

/// Opens the configured ledger, records one action, and closes it.
pub async fn record_once(
    store: &StoreOptions,
    action: &Action,
    a: &Assessment,
    ctx: &RecordContext,
) -> Result<Receipt> {
    let ledger = open_ledger(store).await?;
    let r = record(&ledger, action, a, ctx).await;
    ledger.close().await;
    r
}

/// Opens the configured ledger for a one-shot command.
pub async fn open_ledger(opts: &StoreOptions) -> Result<Ledger> {
    {
        // A one-shot process signs checkpoints by count only; time-based ones are the
        // daemon's (or `airlock ledger prove` / `export`'s) job, so it never reads every leaf
        // just because the last checkpoint is old.
        let config = LedgerConfig {
            checkpoint_interval: std::time::Duration::from_secs(365 * 86_400),
            ..LedgerConfig::default()
        };
        Ledger::open(opts, config)
            .await
            .with_context(|| format!("opening the ledger in {}", opts.data_dir.display()))
    }
}
