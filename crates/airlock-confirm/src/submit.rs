//! Deciding one submitted action: the policy's verdict in the submission's context (agent,
//! session, channel, working directory, the session's recent denials), a grant for an ask below
//! tier 4, then allow and deny are recorded at once and a remaining ask opens an approval
//! routed by tier. Anything that goes wrong before an approval is opened denies (fail-safe).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use airlock_core::{Action, Assessment, Decision, Finding, Tier};
use airlock_grants::Subject;
use airlock_ledger::Receipt;
use airlock_ledger::canonical::hash_value;
use airlock_ledger::receipt::receipt_id;
use airlock_policy::{Confirmers, Context, Policy, Requirement};
use airlock_store::{ApprovalRow, LedgerStore};

use crate::ConfirmError;
use crate::broker::{Broker, action_sha256};
use crate::decide::decide;
use crate::metrics::inc;
use crate::model::{ApprovalEvent, Outcome, Submission};
use crate::receipt::{RecordContext, args_of, random_hex, random_id, request};
use crate::route::confirmers_for;
use crate::view::{approval_of, immediate, internal_finding};

/// The longest agent, session or request id accepted (receipts allow 256 bytes).
const MAX_ID: usize = 200;

impl Broker {
    /// Decides one action as every surface does; see the module documentation.
    pub async fn submit(&self, s: Submission) -> Result<Outcome, ConfirmError> {
        self.submit_with(s, false).await
    }

    /// As [`Broker::submit`], for a person who may be in crisis when `crisis` (the surface
    /// noticed it in this request): the policy's crisis mode applies, so its support tools are
    /// never gated and its decision tools always need a person (seed 001).
    pub async fn submit_with(&self, s: Submission, crisis: bool) -> Result<Outcome, ConfirmError> {
        inc(&self.inner.counters.submitted);
        check(&s)?;
        if let Some(r) = &s.request_id
            && let Some(o) = self.repeated(r, &s).await?
        {
            return Ok(o);
        }
        let streak = self.db().denial_streak(&s.session).await?;
        let (policy, cwd) = match self.policy_where_it_runs(&s) {
            Ok(p) => p,
            Err(e) => {
                let a = airlock_policy::load_error(&e.to_string());
                return self.record_now(&s, a, None, fallback_hash(), streak).await;
            }
        };
        let policy_sha = policy
            .hash()
            .map(str::to_string)
            .unwrap_or_else(|_| fallback_hash());
        // the hosts the project's own files name, read only for an action that may upload
        // (the daemon runs where the agent does: `cwd` is a directory of this machine)
        let project_hosts = match cwd.as_deref() {
            Some(c) if c.starts_with('/') && airlock_policy::may_upload(&s.action) => {
                let dir = std::path::PathBuf::from(c);
                // a bounded walk of the project's files: off the async threads
                tokio::task::spawn_blocking(move || {
                    airlock_policy::project_hosts::project_hosts(&dir)
                })
                .await
                // a walk that failed knows no host: every upload asks
                .unwrap_or(Some(Vec::new()))
            }
            _ => None,
        };
        // hosts a person approved an upload to are known from then on (only looked up when
        // the policy checks hosts at all)
        let known_hosts = if policy.settings.known_hosts.is_empty() && project_hosts.is_none() {
            Vec::new()
        } else {
            let root = project_hosts
                .as_ref()
                .and(cwd.as_deref())
                .and_then(|c| airlock_policy::project_hosts::project_root(Path::new(c)));
            let history = self.db().approval_history(crate::hosts::HISTORY).await?;
            crate::hosts::approved_hosts(&history, root.as_deref())
        };
        // crisis mode: noticed in this request by the surface, or the session's mark as every
        // node of the store sees it
        let crisis = crisis || self.db().crisis_get(&s.session).await?.is_some();
        let ctx = Context {
            agent: Some(s.agent.clone()),
            session: Some(s.session.clone()),
            channel: Some(s.channel),
            cwd,
            recent_denials: streak,
            known_hosts,
            project_hosts,
            crisis,
            ..Context::default()
        }
        // production facts the daemon can read itself: the git branch where the action runs,
        // and its own environment's (`AIRLOCK_PRODUCTION`, `AIRLOCK_ENV`, the kube context,
        // the cloud profile); each can only make the context production, never less
        .with_env_facts();
        let actor = Subject::new(s.agent.clone(), Some(s.session.clone()));
        let decided = match decide(&policy, Some(&self.inner.book), &actor, &s.action, &ctx).await {
            Ok(d) => d,
            Err(e) => {
                let a = Assessment::from_findings(
                    vec![internal_finding(&format!("the grant check failed: {e}"))],
                    Decision::Deny,
                );
                return self.record_now(&s, a, None, policy_sha, streak).await;
            }
        };
        let v = decided.verdict;
        let grant = decided.grant.map(|g| g.id);
        match v.decision {
            Decision::Allow | Decision::Deny => {
                self.record_now(&s, v.assessment(), grant, policy_sha, streak)
                    .await
            }
            Decision::Ask => {
                let req = v
                    .confirm
                    .unwrap_or_else(|| tier_requirement(&policy, v.tier));
                let confirm = confirmers_for(v.tier, req.confirm);
                if confirm == Confirmers::Nobody {
                    let mut a = v.assessment();
                    a.decision = Decision::Allow;
                    return self.record_now(&s, a, None, policy_sha, streak).await;
                }
                self.open(&s, v.tier, v.reasons, req, confirm, policy_sha)
                    .await
            }
        }
    }

