//! [`GrantBook`]: the grant operations over the store. Creating checks the request (kind, uses,
//! expiry, narrowness); forwarding checks attenuation against the parent; using finds the
//! narrowest matching grant and consumes one use of it and of every ancestor atomically in the
//! store, trying the next candidate if another consumer got there first.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use airlock_core::Action;
use airlock_store::{ChildRefused, Db, GrantFilter};

use crate::GrantError;
use crate::broad::check_narrow;
use crate::model::{Creator, Grant, GrantKind, Status, Subject, new_id};
use crate::scope::{PreparedAction, Scope};

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;

/// Defaults and ceilings for new grants.
#[derive(Debug, Clone)]
pub struct GrantConfig {
    /// Expiry of a once grant when none is given (default 1 hour).
    pub once_ttl_ms: i64,
    /// Expiry of a session grant when none is given (default 24 hours).
    pub session_ttl_ms: i64,
    /// Expiry of a "permanent" grant when none is given (default 30 days); also the longest
    /// expiry any grant may have. When it passes, a person is asked again.
    pub permanent_ttl_ms: i64,
    /// Uses of a session grant when none is given.
    pub session_max_uses: u32,
    /// Uses of a permanent grant when none is given.
    pub permanent_max_uses: u32,
}

impl Default for GrantConfig {
    fn default() -> Self {
        GrantConfig {
            once_ttl_ms: HOUR_MS,
            session_ttl_ms: DAY_MS,
            permanent_ttl_ms: 30 * DAY_MS,
            session_max_uses: 1_000,
            permanent_max_uses: 100_000,
        }
    }
}

/// A request for a new grant (by a person, or proposed by an LLM).
#[derive(Debug, Clone)]
pub struct NewGrant {
    pub subject: Subject,
    pub scope: Scope,
    pub kind: GrantKind,
    /// Default: 1 for once, the configured default otherwise.
    pub max_uses: Option<u32>,
    /// Unix ms; default: now plus the kind's configured lifetime.
    pub expires_at: Option<i64>,
    pub reason: String,
    /// The admin policy layer allows an over-broad scope.
    pub allow_broad: bool,
    /// The policy marks the scope's tool as dangerous (a tool scope must then constrain its
    /// arguments).
    pub dangerous_tool: bool,
}

impl NewGrant {
    pub fn new(subject: Subject, scope: Scope, kind: GrantKind) -> Self {
        NewGrant {
            subject,
            scope,
            kind,
            max_uses: None,
            expires_at: None,
            reason: String::new(),
            allow_broad: false,
            dangerous_tool: false,
        }
    }
}

/// A request to forward part of a grant to another subject (a sub-agent, a child session).
#[derive(Debug, Clone)]
pub struct Forward {
    pub subject: Subject,
    /// Must lie inside the parent's scope.
    pub scope: Scope,
    pub kind: GrantKind,
    /// At most the parent's remaining uses (the default).
    pub max_uses: Option<u32>,
    /// At most the parent's expiry (the default).
    pub expires_at: Option<i64>,
    pub reason: String,
}

/// Which grants [`GrantBook::list`] returns.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    pub agent: Option<String>,
    /// Grants of this session and session-less grants.
    pub session: Option<String>,
    /// Also revoked, expired, used-up and proposed grants.
    pub all: bool,
}

/// The current time in unix milliseconds.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

pub fn system_now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Grant operations over one store.
#[derive(Clone)]
pub struct GrantBook {
    db: Db,
    config: GrantConfig,
    clock: Clock,
}

impl std::fmt::Debug for GrantBook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrantBook")
            .field("db", &self.db.backend())
            .field("config", &self.config)
            .finish()
    }
}

impl GrantBook {
    pub fn new(db: Db, config: GrantConfig) -> Self {
        GrantBook {
            db,
            config,
            clock: Arc::new(system_now_ms),
        }
    }

