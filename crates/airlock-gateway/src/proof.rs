//! The daemon proves who it is on every answer a client asks it to: a request carrying
//! `X-Airlock-Nonce` gets `X-Airlock-Proof`, the HMAC of the nonce, status and body under the
//! data directory's `daemon.key` (`airlock_hook::proof` holds the computation both sides use).
//! Without a key (a gateway started with none) answers carry no proof, and clients that need
//! one refuse them. Bodies of proved answers are read whole first: they are the API's JSON
//! answers, bounded like any other; nothing streams to a client that asked for a proof.

use std::sync::Arc;

use airlock_hook::proof::{self, DaemonKey};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::AppState;

/// The largest answer the daemon proves (the hook reads at most 8 MiB).
const MAX_PROVED: usize = 8 << 20;

pub async fn prove(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let (Some(key), Some(nonce)) = (st.answer_key.clone(), nonce_of(&req)) else {
        return next.run(req).await;
    };
    let resp = next.run(req).await;
    proved(&key, &nonce, resp).await
}

fn nonce_of(req: &Request) -> Option<String> {
    let v = req.headers().get(proof::NONCE_HEADER)?.to_str().ok()?;
    proof::is_nonce(v).then(|| v.to_ascii_lowercase())
}

async fn proved(key: &Arc<DaemonKey>, nonce: &str, resp: Response) -> Response {
    let (mut parts, body) = resp.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_PROVED).await {
        Ok(b) => b,
        Err(_) => {
            return ApiError::internal("the answer could not be read whole to prove it")
                .into_response();
        }
    };
    let p = key.prove(nonce, parts.status.as_u16(), &bytes);
    if let Ok(v) = HeaderValue::from_str(&p) {
        parts.headers.insert(proof::PROOF_HEADER, v);
    }
    Response::from_parts(parts, Body::from(bytes))
}