    /// The policy that judges `s`, and the working directory it is judged in: the policy of
    /// the submission's `cwd`, or of another directory its shell line runs a command in (the
    /// targets of its `cd`s, `airlock_shell::rundirs`) when that policy is stricter on it, so
    /// `cd proj && npm publish` sent from outside `proj` is judged by proj's project file.
    fn policy_where_it_runs(
        &self,
        s: &Submission,
    ) -> Result<(Arc<Policy>, Option<String>), airlock_policy::PolicyError> {
        let base = (self.inner.policy)(s.cwd.as_deref().map(Path::new))?;
        let (Action::Shell { command, .. }, Some(cwd)) = (&s.action, s.cwd.as_deref()) else {
            return Ok((base, s.cwd.clone()));
        };
        // the walk is only needed for a line that may change directory
        if !cwd.starts_with('/') || !(command.contains("cd") || command.contains("pushd")) {
            return Ok((base, s.cwd.clone()));
        }
        let rank = |p: &Policy, dir: &str| {
            let ctx = Context {
                agent: Some(s.agent.clone()),
                session: Some(s.session.clone()),
                channel: Some(s.channel),
                cwd: Some(dir.to_string()),
                ..Context::default()
            };
            let v = p.evaluate(&s.action, &ctx);
            (v.decision, v.tier)
        };
        let mut best_rank = rank(&base, cwd);
        let mut best = (base, s.cwd.clone());
        for dir in airlock_shell::rundirs::elsewhere(command, Path::new(cwd), None) {
            let p = (self.inner.policy)(Some(&dir))?;
            if Arc::ptr_eq(&p, &best.0) {
                continue;
            }
            let d = dir.display().to_string();
            let r = rank(&p, &d);
            if r > best_rank {
                best_rank = r;
                best = (p, Some(d));
            }
        }
        Ok(best)
    }

    /// The outcome of an earlier submission with the same request id, which must be the same
    /// agent, session and action: a request id never hands one action's outcome to another.
    async fn repeated(&self, r: &str, s: &Submission) -> Result<Option<Outcome>, ConfirmError> {
        let reused = || {
            ConfirmError::Invalid(format!(
                "request id {r:?} was already used for another agent, session or action"
            ))
        };
        if let Some(row) = self.db().approval_by_request(r).await? {
            if row.agent != s.agent
                || row.session != s.session
                || row.action_sha256 != action_sha256(&s.action)?
            {
                return Err(reused());
            }
            return Ok(Some(self.outcome_of_approval(&approval_of(&row)?).await?));
        }
        let Some(stored) = self.inner.ledger.receipt(&receipt_id(r)).await? else {
            return Ok(None);
        };
        let prior: Receipt = serde_json::from_str(&stored.body)
            .map_err(|e| ConfirmError::Internal(format!("receipt of {r} does not read: {e}")))?;
        let tool = match &s.action {
            Action::Tool { tool, .. } => Some(tool.clone()),
            _ => None,
        };
        if prior.principal != s.agent
            || prior.session != s.session
            || prior.action != s.action.kind()
            || prior.tool != tool
            || prior.args_sha256 != hash_value(&args_of(&s.action)?)?
        {
            return Err(reused());
        }
        // Decided at once before: the same answer, without using a grant again.
        Ok(Some(self.outcome(r).await?))
    }

