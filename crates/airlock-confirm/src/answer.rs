//! People's answers: approve or deny (once or for the session), cancel, and the webhook's
//! one-time links. What is refused, and why: an agent token (even for another agent's action),
//! the approval's own agent, an answer bound to another action's hash, a second answer, a
//! tier-4 approval without its code. A time-locked approval is `locked` until it takes effect
//! and can be cancelled until then.

use std::time::Duration;

use airlock_core::Tier;
use airlock_policy::Confirmers;
use airlock_store::{ApprovalRow, Transition};

use crate::broker::Broker;
use crate::code::{MAX_CODE_ATTEMPTS, code_matches};
use crate::model::{Answer, AnswerScope, Approval, Choice, LlmResult, Principal, Role};
use crate::receipt::random_hex;
use crate::view::approval_of;
use crate::webhook::{nonce_of, token};
use crate::{ConfirmError, suggest};

impl Broker {
    /// A person's answer to approval `id`.
    pub async fn answer(&self, id: &str, a: Answer) -> Result<Approval, ConfirmError> {
        if a.by.role == Role::Agent {
            return Err(ConfirmError::Forbidden(
                "an agent token can never approve or deny anything, its own requests included"
                    .into(),
            ));
        }
        if a.by.name.trim().is_empty() {
            return Err(ConfirmError::Invalid(
                "the answer needs the approver's name".into(),
            ));
        }
        let row = self.row(id).await?;
        if a.by.name == row.agent {
            return Err(ConfirmError::Forbidden(format!(
                "{} is the agent that asked; it cannot answer its own approval",
                a.by.name
            )));
        }
        if let Some(h) = &a.action_sha256
            && !h.eq_ignore_ascii_case(&row.action_sha256)
        {
            return Err(ConfirmError::ActionMismatch {
                id: id.to_string(),
                expected: row.action_sha256.clone(),
                given: h.clone(),
            });
        }
        open_or_decided(&row)?;
        let approval = approval_of(&row)?;
        if a.decision == Choice::Approve {
            if row.deliberate {
                self.check_code(&row, a.code.as_deref()).await?;
            }
            if a.scope == AnswerScope::Session && approval.tier == Tier::Critical {
                return Err(ConfirmError::Invalid(
                    "a tier-4 action is approved once at a time; no session grant stands in for it"
                        .into(),
                ));
            }
            if a.scope == AnswerScope::Session
                && crate::crisis::decides_for_person(&approval.reasons)
            {
                return Err(ConfirmError::Invalid(
                    "a decision for a person who may be in crisis is approved once at a time; no session grant stands in for it"
                        .into(),
                ));
            }
        }
        let row = if a.decision == Choice::Approve && approval.confirm == Confirmers::LlmAndHuman {
            // Both factors: the reviewer's verdict comes first (its deny is final).
            let row = self.reviewed(id).await?;
            open_or_decided(&row)?;
            row
        } else {
            row
        };
        let now = self.now();
        let reason = Some(a.reason.trim().to_string()).filter(|r| !r.is_empty());
        let t = match a.decision {
            Choice::Deny => Transition {
                to: "denied".into(),
                decided_by: Some(a.by.name.clone()),
                by_person: true,
                scope: Some(a.scope.as_str().into()),
                reason,
                decided_ms: Some(now),
                via: a.via.clone(),
                ..Transition::default()
            },
            Choice::Approve => {
                let approval = approval_of(&row)?;
                let mut approvers = Vec::new();
                if let Some(r) = approval
                    .llm
                    .as_ref()
                    .filter(|r| r.result == LlmResult::Approve)
                {
                    approvers.push(format!("llm:{}", r.model));
                }
                approvers.push(a.by.name.clone());
                let earlier = self
                    .db()
                    .approval_count_person_approved(&row.agent, &row.action_sha256)
                    .await?;
                let limit = u64::from(self.inner.config.suggest_after);
                let suggestion = (limit > 0 && earlier + 1 >= limit)
                    .then(|| suggest::rule_text(&row.agent, &approval.action))
                    .flatten();
                let locked = row.time_lock_ms > 0;
                Transition {
                    to: if locked { "locked" } else { "approved" }.into(),
                    decided_by: Some(a.by.name.clone()),
                    by_person: true,
                    approvers: serde_json::to_string(&approvers).ok(),
                    scope: Some(a.scope.as_str().into()),
                    reason,
                    suggestion,
                    decided_ms: Some(now),
                    effective_ms: Some(now + row.time_lock_ms.max(0)),
                    via: a.via.clone(),
                    ..Transition::default()
                }
            }
        };
        if !self.apply(&row, t).await? {
            let now_row = self.row(id).await?;
            return Err(ConfirmError::AlreadyDecided {
                id: id.to_string(),
                status: now_row.status,
            });
        }
        self.approval(id).await
    }

