//! The inbox's login session: the cookie, the extractor that turns it into the approver (or a
//! redirect to the login page), and the CSRF check of form posts.

use axum::extract::FromRequestParts;
use axum::http::header::COOKIE;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Redirect, Response};

use crate::auth::{Caller, WebSession, secret_eq};
use crate::error::ApiError;
use crate::state::AppState;

pub const COOKIE_NAME: &str = "airlock_session";

/// A logged-in approver or admin.
pub struct InboxUser {
    pub session_id: String,
    pub session: WebSession,
}

impl InboxUser {
    pub fn caller(&self) -> &Caller {
        &self.session.caller
    }

    pub fn csrf(&self) -> &str {
        &self.session.csrf
    }

    /// Refuses a form whose CSRF token is missing or wrong (403 CSRF_INVALID).
    pub fn check_csrf(&self, given: Option<&str>) -> Result<(), ApiError> {
        match given {
            Some(g) if secret_eq(g, &self.session.csrf) => Ok(()),
            _ => Err(ApiError::csrf()),
        }
    }
}

/// The session id in the request's cookies, if any.
pub fn session_cookie(parts: &Parts) -> Option<String> {
    parts
        .headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE_NAME)
        .map(|(_, v)| v.to_string())
}

/// The `Set-Cookie` value for a new session (HttpOnly, SameSite=Strict, Path=/, Secure when
/// the daemon is reached over https).
pub fn set_cookie(session_id: &str, max_age_s: i64, secure: bool) -> String {
    format!(
        "{COOKIE_NAME}={session_id}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age_s}{}",
        if secure { "; Secure" } else { "" }
    )
}

pub fn clear_cookie(secure: bool) -> String {
    set_cookie("", 0, secure)
}

impl FromRequestParts<AppState> for InboxUser {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, st: &AppState) -> Result<Self, Response> {
        let Some(id) = session_cookie(parts) else {
            return Err(Redirect::to("/inbox/login").into_response());
        };
        match st.auth.session(&id).await {
            Ok(Some(session)) => Ok(InboxUser {
                session_id: id,
                session,
            }),
            Ok(None) => Err(Redirect::to("/inbox/login").into_response()),
            Err(e) => Err(ApiError::internal(e).into_response()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(cookies: &[&str]) -> Parts {
        let mut b = axum::http::Request::builder();
        for c in cookies {
            b = b.header(COOKIE, *c);
        }
        b.body(()).unwrap().into_parts().0
    }

    #[test]
    fn finds_the_session_cookie_among_others() {
        assert_eq!(session_cookie(&parts(&[])), None);
        assert_eq!(
            session_cookie(&parts(&["a=1; airlock_session=xyz; b=2"])),
            Some("xyz".into())
        );
        assert_eq!(
            session_cookie(&parts(&["a=1", "airlock_session=q"])),
            Some("q".into())
        );
        // A cookie whose name only ends with ours is not ours.
        assert_eq!(session_cookie(&parts(&["x_airlock_session=1"])), None);
    }

    #[test]
    fn cookie_attributes() {
        let c = set_cookie("id", 60, false);
        assert_eq!(
            c,
            "airlock_session=id; HttpOnly; SameSite=Strict; Path=/; Max-Age=60"
        );
        assert!(set_cookie("id", 60, true).ends_with("; Secure"));
        assert!(clear_cookie(false).contains("Max-Age=0"));
    }
}
