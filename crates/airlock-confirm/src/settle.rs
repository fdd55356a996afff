//! Transitions and their consequences. A transition is one conditional UPDATE; only the caller
//! that changed the row acts: it counts the metric, extends or ends the session's denial
//! streak, records the final decision as exactly one receipt (request id `approval:<id>`, so
//! a repeated append after a crash is the same receipt), and wakes the waiters. Recovery and
//! the sweeper use the same steps for what a crash or the clock left undone.

use airlock_core::Assessment;
use airlock_grants::{GrantKind, ListFilter, NewGrant, Scope, Subject};
use airlock_ledger::ReasonRef;
use airlock_store::{ApprovalRow, LedgerStore, Transition};

use crate::ConfirmError;
use crate::broker::Broker;
use crate::metrics::inc;
use crate::model::{AnswerScope, ApprovalEvent, ApprovalStatus};
use crate::receipt::{RecordContext, request};
use crate::view::{SILENCE, approval_of, confirmers_of};

impl Broker {
    /// Applies `t` to `row` if it is still in the status it was read in; `true` when this call
    /// made the change (and did what follows from it).
    pub(crate) async fn apply(
        &self,
        row: &ApprovalRow,
        t: Transition,
    ) -> Result<bool, ConfirmError> {
        if !self
            .db()
            .approval_transition(&row.id, &row.status, &t)
            .await?
        {
            return Ok(false);
        }
        let c = &self.inner.counters;
        let to = ApprovalStatus::parse(&t.to);
        match to {
            Some(ApprovalStatus::Approved) => inc(&c.approved),
            Some(ApprovalStatus::Denied) => inc(&c.approval_denied),
            Some(ApprovalStatus::Expired) => inc(&c.expired),
            Some(ApprovalStatus::Cancelled) => inc(&c.cancelled),
            _ => {}
        }
        if let Some(s) = to.filter(|s| s.is_final()) {
            let denied = s != ApprovalStatus::Approved;
            if let Err(e) = self
                .db()
                .denial_streak_record(&row.session, denied, self.now())
                .await
            {
                tracing::warn!(error = %e, approval = %row.id, "denial streak not updated");
            }
            if let Err(e) = self.finish(&row.id).await {
                // The sweeper and the next start retry; the decision itself stands.
                tracing::warn!(error = %e, approval = %row.id, "receipt not recorded yet");
            }
        }
        self.inner
            .hub
            .publish(ApprovalEvent::Decided(row.id.clone()))
            .await;
        Ok(true)
    }

    /// Records the receipt of a final approval unless it has one; returns the receipt id.
    /// Safe to call any number of times from any node: the ledger answers a repeated request
    /// id with the receipt it already holds.
    pub(crate) async fn finish(&self, id: &str) -> Result<Option<String>, ConfirmError> {
        let Some(row) = self.db().approval_get(id).await? else {
            return Err(ConfirmError::NotFound(id.to_string()));
        };
        if !row.is_final() {
            return Ok(None);
        }
        if let Some(r) = &row.receipt {
            return Ok(Some(r.clone()));
        }
        let mut a = approval_of(&row)?;
        if a.status == ApprovalStatus::Approved
            && a.scope == Some(AnswerScope::Session)
            && a.grant.is_none()
            && row.by_person
        {
            a.grant = self.session_grant(&row, &a.action).await;
        }
        let approved = a.status == ApprovalStatus::Approved;
        let assessment = Assessment {
            decision: if approved {
                airlock_core::Decision::Allow
            } else {
                airlock_core::Decision::Deny
            },
            tier: a.tier,
            reasons: a.reasons.clone(),
        };
        // Who answered: the approvers of an approval, the person or reviewer who denied or
        // cancelled; nobody for an expiry (the clock is not an approver).
        let approvers = match a.status {
            ApprovalStatus::Approved => a.approvers.clone(),
            ApprovalStatus::Expired => Vec::new(),
            _ => a.decided_by.iter().cloned().collect(),
        };
        let ctx = RecordContext {
            request_id: Some(format!("approval:{}", a.id)),
            session: a.session.clone(),
            principal: a.agent.clone(),
            policy_sha256: a.policy_sha256.clone(),
            grant: a.grant.clone(),
            approvers,
            output_sha256: None,
        };
        let mut req = request(&a.action, &assessment, &ctx)?;
        req.receipt.reasons.push(ReasonRef {
            rule: format!("approval.{}", a.status.as_str()),
            code: a.end_code().as_str().to_string(),
        });
        if let Some(via) = &a.answered_via {
            // The channel and message the person answered in (a chat platform's ids).
            req.receipt.reasons.push(ReasonRef {
                rule: format!("approval.via.{via}"),
                code: a.end_code().as_str().to_string(),
            });
        }
        let receipt = self.inner.ledger.append(req).await?;
        self.db().approval_set_receipt(id, &receipt.id).await?;
        Ok(Some(receipt.id))
    }