    /// A tier-4 approval's code: right, or an error. A wrong code (not a missing one) counts;
    /// the `MAX_CODE_ATTEMPTS`th locks the approval out: it is denied by `LOCKOUT_BY`, which
    /// records its receipt with reason `CODE_LOCKOUT` and releases the waiting agent.
    async fn check_code(&self, row: &ApprovalRow, given: Option<&str>) -> Result<(), ConfirmError> {
        let given = given.map(str::trim).filter(|c| !c.is_empty());
        let Some(given) = given else {
            return Err(ConfirmError::BadCode(row.id.clone()));
        };
        if code_matches(&self.inner.code_key, &row.action_sha256, given) {
            return Ok(());
        }
        let Some(failures) = self.db().approval_code_failed(&row.id).await? else {
            // Decided meanwhile: say how.
            let now_row = self.row(&row.id).await?;
            open_or_decided(&now_row)?;
            return Err(ConfirmError::BadCode(row.id.clone()));
        };
        if failures < MAX_CODE_ATTEMPTS {
            return Err(ConfirmError::BadCode(row.id.clone()));
        }
        let t = Transition {
            to: "denied".into(),
            decided_by: Some(LOCKOUT_BY.into()),
            reason: Some(format!(
                "{failures} wrong confirmation codes were typed; the approval is locked out"
            )),
            decided_ms: Some(self.now()),
            ..Transition::default()
        };
        // Whoever's UPDATE wins, the approval is final now; a lost race is someone else's
        // decision, which `answer` reports next time. Either way this code opens nothing.
        self.apply(row, t).await?;
        Err(ConfirmError::CodeLockout(row.id.clone()))
    }

    /// Cancels an approval that has not taken effect (pending, or locked by its time lock).
    /// Approvers may cancel any; an agent only withdraws its own request.
    pub async fn cancel(
        &self,
        id: &str,
        by: &Principal,
        reason: &str,
    ) -> Result<Approval, ConfirmError> {
        let row = self.row(id).await?;
        if by.role == Role::Agent && by.name != row.agent {
            return Err(ConfirmError::Forbidden(
                "an agent may only withdraw its own request".into(),
            ));
        }
        if row.is_final() {
            return Err(ConfirmError::AlreadyDecided {
                id: id.to_string(),
                status: row.status,
            });
        }
        let t = Transition {
            to: "cancelled".into(),
            decided_by: Some(by.name.clone()),
            by_person: by.role != Role::Agent,
            reason: Some(reason.trim().to_string()).filter(|r| !r.is_empty()),
            decided_ms: Some(self.now()),
            ..Transition::default()
        };
        if !self.apply(&row, t).await? {
            let now_row = self.row(id).await?;
            return Err(ConfirmError::AlreadyDecided {
                id: id.to_string(),
                status: now_row.status,
            });
        }
        self.approval(id).await
    }

    /// Makes a signed one-time link answering approval `id` with `choice`; returns its URL
    /// (`{public_url}/v1/links/{token}`). Needs the webhook channel (its secret) and a public URL.
    pub async fn link(&self, id: &str, choice: Choice) -> Result<String, ConfirmError> {
        let (Some(w), Some(base)) = (&self.inner.webhook, &self.inner.config.public_url) else {
            return Err(ConfirmError::Invalid(
                "links need the webhook channel and a public URL".into(),
            ));
        };
        let row = self.row(id).await?;
        let nonce = random_hex(16)?;
        let ttl = i64::try_from(w.config.link_ttl.as_millis()).unwrap_or(i64::MAX);
        let expires = self.now().saturating_add(ttl).min(row.deadline_ms);
        self.db()
            .approval_link_insert(&nonce, id, choice.as_str(), expires)
            .await?;
        Ok(format!(
            "{}/v1/links/{}",
            base.trim_end_matches('/'),
            token(&w.config.secret, &nonce)
        ))
    }

