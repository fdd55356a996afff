//! airlock's daemon HTTP layer: the REST API agents and approvers call, the server-rendered web
//! inbox with live updates, bearer-token auth with roles, Prometheus metrics and the OpenAPI
//! document. It knows nothing of rules: every decision is the approval broker's
//! (`airlock-confirm`); this crate turns HTTP into broker calls and broker answers into HTTP,
//! and refuses bad input with a stable code before anything is recorded. Other surfaces (the
//! OpenAI-compatible proxy, `airlock-proxy`) are mounted beside it by the binary
//! ([`router_with`]); this crate does not know them.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod api;
pub mod auth;
mod error;
pub mod extract;
mod inbox;
pub mod metrics;
pub mod openapi;
mod proof;
pub mod roots;
mod routes;
mod state;
mod token_cache;
pub mod url;

use std::future::Future;

use airlock_confirm::Broker;
use axum::Router;
use axum::extract::DefaultBodyLimit;

pub use auth::{Auth, Caller, NewToken, Role, TokenInfo};
pub use error::{ApiError, GatewayError};
pub use state::{AppState, DEFAULT_MAX_BODY, DEFAULT_PORT, MetricSource, ServeConfig};

/// Every route the server answers, with its methods, as registered.
pub fn routes() -> Vec<(&'static str, &'static str)> {
    build().list().to_vec()
}

fn build() -> routes::Routes {
    let r = routes::Routes::new();
    let r = api::register(r);
    inbox::register(r)
}

/// The whole application over `state` (for `serve` and in-process tests).
pub fn router(state: AppState) -> Router {
    router_with(state, Router::new())
}

/// The application with `extra` routes of another surface (the proxy's) mounted beside the
/// gateway's, under the same layers: auth is per handler, and metrics, tracing and answer
/// proofs cover them too.
pub fn router_with(state: AppState, extra: Router<AppState>) -> Router {
    let (r, _) = build().into_parts();
    let r = r.merge(extra);
    let max_body = state.config.max_body;
    r.fallback(api::no_route)
        .layer(DefaultBodyLimit::max(max_body))
        .layer(axum::middleware::from_fn(inbox::same_origin))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            metrics::count,
        ))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        // Outermost, so every answer a client asked to be proved is, errors included.
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            proof::prove,
        ))
        .with_state(state)
}

/// Serves on `listener` with default settings until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    broker: Broker,
    auth: Auth,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), GatewayError> {
    let config = ServeConfig {
        listen: listener.local_addr()?,
        ..ServeConfig::default()
    };
    serve_with(listener, AppState::new(broker, auth, config), shutdown).await
}

/// Serves `state` on `listener` until `shutdown` resolves; then long-polls and event streams
/// end at once and in-flight requests finish.
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), GatewayError> {
    serve_with_routes(listener, state, Router::new(), shutdown).await
}

/// [`serve_with`], with another surface's routes mounted beside the gateway's ([`router_with`]).
pub async fn serve_with_routes(
    listener: tokio::net::TcpListener,
    state: AppState,
    extra: Router<AppState>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), GatewayError> {
    let app = router_with(state.clone(), extra);
    let stopper = state.clone();
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            stopper.begin_shutdown();
        })
        .await?;
    Ok(())
}

/// Creates a token (for `airlock token create`): the secret is returned once.
pub async fn token_create(
    db: &airlock_store::Db,
    name: &str,
    role: Role,
) -> Result<NewToken, GatewayError> {
    Auth::new(db.clone()).create(name, role).await
}

/// Lists tokens without secrets (for `airlock token list`).
pub async fn token_list(db: &airlock_store::Db) -> Result<Vec<TokenInfo>, GatewayError> {
    Auth::new(db.clone()).list().await
}

/// Revokes a token and ends its web sessions (for `airlock token revoke`); `false` when
/// unknown or already revoked.
pub async fn token_revoke(db: &airlock_store::Db, id: &str) -> Result<bool, GatewayError> {
    Auth::new(db.clone()).revoke(id).await
}