    /// The person-created grant of a session-scope approval: this exact action, for the rest
    /// of the agent's session. A failure leaves the approval as once.
    async fn session_grant(
        &self,
        row: &ApprovalRow,
        action: &airlock_core::Action,
    ) -> Option<String> {
        let person = row.decided_by.clone().unwrap_or_default();
        let reason = format!("approved for the session in approval {}", row.id);
        // A crash after the grant was made but before it was linked: reuse it on repair.
        let filter = ListFilter {
            agent: Some(row.agent.clone()),
            session: Some(row.session.clone()),
            all: true,
        };
        if let Ok(existing) = self.inner.book.list(&filter).await
            && let Some(g) = existing.iter().find(|g| g.reason == reason)
        {
            let _ = self.db().approval_set_grant(&row.id, &g.id).await;
            return Some(g.id.clone());
        }
        let made = async {
            let scope = Scope::exact(action)?;
            let mut g = NewGrant::new(
                Subject::new(row.agent.clone(), Some(row.session.clone())),
                scope,
                GrantKind::Session,
            );
            g.reason = reason.clone();
            self.inner.book.create(g, &person).await
        };
        match made.await {
            Ok(g) => match self.db().approval_set_grant(&row.id, &g.id).await {
                Ok(_) => Some(g.id),
                Err(e) => {
                    tracing::warn!(error = %e, approval = %row.id, "grant not linked");
                    Some(g.id)
                }
            },
            Err(e) => {
                tracing::warn!(error = %e, approval = %row.id, "session grant not created");
                None
            }
        }
    }

    /// Expires `row` if its deadline passed, or makes a time-locked approval effective if its
    /// lock is over. `true` when this call changed it.
    pub(crate) async fn settle_due(&self, row: &ApprovalRow) -> Result<bool, ConfirmError> {
        let now = self.now();
        match row.status.as_str() {
            "pending" if row.deadline_ms <= now => {
                self.apply(
                    row,
                    Transition {
                        to: "expired".into(),
                        decided_by: Some("timeout".into()),
                        reason: Some(SILENCE.into()),
                        decided_ms: Some(now),
                        ..Transition::default()
                    },
                )
                .await
            }
            "locked" if row.effective_ms.is_some_and(|e| e <= now) => {
                self.apply(
                    row,
                    Transition {
                        to: "approved".into(),
                        ..Transition::default()
                    },
                )
                .await
            }
            _ => Ok(false),
        }
    }

    /// One pass of the sweeper: due approvals, and (`receipts`) final ones without a receipt.
    pub(crate) async fn sweep(&self, receipts: bool) -> Result<(), ConfirmError> {
        for row in self.db().approval_due(self.now()).await? {
            self.settle_due(&row).await?;
        }
        if receipts {
            for row in self.db().approval_without_receipt().await? {
                if let Err(e) = self.finish(&row.id).await {
                    tracing::warn!(error = %e, approval = %row.id, "receipt still not recorded");
                }
            }
        }
        Ok(())
    }

    /// At start: receipts a crash left unrecorded, approvals that expired while no broker ran,
    /// and LLM reviews that were in flight.
    pub(crate) async fn recover(&self) -> Result<(), ConfirmError> {
        self.sweep(true).await?;
        for row in self.db().approval_list_open(10_000).await? {
            let needs_llm = confirmers_of(&row.confirm).is_some_and(|c| c.llm());
            if row.status == "pending" && row.llm.is_none() && needs_llm {
                let b = self.clone();
                tokio::spawn(async move { b.review(row.id).await });
            }
        }
        Ok(())
    }
}
