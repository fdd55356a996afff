//! Who is calling. Bearer tokens (`alk_` + 43 base64url characters of 32 random bytes) are
//! shown once at creation and stored only as their SHA-256; a presented token is hashed, looked
//! up by that hash, and the hashes are compared again in constant time. Web sessions for the
//! inbox: logging in with an approver or admin token gives a random session id (kept by the
//! browser in an HttpOnly, SameSite=Strict cookie, stored hashed) and a CSRF token that every
//! form must carry.

use airlock_ledger::canonical::sha256_hex;
use airlock_store::{Db, TokenRow, WebSessionRow};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq;

use crate::GatewayError;
use crate::token_cache::TokenCache;

/// The prefix of every token secret, so a leaked one is recognisable (secret scanners).
pub const TOKEN_PREFIX: &str = "alk_";
/// The prefix of token ids (not secret: shown in lists, used to revoke).
pub const TOKEN_ID_PREFIX: &str = "tok_";
/// A presented token longer than this is refused before hashing.
const MAX_TOKEN_LEN: usize = 128;
/// How long a web login lasts.
pub const SESSION_TTL_MS: i64 = 12 * 60 * 60 * 1000;

/// What a token may do: agents submit, wait and scan; approvers also decide, cancel and revoke
/// grants; admins also manage tokens and export the ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Agent,
    Approver,
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Agent => "agent",
            Role::Approver => "approver",
            Role::Admin => "admin",
        }
    }

    /// Approvers and admins may answer approvals; agents never.
    pub fn can_decide(self) -> bool {
        matches!(self, Role::Approver | Role::Admin)
    }
}

impl std::str::FromStr for Role {
    type Err = GatewayError;
    fn from_str(s: &str) -> Result<Role, GatewayError> {
        match s {
            "agent" => Ok(Role::Agent),
            "approver" => Ok(Role::Approver),
            "admin" => Ok(Role::Admin),
            other => Err(GatewayError::Invalid(format!(
                "unknown role {other:?}: use agent, approver or admin"
            ))),
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub token_id: String,
    /// The token's name: the agent's name for agent tokens, the person's for the others.
    pub name: String,
    pub role: Role,
}

/// A token just created: the secret is in this value and nowhere else.
#[derive(Debug, Clone, Serialize)]
pub struct NewToken {
    pub id: String,
    pub name: String,
    pub role: Role,
    pub secret: String,
}

/// A token as listed (never its secret or hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TokenInfo {
    pub id: String,
    pub name: String,
    pub role: Role,
    pub created_ms: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revoked_ms: Option<i64>,
}

/// A web login just made: `session_id` goes into the cookie, nowhere else.
#[derive(Debug, Clone)]
pub struct WebLogin {
    pub session_id: String,
    pub csrf: String,
    pub caller: Caller,
    pub expires_ms: i64,
}

/// A live web session.
#[derive(Debug, Clone)]
pub struct WebSession {
    pub caller: Caller,
    pub csrf: String,
    pub expires_ms: i64,
}

/// Token and session management over the store.
#[derive(Clone, Debug)]
pub struct Auth {
    db: Db,
    cache: TokenCache,
}

fn now_ms() -> i64 {
    airlock_grants::system_now_ms()
}

fn random_b64(bytes: usize) -> Result<String, GatewayError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| GatewayError::Random(e.to_string()))?;
    Ok(URL_SAFE_NO_PAD.encode(buf))
}

fn random_hex(bytes: usize) -> Result<String, GatewayError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| GatewayError::Random(e.to_string()))?;
    Ok(hex::encode(buf))
}

/// Token names: what shows up as the agent or the approver in receipts and pages.
pub fn valid_name(name: &str) -> Result<(), GatewayError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@' | ':'));
    if ok {
        Ok(())
    } else {
        Err(GatewayError::Invalid(format!(
            "invalid token name {name:?}: 1 to 64 characters of A-Z a-z 0-9 - _ . @ :"
        )))
    }
}

fn role_of(row: &TokenRow) -> Result<Role, GatewayError> {
    row.role.parse()
}

fn caller_of(row: &TokenRow) -> Result<Caller, GatewayError> {
    Ok(Caller {
        token_id: row.id.clone(),
        name: row.name.clone(),
        role: role_of(row)?,
    })
}

impl Auth {
    /// Every check asks the database.
    pub fn new(db: Db) -> Auth {
        Auth {
            db,
            cache: TokenCache::default(),
        }
    }

    /// Live tokens are remembered for up to `ttl` (see `token_cache.rs`): a revocation through
    /// this value takes effect at once, one made elsewhere within `ttl`. Zero turns it off.
    pub fn with_token_cache(mut self, ttl: std::time::Duration) -> Auth {
        self.cache = TokenCache::new(ttl);
        self
    }