    /// What a link would do, without spending it (for a confirmation page).
    pub async fn link_info(&self, token: &str) -> Result<(Approval, Choice), ConfirmError> {
        let nonce = self.link_nonce(token)?;
        let Some(l) = self.db().approval_link_get(nonce).await? else {
            return Err(ConfirmError::BadLink("unknown link".into()));
        };
        if l.used_ms.is_some() {
            return Err(ConfirmError::BadLink("the link was already used".into()));
        }
        if l.expires_ms <= self.now() {
            return Err(ConfirmError::BadLink("the link has expired".into()));
        }
        Ok((self.approval(&l.approval).await?, choice_of(&l.decision)?))
    }

    /// Spends a one-time link and answers as principal `webhook`.
    pub async fn answer_link(&self, token: &str) -> Result<Approval, ConfirmError> {
        let nonce = self.link_nonce(token)?;
        let Some(spent) = self.db().approval_link_spend(nonce, self.now()).await? else {
            return Err(ConfirmError::BadLink(
                "the link is unknown, expired or already used".into(),
            ));
        };
        let answer = Answer {
            by: Principal::new("webhook", Role::Approver),
            decision: choice_of(&spent.decision)?,
            scope: AnswerScope::Once,
            reason: "answered with a one-time webhook link".into(),
            code: None,
            action_sha256: None,
            via: None,
        };
        self.answer(&spent.approval, answer).await
    }

    fn link_nonce<'t>(&self, token: &'t str) -> Result<&'t str, ConfirmError> {
        let Some(w) = &self.inner.webhook else {
            return Err(ConfirmError::BadLink(
                "this broker has no webhook channel".into(),
            ));
        };
        nonce_of(&w.config.secret, token)
            .ok_or_else(|| ConfirmError::BadLink("bad signature".into()))
    }

    pub(crate) async fn row(&self, id: &str) -> Result<ApprovalRow, ConfirmError> {
        self.db()
            .approval_get(id)
            .await?
            .ok_or_else(|| ConfirmError::NotFound(id.to_string()))
    }

    /// The row once the LLM factor has answered or failed. A review that does not finish in
    /// its time (the node that ran it crashed, say) is recorded as failed.
    async fn reviewed(&self, id: &str) -> Result<ApprovalRow, ConfirmError> {
        let limit = self
            .inner
            .config
            .llm
            .as_ref()
            .map_or(Duration::from_secs(2), |l| {
                l.timeout + Duration::from_secs(2)
            });
        let start = tokio::time::Instant::now();
        loop {
            let row = self.row(id).await?;
            if row.llm.is_some() || row.status != "pending" {
                return Ok(row);
            }
            if start.elapsed() >= limit {
                let failed = crate::model::LlmReview {
                    model: self
                        .inner
                        .config
                        .llm
                        .as_ref()
                        .map(|l| l.model.clone())
                        .unwrap_or_default(),
                    result: LlmResult::Timeout,
                    risk: None,
                    rationale: String::new(),
                    error: Some("the review did not finish before the person answered".into()),
                    proposed_grant: None,
                    ms: u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
                };
                let json = serde_json::to_string(&failed)
                    .map_err(|e| ConfirmError::Internal(e.to_string()))?;
                self.db().approval_set_llm(id, &json).await?;
                continue;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Who "decided" an approval locked out by wrong codes.
pub const LOCKOUT_BY: &str = "airlock:code-lockout";

fn open_or_decided(row: &ApprovalRow) -> Result<(), ConfirmError> {
    if row.status == "pending" {
        Ok(())
    } else {
        Err(ConfirmError::AlreadyDecided {
            id: row.id.clone(),
            status: row.status.clone(),
        })
    }
}

fn choice_of(s: &str) -> Result<Choice, ConfirmError> {
    match s {
        "approve" => Ok(Choice::Approve),
        "deny" => Ok(Choice::Deny),
        other => Err(ConfirmError::Internal(format!(
            "stored link decision {other:?}"
        ))),
    }
}
