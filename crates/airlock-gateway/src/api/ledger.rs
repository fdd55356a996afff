//! The ledger over HTTP: verify the whole log (approvers, admins), export an evidence pack
//! (admins), read one receipt (approvers, admins). The same library calls as
//! `airlock ledger verify/export`.

use airlock_ledger::pack;
use airlock_store::{LedgerStore, StoreError, audit};
use axum::Json;
use axum::extract::{Path, State};
use serde::Serialize;
use serde_json::{Value, json};

use super::DECIDERS;
use crate::auth::{Caller, Role};
use crate::error::ApiError;
use crate::state::AppState;

pub async fn verify(State(st): State<AppState>, caller: Caller) -> Result<Json<Value>, ApiError> {
    caller.require(DECIDERS, "verify the ledger")?;
    let ledger = st.broker.ledger();
    let payloads: &airlock_ledger::PayloadCheck = &airlock_confirm::receipt::payload_matches;
    match audit::verify_full(ledger.db(), Some(ledger.witness_dir()), Some(payloads)).await {
        Ok(rep) => Ok(Json(json!({
            "ok": true, "receipts": rep.receipts, "sessions": rep.sessions,
            "checkpoints": rep.checkpoints, "registry_events": rep.registry_events,
            "root": rep.root, "uncovered": rep.uncovered, "anchor": rep.anchor,
        }))),
        // Tampering is an answer, not a failure of the request.
        Err(StoreError::Ledger(e)) => Ok(Json(json!({"ok": false, "error": e.to_string()}))),
        Err(e) => Err(ApiError::internal(e)),
    }
}

#[derive(Debug, Serialize)]
pub struct PackFile {
    pub path: String,
    pub content: String,
}

#[derive(Debug, Serialize)]
pub struct PackBody {
    pub files: Vec<PackFile>,
}

pub async fn export(
    State(st): State<AppState>,
    caller: Caller,
) -> Result<Json<PackBody>, ApiError> {
    caller.require(&[Role::Admin], "export the ledger")?;
    let ledger = st.broker.ledger();
    // Cover every receipt with a checkpoint, so the pack proves the whole log.
    ledger.checkpoint().await.map_err(ApiError::internal)?;
    let snap = audit::snapshot(ledger.db())
        .await
        .map_err(ApiError::internal)?;
    let receipts: Vec<Vec<u8>> = snap.receipts.into_iter().map(|(_, b)| b).collect();
    let files = pack::build(
        &receipts,
        &snap.checkpoints,
        &snap.events,
        airlock_ledger::time::now(),
    )
    .map_err(|e| {
        ApiError::new(
            axum::http::StatusCode::CONFLICT,
            "LEDGER_INVALID",
            format!("the ledger does not verify, so no pack was made: {e}"),
        )
    })?;
    let files = files
        .into_iter()
        .map(|(path, bytes)| {
            String::from_utf8(bytes)
                .map(|content| PackFile { path, content })
                .map_err(ApiError::internal)
        })
        .collect::<Result<_, _>>()?;
    Ok(Json(PackBody { files }))
}

pub async fn receipt(
    State(st): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    caller.require(DECIDERS, "read receipts")?;
    let r = st
        .broker
        .ledger()
        .db()
        .receipt_by_id(&id)
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| ApiError::not_found(format!("no receipt {id}")))?;
    let body: Value = serde_json::from_str(&r.body).map_err(ApiError::internal)?;
    Ok(Json(json!({"leaf": r.leaf, "receipt": body})))
}