    /// Replaces the clock (tests; replaying at a given time).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    pub fn config(&self) -> &GrantConfig {
        &self.config
    }

    pub fn now(&self) -> i64 {
        (self.clock)()
    }

    /// A grant made by a person: active at once.
    pub async fn create(&self, req: NewGrant, person: &str) -> Result<Grant, GrantError> {
        if person.trim().is_empty() {
            return Err(GrantError::Invalid(
                "a grant needs the name of the person who makes it".into(),
            ));
        }
        let g = self.build(
            req,
            Creator::Person {
                name: person.to_string(),
            },
            Status::Active,
        )?;
        self.db.grant_insert(&g.to_row()?).await?;
        Ok(g)
    }

    /// A grant proposed by an LLM reviewer: stored as `proposed`, never usable until a person
    /// confirms it. An LLM cannot ask for a broad scope.
    pub async fn propose(&self, mut req: NewGrant, model: &str) -> Result<Grant, GrantError> {
        req.allow_broad = false;
        let g = self.build(
            req,
            Creator::Llm {
                model: model.to_string(),
            },
            Status::Proposed,
        )?;
        self.db.grant_insert(&g.to_row()?).await?;
        Ok(g)
    }

    /// A person confirms a proposed grant, which becomes active.
    pub async fn confirm(&self, id: &str, person: &str) -> Result<Grant, GrantError> {
        if person.trim().is_empty() {
            return Err(GrantError::Invalid(
                "confirming a grant needs the name of the person".into(),
            ));
        }
        let now = self.now();
        if !self.db.grant_confirm(id, person, now).await? {
            let g = self.show(id).await?;
            let why = if g.status == Status::Active {
                "it is already active".to_string()
            } else {
                format!("it is {}", g.state_at(now))
            };
            return Err(GrantError::NotUsable {
                id: id.to_string(),
                why,
            });
        }
        self.show(id).await
    }

    /// Forwards part of grant `parent` to another subject. The child's scope must lie inside the
    /// parent's, its uses within the parent's remaining uses, its expiry no later than the
    /// parent's; otherwise `DELEGATION_SCOPE_VIOLATION`. Every use of the child also counts
    /// against the parent and its ancestors.
    pub async fn forward(&self, parent: &str, fwd: Forward) -> Result<Grant, GrantError> {
        let now = self.now();
        let chain = self.chain(parent).await?;
        let Some(p) = chain.first() else {
            return Err(GrantError::NotFound(parent.to_string()));
        };
        for g in &chain {
            if !g.is_usable_at(now) {
                return Err(GrantError::NotUsable {
                    id: parent.to_string(),
                    why: if g.id == p.id {
                        format!("it is {}", g.state_at(now))
                    } else {
                        format!("its ancestor {} is {}", g.id, g.state_at(now))
                    },
                });
            }
        }
        fwd.scope.validate()?;
        if !fwd.scope.is_within(&p.scope) {
            return Err(GrantError::Delegation(format!(
                "the forwarded scope ({}) is not inside grant {}'s scope ({})",
                fwd.scope.describe(),
                p.id,
                p.scope.describe()
            )));
        }
        let remaining = p.remaining();
        let max_uses = match (fwd.kind, fwd.max_uses) {
            (GrantKind::Once, None | Some(1)) => 1,
            (GrantKind::Once, Some(n)) => {
                return Err(GrantError::Invalid(format!(
                    "a once grant has exactly 1 use, not {n}"
                )));
            }
            (_, Some(n)) => n,
            (_, None) => remaining,
        };
        if max_uses > remaining {
            return Err(GrantError::Delegation(format!(
                "the forwarded grant asks for {max_uses} uses but grant {} has {remaining} left",
                p.id
            )));
        }
        let expires_at = fwd.expires_at.unwrap_or(p.expires_at);
        if expires_at > p.expires_at {
            return Err(GrantError::Delegation(format!(
                "the forwarded grant would expire after grant {} does",
                p.id
            )));
        }
        let g = Grant {
            id: new_id()?,
            subject: fwd.subject,
            scope: fwd.scope,
            kind: fwd.kind,
            max_uses,
            uses: 0,
            expires_at,
            parent: Some(p.id.clone()),
            creator: Creator::Grant { id: p.id.clone() },
            status: Status::Active,
            confirmed_by: None,
            confirmed_at: None,
            created_at: now,
            revoked_at: None,
            revoke_reason: None,
            reason: fwd.reason,
        };
        check_shape(&g, now)?;
        match self.db.grant_insert_child(&g.to_row()?, now).await? {
            Ok(()) => Ok(g),
            Err(ChildRefused::MissingParent) => Err(GrantError::NotFound(parent.to_string())),
            Err(ChildRefused::ParentNotUsable) => Err(GrantError::NotUsable {
                id: parent.to_string(),
                why: "it was revoked or expired meanwhile".into(),
            }),
        }
    }

    /// Uses a grant of `actor` that covers `action`, if any: the narrowest first (exact, tool,
    /// then the longest prefix; once before session before permanent; soonest expiry). The use
    /// is counted atomically on the grant and every ancestor; `None` when no grant covers the
    /// action or every candidate is used up, revoked or expired (here or up its chain).
    pub async fn use_for(
        &self,
        actor: &Subject,
        action: &Action,
    ) -> Result<Option<Grant>, GrantError> {
        let now = self.now();
        let rows = self
            .db
            .grant_find_usable(&actor.agent, actor.session.as_deref(), now)
            .await?;
        let prepared = PreparedAction::new(action);
        let mut candidates: Vec<Grant> = rows
            .iter()
            // A stored grant that does not parse is never usable.
            .filter_map(|r| Grant::from_row(r).ok())
            .filter(|g| g.subject.covers(actor) && g.scope.matches_prepared(&prepared))
            .collect();
        candidates.sort_by_key(|g| (narrowness(&g.scope), kind_rank(g.kind), g.expires_at));
        for g in candidates {
            if let Some(row) = self.db.grant_consume(&g.id, now).await? {
                return Ok(Some(Grant::from_row(&row)?));
            }
        }
        Ok(None)
    }

    /// Uses one named grant for `action`, or says why it cannot.
    pub async fn use_grant(
        &self,
        id: &str,
        actor: &Subject,
        action: &Action,
    ) -> Result<Grant, GrantError> {
        let g = self.show(id).await?;
        let not = |why: String| GrantError::NotUsable {
            id: id.to_string(),
            why,
        };
        if !g.subject.covers(actor) {
            return Err(not("it belongs to another agent or session".into()));
        }
        if !g.scope.matches(action) {
            return Err(not("its scope does not cover this action".into()));
        }
        let now = self.now();
        match self.db.grant_consume(id, now).await? {
            Some(row) => Grant::from_row(&row),
            None => {
                let chain = self.chain(id).await?;
                let why = chain
                    .iter()
                    .find(|a| !a.is_usable_at(now))
                    .map(|a| {
                        if a.id == id {
                            format!("it is {}", a.state_at(now))
                        } else {
                            format!("its ancestor {} is {}", a.id, a.state_at(now))
                        }
                    })
                    .unwrap_or_else(|| "another use took its last one".into());
                Err(not(why))
            }
        }
    }

    /// Revokes a grant and every grant derived from it; returns how many were revoked now.
    pub async fn revoke(&self, id: &str, reason: &str) -> Result<u64, GrantError> {
        if self.db.grant_get(id).await?.is_none() {
            return Err(GrantError::NotFound(id.to_string()));
        }
        Ok(self.db.grant_revoke(id, self.now(), reason).await?)
    }

    /// Ends a session: its session grants (and what was forwarded from them) are revoked.
    pub async fn end_session(&self, session: &str) -> Result<u64, GrantError> {
        Ok(self.db.grant_end_session(session, self.now()).await?)
    }

    pub async fn list(&self, f: &ListFilter) -> Result<Vec<Grant>, GrantError> {
        let rows = self
            .db
            .grant_list(&GrantFilter {
                agent: f.agent.clone(),
                session: f.session.clone(),
                usable_at: (!f.all).then(|| self.now()),
                limit: None,
            })
            .await?;
        rows.iter().map(Grant::from_row).collect()
    }

    pub async fn show(&self, id: &str) -> Result<Grant, GrantError> {
        match self.db.grant_get(id).await? {
            Some(r) => Grant::from_row(&r),
            None => Err(GrantError::NotFound(id.to_string())),
        }
    }

    /// The grant and its ancestors, the grant first.
    pub async fn chain(&self, id: &str) -> Result<Vec<Grant>, GrantError> {
        let rows = self.db.grant_chain(id).await?;
        if rows.is_empty() {
            return Err(GrantError::NotFound(id.to_string()));
        }
        rows.iter().map(Grant::from_row).collect()
    }

    fn build(&self, req: NewGrant, creator: Creator, status: Status) -> Result<Grant, GrantError> {
        let now = self.now();
        req.scope.validate()?;
        if !req.allow_broad {
            check_narrow(&req.scope, req.dangerous_tool)?;
        }
        let max_uses = match (req.kind, req.max_uses) {
            (GrantKind::Once, None | Some(1)) => 1,
            (GrantKind::Once, Some(n)) => {
                return Err(GrantError::Invalid(format!(
                    "a once grant has exactly 1 use, not {n}: use --kind session or permanent"
                )));
            }
            (_, Some(n)) => n,
            (GrantKind::Session, None) => self.config.session_max_uses,
            (GrantKind::Permanent, None) => self.config.permanent_max_uses,
        };
        let ttl = match req.kind {
            GrantKind::Once => self.config.once_ttl_ms,
            GrantKind::Session => self.config.session_ttl_ms,
            GrantKind::Permanent => self.config.permanent_ttl_ms,
        };
        let expires_at = req.expires_at.unwrap_or(now.saturating_add(ttl));
        if expires_at > now.saturating_add(self.config.permanent_ttl_ms) {
            return Err(GrantError::Invalid(format!(
                "the expiry is more than {} days away; every grant expires within the configured permanent lifetime",
                self.config.permanent_ttl_ms / DAY_MS
            )));
        }
        let g = Grant {
            id: new_id()?,
            subject: req.subject,
            scope: req.scope,
            kind: req.kind,
            max_uses,
            uses: 0,
            expires_at,
            parent: None,
            creator,
            status,
            confirmed_by: None,
            confirmed_at: None,
            created_at: now,
            revoked_at: None,
            revoke_reason: None,
            reason: req.reason,
        };
        check_shape(&g, now)?;
        Ok(g)
    }
}

