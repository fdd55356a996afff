//! Building receipts: who and what a receipt is about beyond the action and its assessment
//! ([`RecordContext`]), the arguments whose canonical hash it carries, and the append request.
//! The CLI records with it (`airlock check --record`, the hook) and the broker records every
//! decision with it: allow and deny at once, and each final approval as exactly one receipt
//! under the deterministic request id `approval:<id>`.

use airlock_core::{Action, Assessment};
use airlock_ledger::canonical::{hash_value, to_canonical};
use airlock_ledger::{LedgerError, NewReceipt, ReasonRef, Receipt};
use airlock_store::AppendRequest;

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
pub fn args_of(action: &Action) -> Result<serde_json::Value, LedgerError> {
    if let Action::Tool { arguments, .. } = action {
        return Ok(arguments.clone());
    }
    let mut v = serde_json::to_value(action).map_err(|e| LedgerError::Malformed {
        what: "action",
        detail: e.to_string(),
    })?;
    if let Some(m) = v.as_object_mut() {
        m.remove("kind");
    }
    Ok(v)
}

/// Whether `payload`, a stored action, is the one receipt `r` signed: the same kind (and tool),
/// and arguments whose canonical hash is the receipt's `args_sha256` (how `request` records
/// them). `ledger verify` checks every stored payload with it, so an edited command fails
/// verification and not only replay.
pub fn payload_matches(r: &Receipt, payload: &str) -> Result<(), String> {
    let action: Action =
        serde_json::from_str(payload).map_err(|e| format!("it is not a readable action: {e}"))?;
    if action.kind() != r.action {
        return Err(format!(
            "it is a {:?} action, the receipt signed a {:?} one",
            action.kind(),
            r.action
        ));
    }
    if let Action::Tool { tool, .. } = &action
        && r.tool.as_deref() != Some(tool.as_str())
    {
        return Err(format!(
            "it calls tool {tool:?}, the receipt signed {:?}",
            r.tool
        ));
    }
    // An event's payload is the tool-shaped record of its kind (a refusal keeps the refused
    // tool's name); a receipt marked as one kind of event cannot carry another's record.
    if let (Some(kind), Action::Tool { tool, .. }) = (r.event, &action) {
        let named = airlock_ledger::EventKind::of_legacy_tool(tool);
        let fits = match kind {
            airlock_ledger::EventKind::Refusal => named.is_none(),
            k => named == Some(k),
        };
        if !fits {
            return Err(format!(
                "it records tool {tool:?}, which is not a {} event",
                kind.as_str()
            ));
        }
    }
    let args = args_of(&action)
        .and_then(|a| hash_value(&a))
        .map_err(|e| e.to_string())?;
    if args != r.args_sha256 {
        return Err(format!(
            "its arguments hash to {args}, the receipt signed args_sha256 {}",
            r.args_sha256
        ));
    }
    Ok(())
}

/// A fresh random request id (`req-` and 32 hex digits).
pub fn random_id() -> Result<String, LedgerError> {
    Ok(format!("req-{}", random_hex(16)?))
}

/// `n` random bytes from the OS, as hex.
pub(crate) fn random_hex(n: usize) -> Result<String, LedgerError> {
    let mut buf = vec![0u8; n];
    getrandom::fill(&mut buf).map_err(|e| LedgerError::Random(e.to_string()))?;
    Ok(hex::encode(buf))
}

/// Builds the append request for one assessed action.
pub fn request(
    action: &Action,
    a: &Assessment,
    ctx: &RecordContext,
) -> Result<AppendRequest, LedgerError> {
    let payload = String::from_utf8(to_canonical(action)?).map_err(|e| LedgerError::Malformed {
        what: "canonical action",
        detail: e.to_string(),
    })?;
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
            event: None,
        },
        payload: Some(payload),
    })
}
