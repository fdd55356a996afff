//! Routing by tier: which factors an ask needs, the LLM factor, and asking a person.
//!
//! - `none` (tier 0): allowed without asking.
//! - `llm`: the reviewer decides; approve allows, deny denies, and escalate, a timeout, an
//!   error, malformed output or no configured reviewer hand the approval to a person.
//! - `llm+human`: both must approve. The reviewer's deny denies at once; when the reviewer
//!   fails, the person decides alone and the approval records that the LLM factor failed.
//! - `human`: a person. Tier 4 always needs a person, whatever the policy's confirmers say.
//! - A decision for a person who may be in crisis: the review is recorded and shown, never
//!   applied (neither its approve nor its deny decides).

use airlock_core::Tier;
use airlock_grants::{GrantKind, NewGrant, Scope, Subject};
use airlock_policy::Confirmers;
use airlock_store::Transition;

use crate::broker::Broker;
use crate::model::{Approval, ApprovalEvent, Choice, LlmResult, LlmReview};
use crate::view::approval_of;

/// The confirmers an ask at `tier` gets: the policy's, except that nobody confirming is only
/// accepted at tier 0 and tier 4 always includes a person.
pub(crate) fn confirmers_for(tier: Tier, policy: Confirmers) -> Confirmers {
    match (tier, policy) {
        (Tier::Safe, c) => c,
        (_, Confirmers::Nobody) => Confirmers::Human,
        (Tier::Critical, Confirmers::Llm) => Confirmers::LlmAndHuman,
        (_, c) => c,
    }
}

impl Broker {
    /// Runs the LLM factor of approval `id` and applies what it decides.
    pub(crate) async fn review(&self, id: String) {
        if let Err(e) = self.review_inner(&id).await {
            tracing::warn!(error = %e, approval = %id, "LLM review not applied");
        }
    }

    async fn review_inner(&self, id: &str) -> Result<(), crate::ConfirmError> {
        let Some(row) = self.db().approval_get(id).await? else {
            return Ok(());
        };
        if row.status != "pending" || row.llm.is_some() {
            return Ok(());
        }
        let a = approval_of(&row)?;
        let mut review = match &self.inner.llm {
            Some(r) => {
                let _turn = self
                    .inner
                    .reviews
                    .acquire()
                    .await
                    .map_err(|e| crate::ConfirmError::Internal(e.to_string()))?;
                // what people decided before for the most similar actions; a store error
                // only costs the reviewer its examples
                let history = self
                    .db()
                    .approval_history(crate::precedent::HISTORY)
                    .await
                    .map(|rows| crate::precedent::from_rows(&rows))
                    .unwrap_or_default();
                let earlier = crate::precedent::select(&a.action, &history);
                r.review_with(&a.action, a.tier, &a.reasons, &earlier).await
            }
            None => LlmReview {
                model: String::new(),
                result: LlmResult::Unavailable,
                risk: None,
                rationale: String::new(),
                error: Some("no LLM reviewer is configured".into()),
                proposed_grant: None,
                ms: 0,
            },
        };
        self.inner.counters.llm_review(review.result.as_str());
        if review.result == LlmResult::Approve && a.confirm == Confirmers::Llm {
            review.proposed_grant = self.propose(&a, &review.model).await;
        }
        let json = serde_json::to_string(&review)
            .map_err(|e| crate::ConfirmError::Internal(e.to_string()))?;
        if !self.db().approval_set_llm(id, &json).await? {
            // A person answered first, or another node reviewed it.
            return Ok(());
        }
        let Some(row) = self.db().approval_get(id).await? else {
            return Ok(());
        };
        let llm = format!("llm:{}", review.model);
        let now = self.now();
        // A decision for a person who may be in crisis is a person's to make, either way: the
        // review is shown, never applied.
        let result = if crate::crisis::decides_for_person(&a.reasons) {
            LlmResult::Escalate
        } else {
            review.result
        };
        match (a.confirm, result) {
            (Confirmers::Llm, LlmResult::Approve) => {
                self.apply(
                    &row,
                    Transition {
                        to: "approved".into(),
                        decided_by: Some(llm.clone()),
                        approvers: serde_json::to_string(&[llm]).ok(),
                        scope: Some("once".into()),
                        reason: Some(review.rationale.clone()),
                        decided_ms: Some(now),
                        effective_ms: Some(now),
                        ..Transition::default()
                    },
                )
                .await?;
            }
            (_, LlmResult::Deny) => {
                self.apply(
                    &row,
                    Transition {
                        to: "denied".into(),
                        decided_by: Some(llm),
                        reason: Some(review.rationale.clone()),
                        decided_ms: Some(now),
                        ..Transition::default()
                    },
                )
                .await?;
            }
            (Confirmers::Llm, _) => {
                // Escalated: now a person decides.
                self.inner
                    .hub
                    .publish(ApprovalEvent::Opened(id.to_string()))
                    .await;
                self.ask_person(approval_of(&row)?);
            }
            _ => {
                // Both factors: the review is recorded; the person still decides.
                self.inner
                    .hub
                    .publish(ApprovalEvent::Opened(id.to_string()))
                    .await;
            }
        }
        Ok(())
    }

