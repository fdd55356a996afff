//! The grant itself: who holds it, what it covers, how often and until when, where it came from.

use serde::{Deserialize, Serialize};

use crate::GrantError;
use crate::scope::Scope;

/// Who may use a grant: an agent, in one session or (without a session) in all of them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Subject {
    pub agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

impl Subject {
    pub fn new(agent: impl Into<String>, session: Option<String>) -> Self {
        Subject {
            agent: agent.into(),
            session,
        }
    }

    /// Whether a grant held by `self` may be used by an agent acting as `actor`: the same agent,
    /// and the same session unless the grant has none.
    pub fn covers(&self, actor: &Subject) -> bool {
        self.agent == actor.agent
            && match &self.session {
                None => true,
                Some(s) => actor.session.as_deref() == Some(s.as_str()),
            }
    }
}

/// How an approval maps to a grant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantKind {
    /// Approved once: exactly one use.
    Once,
    /// Approved for a session: ends when the session ends (or at its expiry).
    Session,
    /// A stored narrow rule with a long expiry, after which a person is asked again.
    Permanent,
}

impl GrantKind {
    pub fn as_str(self) -> &'static str {
        match self {
            GrantKind::Once => "once",
            GrantKind::Session => "session",
            GrantKind::Permanent => "permanent",
        }
    }

    pub fn parse(s: &str) -> Result<Self, GrantError> {
        match s {
            "once" => Ok(GrantKind::Once),
            "session" => Ok(GrantKind::Session),
            "permanent" => Ok(GrantKind::Permanent),
            other => Err(GrantError::Invalid(format!(
                "unknown grant kind {other:?}: use once, session or permanent"
            ))),
        }
    }
}

/// Who made a grant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Creator {
    /// A person (an approver or an administrator).
    Person { name: String },
    /// The holder of an upstream grant, forwarding part of it.
    Grant { id: String },
    /// An LLM reviewer: it can only propose; a person must confirm.
    Llm { model: String },
}

impl std::fmt::Display for Creator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Creator::Person { name } => write!(f, "person:{name}"),
            Creator::Grant { id } => write!(f, "grant:{id}"),
            Creator::Llm { model } => write!(f, "llm:{model}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Proposed by an LLM; never usable until a person confirms it.
    Proposed,
    Active,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Proposed => "proposed",
            Status::Active => "active",
        }
    }
}

/// A capability. Times are unix milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grant {
    pub id: String,
    pub subject: Subject,
    pub scope: Scope,
    pub kind: GrantKind,
    pub max_uses: u32,
    pub uses: u32,
    pub expires_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    pub creator: Creator,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed_at: Option<i64>,
    pub created_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoke_reason: Option<String>,
    pub reason: String,
}

impl Grant {
    pub fn remaining(&self) -> u32 {
        self.max_uses.saturating_sub(self.uses)
    }

    /// Usable by its own row at `now` (ancestors are checked when a use is consumed).
    pub fn is_usable_at(&self, now: i64) -> bool {
        self.status == Status::Active
            && self.revoked_at.is_none()
            && self.expires_at > now
            && self.uses < self.max_uses
    }

    /// One word for listings: proposed, revoked, expired, used up or active.
    pub fn state_at(&self, now: i64) -> &'static str {
        if self.revoked_at.is_some() {
            "revoked"
        } else if self.status == Status::Proposed {
            "proposed"
        } else if self.expires_at <= now {
            "expired"
        } else if self.uses >= self.max_uses {
            "used up"
        } else {
            "active"
        }
    }

    #[cfg(feature = "store")]
    pub(crate) fn to_row(&self) -> Result<airlock_store::GrantRow, GrantError> {
        Ok(airlock_store::GrantRow {
            id: self.id.clone(),
            agent: self.subject.agent.clone(),
            session: self.subject.session.clone(),
            kind: self.kind.as_str().to_string(),
            scope: serde_json::to_string(&self.scope)
                .map_err(|e| GrantError::Invalid(format!("scope does not serialise: {e}")))?,
            max_uses: i64::from(self.max_uses),
            uses: i64::from(self.uses),
            expires_ms: self.expires_at,
            parent: self.parent.clone(),
            creator: serde_json::to_string(&self.creator)
                .map_err(|e| GrantError::Invalid(format!("creator does not serialise: {e}")))?,
            status: self.status.as_str().to_string(),
            confirmed_by: self.confirmed_by.clone(),
            confirmed_ms: self.confirmed_at,
            created_ms: self.created_at,
            revoked_ms: self.revoked_at,
            revoke_reason: self.revoke_reason.clone(),
            reason: self.reason.clone(),
        })
    }

    /// Reads a stored row; a row that does not parse is an error naming the grant (never
    /// silently usable).
    #[cfg(feature = "store")]
    pub fn from_row(r: &airlock_store::GrantRow) -> Result<Grant, GrantError> {
        let bad = |what: &str, e: String| {
            GrantError::Invalid(format!("stored grant {} has a bad {what}: {e}", r.id))
        };
        let count = |what: &str, v: i64| {
            u32::try_from(v).map_err(|_| bad(what, format!("{v} is out of range")))
        };
        let scope: Scope =
            serde_json::from_str(&r.scope).map_err(|e| bad("scope", e.to_string()))?;
        scope.validate().map_err(|e| bad("scope", e.to_string()))?;
        Ok(Grant {
            id: r.id.clone(),
            subject: Subject::new(r.agent.clone(), r.session.clone()),
            scope,
            kind: GrantKind::parse(&r.kind).map_err(|e| bad("kind", e.to_string()))?,
            max_uses: count("max_uses", r.max_uses)?,
            uses: count("uses", r.uses)?,
            expires_at: r.expires_ms,
            parent: r.parent.clone(),
            creator: serde_json::from_str(&r.creator).map_err(|e| bad("creator", e.to_string()))?,
            status: match r.status.as_str() {
                "proposed" => Status::Proposed,
                "active" => Status::Active,
                other => return Err(bad("status", other.to_string())),
            },
            confirmed_by: r.confirmed_by.clone(),
            confirmed_at: r.confirmed_ms,
            created_at: r.created_ms,
            revoked_at: r.revoked_ms,
            revoke_reason: r.revoke_reason.clone(),
            reason: r.reason.clone(),
        })
    }
}