    /// How long a live token may be remembered.
    pub fn token_cache_ttl(&self) -> std::time::Duration {
        self.cache.ttl()
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Creates a token; its secret is returned here once and never stored.
    pub async fn create(&self, name: &str, role: Role) -> Result<NewToken, GatewayError> {
        valid_name(name)?;
        let secret = format!("{TOKEN_PREFIX}{}", random_b64(32)?);
        let id = format!("{TOKEN_ID_PREFIX}{}", random_hex(8)?);
        self.db
            .token_insert(&TokenRow {
                id: id.clone(),
                name: name.to_string(),
                role: role.as_str().to_string(),
                sha256: sha256_hex(secret.as_bytes()),
                created_ms: now_ms(),
                revoked_ms: None,
            })
            .await?;
        Ok(NewToken {
            id,
            name: name.to_string(),
            role,
            secret,
        })
    }

    pub async fn list(&self) -> Result<Vec<TokenInfo>, GatewayError> {
        self.db
            .token_list()
            .await?
            .iter()
            .map(|r| {
                Ok(TokenInfo {
                    id: r.id.clone(),
                    name: r.name.clone(),
                    role: role_of(r)?,
                    created_ms: r.created_ms,
                    revoked_ms: r.revoked_ms,
                })
            })
            .collect()
    }

    /// Revokes a token and ends its web sessions. `false` when unknown or already revoked.
    pub async fn revoke(&self, id: &str) -> Result<bool, GatewayError> {
        // Cleared after the database changed, whatever it answered: a lookup racing with the
        // revocation cannot store a live answer (see `TokenCache::put`).
        let revoked = self.db.token_revoke(id, now_ms()).await;
        self.cache.clear();
        Ok(revoked?)
    }

    /// The caller a presented bearer token belongs to, if it is a live token.
    pub async fn check(&self, bearer: &str) -> Result<Option<Caller>, GatewayError> {
        if !bearer.starts_with(TOKEN_PREFIX) || bearer.len() > MAX_TOKEN_LEN {
            return Ok(None);
        }
        let presented = sha256_hex(bearer.as_bytes());
        if let Some(caller) = self.cache.get(&presented) {
            return Ok(Some(caller));
        }
        let ticket = self.cache.ticket();
        let Some(row) = self.db.token_by_hash(&presented).await? else {
            return Ok(None);
        };
        // The lookup was by hash; compare again without an early exit so the answer never
        // depends on how much of a stored hash a guess matched.
        if !bool::from(presented.as_bytes().ct_eq(row.sha256.as_bytes())) {
            return Ok(None);
        }
        let caller = caller_of(&row)?;
        if let Some(t) = ticket {
            self.cache.put(&presented, &caller, t);
        }
        Ok(Some(caller))
    }

    /// Logs in to the web inbox. `None` for a bad token or one that may not decide (agents
    /// never get an inbox session).
    pub async fn login(&self, bearer: &str) -> Result<Option<WebLogin>, GatewayError> {
        let Some(caller) = self.check(bearer).await? else {
            return Ok(None);
        };
        if !caller.role.can_decide() {
            return Ok(None);
        }
        let session_id = random_b64(32)?;
        let csrf = random_b64(32)?;
        let now = now_ms();
        let expires_ms = now + SESSION_TTL_MS;
        self.db
            .web_session_insert(&WebSessionRow {
                sha256: sha256_hex(session_id.as_bytes()),
                token: caller.token_id.clone(),
                csrf: csrf.clone(),
                created_ms: now,
                expires_ms,
            })
            .await?;
        // Opportunistic clean-up of old logins; a failure here must not fail the login.
        if let Err(e) = self.db.web_session_purge(now).await {
            tracing::warn!(error = %e, "purging expired web sessions");
        }
        Ok(Some(WebLogin {
            session_id,
            csrf,
            caller,
            expires_ms,
        }))
    }

    /// The live session a cookie's session id names.
    pub async fn session(&self, session_id: &str) -> Result<Option<WebSession>, GatewayError> {
        if session_id.is_empty() || session_id.len() > MAX_TOKEN_LEN {
            return Ok(None);
        }
        let hash = sha256_hex(session_id.as_bytes());
        let Some((s, t)) = self.db.web_session_get(&hash, now_ms()).await? else {
            return Ok(None);
        };
        let caller = caller_of(&t)?;
        if !caller.role.can_decide() {
            return Ok(None);
        }
        Ok(Some(WebSession {
            caller,
            csrf: s.csrf,
            expires_ms: s.expires_ms,
        }))
    }

    pub async fn logout(&self, session_id: &str) -> Result<bool, GatewayError> {
        Ok(self
            .db
            .web_session_delete(&sha256_hex(session_id.as_bytes()))
            .await?)
    }
}

/// Constant-time equality of two short secrets (CSRF tokens).
pub fn secret_eq(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}