/// Checks that hold for every new grant.
fn check_shape(g: &Grant, now: i64) -> Result<(), GrantError> {
    if g.subject.agent.trim().is_empty() {
        return Err(GrantError::Invalid("a grant needs an agent".into()));
    }
    if g.subject
        .session
        .as_deref()
        .is_some_and(|s| s.trim().is_empty())
    {
        return Err(GrantError::Invalid("an empty session name".into()));
    }
    if g.kind == GrantKind::Session && g.subject.session.is_none() {
        return Err(GrantError::Invalid(
            "a session grant needs the session it ends with".into(),
        ));
    }
    if g.max_uses == 0 {
        return Err(GrantError::Invalid("a grant needs at least one use".into()));
    }
    if g.expires_at <= now {
        return Err(GrantError::Invalid(
            "the expiry is not in the future".into(),
        ));
    }
    Ok(())
}

fn narrowness(s: &Scope) -> (u8, usize) {
    match s {
        Scope::Exact { .. } => (0, 0),
        Scope::Tool { constraints, .. } => (1, usize::MAX - constraints.len()),
        Scope::CommandPrefix { argv } => (2, usize::MAX - argv.len()),
        Scope::Network { .. } | Scope::Write { .. } => (1, 0),
    }
}

fn kind_rank(k: GrantKind) -> u8 {
    match k {
        GrantKind::Once => 0,
        GrantKind::Session => 1,
        GrantKind::Permanent => 2,
    }
}
