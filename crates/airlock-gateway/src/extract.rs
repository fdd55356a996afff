//! Request extractors that turn every kind of bad input into an `ApiError` with a stable code
//! (axum's own rejections are plain text): the bearer token, and JSON bodies read under the body
//! limit, checked for content type and UTF-8, and parsed strictly (unknown fields refused).

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::auth::{Caller, Role};
use crate::error::ApiError;
use crate::state::AppState;

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let Some(value) = parts.headers.get(AUTHORIZATION) else {
            return Err(ApiError::unauthorized(
                "UNAUTHORIZED",
                "missing Authorization: Bearer <token>",
            ));
        };
        // The scheme is case-insensitive (RFC 9110).
        let bearer = value
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, t)| t.trim())
            .ok_or_else(|| {
                ApiError::unauthorized(
                    "UNAUTHORIZED",
                    "the Authorization header must be `Bearer <token>`",
                )
            })?;
        match state.auth.check(bearer).await {
            Ok(Some(c)) => Ok(c),
            Ok(None) => Err(ApiError::unauthorized(
                "INVALID_TOKEN",
                "unknown or revoked token",
            )),
            Err(e) => Err(ApiError::internal(e)),
        }
    }
}

impl Caller {
    /// Refuses callers whose role is not among `roles` (403).
    pub fn require(&self, roles: &[Role], what: &str) -> Result<(), ApiError> {
        if roles.contains(&self.role) {
            Ok(())
        } else {
            let allowed: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
            Err(ApiError::forbidden(format!(
                "{} tokens may not {what} (needs {})",
                self.role,
                allowed.join(" or ")
            )))
        }
    }
}

/// Reads the body under the router's limit (413 beyond it).
pub async fn body_bytes(req: Request, state: &AppState) -> Result<Bytes, ApiError> {
    Bytes::from_request(req, state).await.map_err(|e| match e {
        BytesRejection::FailedToBufferBody(f) if f.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "BODY_TOO_LARGE",
                format!("the body is larger than {} bytes", state.config.max_body),
            )
        }
        other => ApiError::bad_request("BAD_BODY", format!("reading the body: {other}")),
    })
}

/// A JSON body parsed strictly into `T`.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned> FromRequest<AppState> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, ApiError> {
        let json = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"));
        if !json {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "UNSUPPORTED_MEDIA_TYPE",
                "send the body as Content-Type: application/json",
            ));
        }
        let bytes = body_bytes(req, state).await?;
        parse_json(&bytes).map(ApiJson)
    }
}

/// A JSON body that may be left out entirely (no body and no content type): then
/// `T::default()`. Anything sent is checked like [`ApiJson`].
pub struct OptionalJson<T>(pub T);

impl<T: DeserializeOwned + Default> FromRequest<AppState> for OptionalJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, ApiError> {
        let no_type = req.headers().get(CONTENT_TYPE).is_none();
        let no_length = req
            .headers()
            .get(axum::http::header::CONTENT_LENGTH)
            .is_none_or(|v| v.as_bytes() == b"0");
        if no_type && no_length {
            let bytes = body_bytes(req, state).await?;
            if bytes.is_empty() {
                return Ok(OptionalJson(T::default()));
            }
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "UNSUPPORTED_MEDIA_TYPE",
                "send the body as Content-Type: application/json",
            ));
        }
        ApiJson::<T>::from_request(req, state)
            .await
            .map(|ApiJson(t)| OptionalJson(t))
    }
}

/// Parses JSON with stable codes: INVALID_UTF8, MALFORMED_JSON, UNKNOWN_FIELD, INVALID_REQUEST.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    parse_json_borrowed(bytes)
}

/// `parse_json` for a value that may borrow strings from `bytes`.
pub fn parse_json_borrowed<'a, T: serde::Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, ApiError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        ApiError::bad_request(
            "INVALID_UTF8",
            format!("the body is not UTF-8 (byte {})", e.valid_up_to()),
        )
    })?;
    serde_json::from_str(text).map_err(json_error)
}

pub fn json_error(e: serde_json::Error) -> ApiError {
    use serde_json::error::Category;
    let msg = e.to_string();
    match e.classify() {
        Category::Syntax | Category::Eof | Category::Io => {
            ApiError::bad_request("MALFORMED_JSON", format!("malformed JSON: {msg}"))
        }
        Category::Data if msg.starts_with("unknown field") => {
            ApiError::bad_request("UNKNOWN_FIELD", msg)
        }
        Category::Data => ApiError::bad_request("INVALID_REQUEST", msg),
    }
}

/// Whether `v` may serve as an id, session or source name: 1 to `max` bytes, no control
/// characters (they would forge lines in logs and terminal views).
pub fn is_label(v: &str, max: usize) -> bool {
    !v.is_empty() && v.len() <= max && !v.chars().any(char::is_control)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct T {
        a: u8,
    }

    fn code(body: &[u8]) -> &'static str {
        parse_json::<T>(body).unwrap_err().code
    }

    #[test]
    fn stable_codes() {
        assert_eq!(parse_json::<T>(br#"{"a":1}"#).unwrap().a, 1);
        assert_eq!(code(br#"{"a":1,"b":2}"#), "UNKNOWN_FIELD");
        assert_eq!(code(br#"{"a":"x"}"#), "INVALID_REQUEST");
        assert_eq!(code(br#"{"a":300}"#), "INVALID_REQUEST");
        assert_eq!(code(br#"{"a":1"#), "MALFORMED_JSON");
        assert_eq!(code(b""), "MALFORMED_JSON");
        assert_eq!(code(b"{\"a\":\xff}"), "INVALID_UTF8");
    }
}