/// A fresh grant id: `gr_` and 128 random bits in hex.
pub fn new_id() -> Result<String, GrantError> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| GrantError::Internal(format!("no randomness: {e}")))?;
    Ok(format!("gr_{}", hex::encode(b)))
}

/// Whether `s` looks like a grant id (so a typo is reported as such, not as "not found").
pub fn is_grant_id(s: &str) -> bool {
    s.strip_prefix("gr_")
        .is_some_and(|h| h.len() == 32 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::{ArgConstraint, Constraint};
    use airlock_core::Action;

    fn sample(scope: Scope) -> Grant {
        Grant {
            id: "gr_0123456789abcdef0123456789abcdef".into(),
            subject: Subject::new("claude", Some("s1".into())),
            scope,
            kind: GrantKind::Session,
            max_uses: 3,
            uses: 1,
            expires_at: 1_800_000_060_000,
            parent: Some("gr_00000000000000000000000000000001".into()),
            creator: Creator::Grant {
                id: "gr_00000000000000000000000000000001".into(),
            },
            status: Status::Active,
            confirmed_by: None,
            confirmed_at: None,
            created_at: 1_800_000_000_000,
            revoked_at: None,
            revoke_reason: None,
            reason: "release".into(),
        }
    }

    /// The JSON `airlock grant show --json` prints and the store keeps (scope, creator).
    #[test]
    fn wire_snapshot() {
        let scopes = vec![
            Scope::exact(&Action::shell("git push origin main")).unwrap(),
            Scope::command_prefix("git push").unwrap(),
            Scope::Tool {
                tool: "write_file".into(),
                constraints: vec![
                    ArgConstraint {
                        pointer: "/path".into(),
                        rule: Constraint::PathGlob("/work/**".into()),
                    },
                    ArgConstraint {
                        pointer: "/mode".into(),
                        rule: Constraint::OneOf(vec!["a".into(), "w".into()]),
                    },
                ],
                exact_fields: true,
            },
        ];
        let grants: Vec<Grant> = scopes.into_iter().map(sample).collect();
        insta::assert_json_snapshot!(grants);
        #[cfg(feature = "store")]
        for g in &grants {
            let row = g.to_row().unwrap();
            assert_eq!(&Grant::from_row(&row).unwrap(), g);
        }
    }

    #[cfg(feature = "store")]
    #[test]
    fn bad_rows_are_errors() {
        let mut row = sample(Scope::command_prefix("ls").unwrap())
            .to_row()
            .unwrap();
        row.scope = r#"{"type":"command_prefix","argv":["ls"],"extra":1}"#.into();
        assert!(Grant::from_row(&row).is_err());
        row.scope = r#"{"type":"everything"}"#.into();
        assert!(Grant::from_row(&row).is_err());
        // An exact scope whose hash is not its action's.
        let exact = Scope::exact(&Action::shell("ls")).unwrap();
        let mut row = sample(exact).to_row().unwrap();
        row.scope = row.scope.replace("\"ls\"", "\"rm -rf /\"");
        assert!(Grant::from_row(&row).is_err());
        let mut row = sample(Scope::command_prefix("ls").unwrap())
            .to_row()
            .unwrap();
        row.uses = -1;
        assert!(Grant::from_row(&row).is_err());
        let mut row = sample(Scope::command_prefix("ls").unwrap())
            .to_row()
            .unwrap();
        row.status = "maybe".into();
        assert!(Grant::from_row(&row).is_err());
    }

    #[test]
    fn ids() {
        let a = new_id().unwrap();
        assert!(is_grant_id(&a));
        assert_ne!(a, new_id().unwrap());
        assert!(!is_grant_id("gr_xyz"));
    }
}
