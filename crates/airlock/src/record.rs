//! Recording assessed actions as receipts, for `airlock check --record` and, later, the hook and
//! the daemon. Also holds where state lives (`--data-dir`, `--database`), which `main` sets once
//! from the global options.
//!
//! What is recorded: the receipt (hashes, decision, reason codes, policy hash) and, beside it in
//! the store, the canonical action so `airlock ledger replay` can re-decide it.

use std::path::PathBuf;
use std::sync::OnceLock;

use airlock_core::{Action, Assessment};
use airlock_ledger::canonical::{hash_value, to_canonical};
use airlock_ledger::{NewReceipt, ReasonRef, Receipt};
use airlock_store::{
    AppendRequest, Ledger, LedgerConfig, LedgerStore, StoreOptions, default_data_dir,
};
use anyhow::{Context, Result};

struct Location {
    data_dir: Option<PathBuf>,
    database: Option<String>,
}

static LOCATION: OnceLock<Location> = OnceLock::new();

/// Called once by `main` with the global options.
pub fn set_location(data_dir: Option<PathBuf>, database: Option<String>) {
    let _ = LOCATION.set(Location { data_dir, database });
}

/// The store the global options select (the user's data directory and SQLite by default).
pub fn store_options() -> StoreOptions {
    let loc = LOCATION.get();
    let dir = loc
        .and_then(|l| l.data_dir.clone())
        .unwrap_or_else(default_data_dir);
    StoreOptions::new(dir).with_database(loc.and_then(|l| l.database.clone()))
}

/// Who and what a receipt is about, beyond the action and its assessment.
#[derive(Debug, Clone)]
pub struct RecordContext {
    /// The same request id always yields the same receipt (idempotency); random when unset.
    pub request_id: Option<String>,
    pub session: String,
    pub principal: String,
    pub policy_sha256: String,
    pub grant: Option<String>,
    pub approvers: Vec<String>,
    pub output_sha256: Option<String>,
}

impl RecordContext {
    /// From the environment: `AIRLOCK_SESSION` (default `cli`), `AIRLOCK_PRINCIPAL` (default
    /// `user:$USER`), `AIRLOCK_REQUEST_ID` (default random). The policy is the built-in shell
    /// rule packs.
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        RecordContext {
            request_id: var("AIRLOCK_REQUEST_ID"),
            session: var("AIRLOCK_SESSION").unwrap_or_else(|| "cli".into()),
            principal: var("AIRLOCK_PRINCIPAL").unwrap_or_else(|| {
                format!("user:{}", var("USER").unwrap_or_else(|| "unknown".into()))
            }),
            policy_sha256: airlock_shell::policy_hash().to_string(),
            grant: None,
            approvers: Vec::new(),
            output_sha256: None,
        }
    }
}

/// The arguments of an action, whose canonical hash a receipt carries: the action's fields
/// without `kind` (and, for a tool call, its arguments alone, the tool's name going into `tool`).
pub fn args_of(action: &Action) -> Result<serde_json::Value> {
    if let Action::Tool { arguments, .. } = action {
        return Ok(arguments.clone());
    }
    let mut v = serde_json::to_value(action)?;
    if let Some(m) = v.as_object_mut() {
        m.remove("kind");
    }
    Ok(v)
}

pub fn random_id() -> Result<String> {
    let k = airlock_ledger::LedgerKey::generate()?;
    Ok(format!("req-{}", hex::encode(&k.secret_bytes()[..16])))
}

/// Builds the append request for one assessed action.
pub fn request(action: &Action, a: &Assessment, ctx: &RecordContext) -> Result<AppendRequest> {
    let payload =
        String::from_utf8(to_canonical(action)?).context("canonical action is not UTF-8")?;
    let request_id = match &ctx.request_id {
        Some(r) => r.clone(),
        None => random_id()?,
    };
    Ok(AppendRequest {
        receipt: NewReceipt {
            request_id,
            session: ctx.session.clone(),
            principal: ctx.principal.clone(),
            action: action.kind(),
            tool: match action {
                Action::Tool { tool, .. } => Some(tool.clone()),
                _ => None,
            },
            args_sha256: hash_value(&args_of(action)?)?,
            decision: a.decision,
            reasons: a
                .reasons
                .iter()
                .map(|f| ReasonRef {
                    rule: f.rule_id.clone(),
                    code: f.code.as_str().to_string(),
                })
                .collect(),
            grant: ctx.grant.clone(),
            approvers: ctx.approvers.clone(),
            policy_sha256: ctx.policy_sha256.clone(),
            output_sha256: ctx.output_sha256.clone(),
        },
        payload: Some(payload),
    })
}

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
pub fn record_blocking(action: &Action, a: &Assessment, ctx: &RecordContext) -> Result<Receipt> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(record_once(action, a, ctx))
}

/// Records one grant life-cycle event (`airlock.grant.add`, `.confirm`, `.revoke`,
/// `.end_session`) with the person who caused it; inside an async one-shot command.
pub async fn record_grant_event(
    event: &str,
    details: serde_json::Value,
    grant: Option<&str>,
    person: &str,
) -> Result<Receipt> {
    use airlock_core::{Decision, Finding, ReasonCode, Severity, Tier};
    let action = Action::Tool {
        tool: format!("airlock.grant.{event}"),
        arguments: details,
    };
    let a = Assessment::from_findings(
        vec![Finding::new(
            format!("grant.{event}"),
            ReasonCode::GrantEvent,
            Decision::Allow,
            Tier::Safe,
            Severity::Info,
            format!("grant {event} by {person}"),
        )],
        Decision::Allow,
    );
    let mut ctx = RecordContext::from_env();
    ctx.session = "grants".into();
    ctx.principal = person.to_string();
    ctx.grant = grant.map(str::to_string);
    ctx.approvers = vec![person.to_string()];
    record_once(&action, &a, &ctx).await
}

/// Opens the configured ledger, records one action, and closes it.
pub async fn record_once(action: &Action, a: &Assessment, ctx: &RecordContext) -> Result<Receipt> {
    {
        let opts = store_options();
        // A one-shot process signs checkpoints by count only; time-based ones are the
        // daemon's (or `airlock ledger prove` / `export`'s) job, so it never reads every leaf
        // just because the last checkpoint is old.
        let config = LedgerConfig {
            checkpoint_interval: std::time::Duration::from_secs(365 * 86_400),
            ..LedgerConfig::default()
        };
        let ledger = Ledger::open(&opts, config)
            .await
            .with_context(|| format!("opening the ledger in {}", opts.data_dir.display()))?;
        let r = record(&ledger, action, a, ctx).await;
        ledger.close().await;
        r
    }
}