    /// The LLM may only propose a grant (inactive until a person confirms it).
    async fn propose(&self, a: &Approval, model: &str) -> Option<String> {
        let scope = Scope::exact(&a.action).ok()?;
        let mut g = NewGrant::new(
            Subject::new(a.agent.clone(), Some(a.session.clone())),
            scope,
            GrantKind::Session,
        );
        g.reason = format!("proposed by the LLM reviewer for approval {}", a.id);
        match self.inner.book.propose(g, model).await {
            Ok(g) => Some(g.id),
            Err(e) => {
                tracing::warn!(error = %e, approval = %a.id, "grant proposal failed");
                None
            }
        }
    }

    /// A person is asked: counted per session, and sent to the webhook channel if there is one.
    pub(crate) fn ask_person(&self, a: Approval) {
        self.inner.counters.prompt(&a.session);
        if self.inner.webhook.is_some() {
            let b = self.clone();
            tokio::spawn(async move { b.deliver(a).await });
        }
    }

    async fn deliver(&self, a: Approval) {
        let Some(w) = &self.inner.webhook else {
            return;
        };
        let mut links = Vec::new();
        let choices: &[Choice] = if a.code_required {
            // Approving needs the code, which a link cannot carry.
            &[Choice::Deny]
        } else {
            &[Choice::Approve, Choice::Deny]
        };
        if self.inner.config.public_url.is_some() {
            for c in choices {
                match self.link(&a.id, *c).await {
                    Ok(url) => links.push((*c, url)),
                    Err(e) => tracing::warn!(error = %e, approval = %a.id, "link not created"),
                }
            }
        }
        match w.send(&a, &links, self.now()).await {
            Ok(()) => crate::metrics::inc(&self.inner.counters.webhook_sent),
            Err(e) => {
                crate::metrics::inc(&self.inner.counters.webhook_failed);
                tracing::warn!(error = %e, approval = %a.id, "webhook delivery failed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nobody_only_at_tier_zero_and_a_person_at_tier_four() {
        assert_eq!(
            confirmers_for(Tier::Safe, Confirmers::Nobody),
            Confirmers::Nobody
        );
        assert_eq!(
            confirmers_for(Tier::Low, Confirmers::Nobody),
            Confirmers::Human
        );
        assert_eq!(confirmers_for(Tier::Low, Confirmers::Llm), Confirmers::Llm);
        assert_eq!(
            confirmers_for(Tier::Critical, Confirmers::Llm),
            Confirmers::LlmAndHuman
        );
        assert_eq!(
            confirmers_for(Tier::Critical, Confirmers::Nobody),
            Confirmers::Human
        );
        assert_eq!(
            confirmers_for(Tier::High, Confirmers::LlmAndHuman),
            Confirmers::LlmAndHuman
        );
    }
}
