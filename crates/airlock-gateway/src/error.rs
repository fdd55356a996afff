//! The gateway's errors. `ApiError` is what a client sees: an HTTP status and
//! `{"error": {"code": "STABLE_CODE", "message": "…"}}`; codes are stable, messages are for
//! people. `GatewayError` is what `serve` and the token functions return to the binary.

use airlock_core::ReasonCode;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use thiserror::Error;

/// An error answered to a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn unauthorized(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, code, message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "FORBIDDEN", message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "NOT_FOUND", message)
    }

    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, message)
    }

    pub fn invalid(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, code, message)
    }

    /// An internal failure: logged in full, answered without detail (fail-safe: nothing was
    /// allowed by it). Its code is the documented reason code `INTERNAL_ERROR`.
    pub fn internal(err: impl std::fmt::Display) -> Self {
        tracing::error!(error = %err, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            ReasonCode::InternalError.as_str(),
            "internal error: nothing was allowed; see the daemon's log",
        )
    }

    pub fn csrf() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "CSRF_INVALID",
            "the form's CSRF token is missing or does not match your session: reload the page",
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = airlock_wire::ErrorBody {
            error: airlock_wire::ErrorDetail {
                code: self.code.to_string(),
                message: self.message,
            },
        };
        (self.status, Json(body)).into_response()
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

/// What the binary sees from `serve` and token management.
#[derive(Debug, Error)]
pub enum GatewayError {
    #[error("http server: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Store(#[from] airlock_store::StoreError),
    #[error("{0}")]
    Invalid(String),
    #[error("random number generator: {0}")]
    Random(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 500 answers the documented reason code `INTERNAL_ERROR` (docs/reason-codes.md) in the
    /// wire's error body, and nothing of the failure itself.
    #[tokio::test]
    async fn an_internal_error_answers_the_documented_reason_code() {
        let resp = ApiError::internal("the disk is on fire").into_response();
        assert_eq!(resp.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 16)
            .await
            .unwrap();
        let body: airlock_wire::ErrorBody = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(body.error.code, "INTERNAL_ERROR");
        assert!(
            !body.error.message.contains("fire"),
            "{}",
            body.error.message
        );
        let documented = include_str!("../../../docs/reason-codes.md");
        assert!(documented.contains(&format!("| `{}` |", body.error.code)));
    }
}