    /// Records an allow or a deny at once and tells the agent.
    async fn record_now(
        &self,
        s: &Submission,
        a: Assessment,
        grant: Option<String>,
        policy_sha: String,
        streak: u32,
    ) -> Result<Outcome, ConfirmError> {
        let request_id = match &s.request_id {
            Some(r) => r.clone(),
            None => random_id()?,
        };
        let ctx = RecordContext {
            request_id: Some(request_id.clone()),
            session: s.session.clone(),
            principal: s.agent.clone(),
            policy_sha256: policy_sha,
            grant,
            approvers: Vec::new(),
            output_sha256: None,
        };
        let receipt = self
            .inner
            .ledger
            .append(request(&s.action, &a, &ctx)?)
            .await?;
        let denied = a.decision != Decision::Allow;
        let c = &self.inner.counters;
        inc(if denied { &c.denied } else { &c.allowed });
        let streak = if denied || streak > 0 {
            self.db()
                .denial_streak_record(&s.session, denied, self.now())
                .await?
        } else {
            0
        };
        Ok(immediate(
            request_id,
            a.decision,
            a.tier,
            a.reasons,
            Some(receipt.id),
            streak,
            self.inner.config.denial_streak,
        ))
    }

    /// Opens an approval (once per request id) and starts its routing.
    async fn open(
        &self,
        s: &Submission,
        tier: Tier,
        reasons: Vec<Finding>,
        req: Requirement,
        confirm: Confirmers,
        policy_sha: String,
    ) -> Result<Outcome, ConfirmError> {
        let id = format!("apr-{}", random_hex(12)?);
        let now = self.now();
        let timeout = ms(req.timeout.max(Duration::from_secs(1)));
        let action = serde_json::to_string(&s.action)
            .map_err(|e| ConfirmError::Invalid(format!("the action does not serialise: {e}")))?;
        let row = ApprovalRow {
            id: id.clone(),
            request_id: s.request_id.clone().unwrap_or_else(|| id.clone()),
            agent: s.agent.clone(),
            session: s.session.clone(),
            action,
            action_sha256: action_sha256(&s.action)?,
            tier: i64::from(tier.as_u8()),
            reasons: serde_json::to_string(&reasons)
                .map_err(|e| ConfirmError::Internal(e.to_string()))?,
            policy_sha256: policy_sha,
            confirm: confirm.as_str().into(),
            deliberate: req.deliberate,
            time_lock_ms: ms(req.time_lock),
            status: "pending".into(),
            llm: None,
            decided_by: None,
            by_person: false,
            approvers: None,
            scope: None,
            reason: None,
            grant_id: None,
            suggestion: None,
            created_ms: now,
            deadline_ms: now.saturating_add(timeout),
            decided_ms: None,
            effective_ms: None,
            receipt: None,
            answered_via: None,
        };
        let (stored, inserted) = self.db().approval_insert(&row).await?;
        let approval = approval_of(&stored)?;
        if inserted {
            inc(&self.inner.counters.pending_opened);
            self.inner
                .hub
                .publish(ApprovalEvent::Opened(id.clone()))
                .await;
            if confirm.person() {
                self.ask_person(approval.clone());
            }
            if confirm.llm() {
                let b = self.clone();
                tokio::spawn(async move { b.review(id).await });
            }
        }
        self.outcome_of_approval(&approval).await
    }
}

fn tier_requirement(policy: &Arc<Policy>, tier: Tier) -> Requirement {
    policy.settings.tiers[usize::from(tier.as_u8()).min(4)]
}

/// The policy hash a receipt carries when the policy itself could not be loaded or hashed.
fn fallback_hash() -> String {
    airlock_shell::policy_hash().to_string()
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

fn check(s: &Submission) -> Result<(), ConfirmError> {
    let bad = |what: &str, v: &str| {
        v.trim().is_empty()
            || v.len() > MAX_ID
            || v.chars().any(char::is_control)
            || what.is_empty()
    };
    if bad("agent", &s.agent) {
        return Err(ConfirmError::Invalid(format!(
            "agent must be 1-{MAX_ID} bytes without control characters"
        )));
    }
    if bad("session", &s.session) {
        return Err(ConfirmError::Invalid(format!(
            "session must be 1-{MAX_ID} bytes without control characters"
        )));
    }
    if let Some(r) = &s.request_id
        && bad("request_id", r)
    {
        return Err(ConfirmError::Invalid(format!(
            "request_id must be 1-{MAX_ID} bytes without control characters"
        )));
    }
    if s.request_id
        .as_deref()
        .is_some_and(|r| r.starts_with("approval:"))
    {
        return Err(ConfirmError::Invalid(
            "request ids starting with approval: are reserved for approval receipts".into(),
        ));
    }
    Ok(())
}
