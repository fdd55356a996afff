//! One decision as every surface makes it: the policy's verdict, then, for an ask, a grant of the
//! asking agent that covers the action, used atomically in the store. A deny is final (no grant
//! lifts it), and a tier-4 ask goes to a person every time (its confirmation is deliberate, so
//! no stored grant stands in for it), as does a decision for a person who may be in crisis.

use airlock_core::{Action, Decision, Finding, ReasonCode, Severity, Tier};
use airlock_grants::{Grant, GrantBook, GrantError, Subject};
use airlock_policy::{Context, Policy, PolicyVerdict};

/// The verdict and the grant that was used for it, if any.
#[derive(Debug)]
pub struct Decided {
    pub verdict: PolicyVerdict,
    pub grant: Option<Grant>,
}

pub async fn decide(
    policy: &Policy,
    book: Option<&GrantBook>,
    actor: &Subject,
    action: &Action,
    ctx: &Context,
) -> Result<Decided, GrantError> {
    let mut verdict = policy.evaluate(action, ctx);
    let grant = match book {
        Some(book)
            if verdict.decision == Decision::Ask
                && verdict.tier < Tier::Critical
                && !crate::crisis::decides_for_person(&verdict.reasons) =>
        {
            book.use_for(actor, action).await?
        }
        _ => None,
    };
    if let Some(g) = &grant {
        verdict.decision = Decision::Allow;
        verdict.decided_by = format!("grant:{}", g.id);
        verdict.confirm = None;
        verdict.reasons.insert(
            0,
            Finding::new(
                "grant.used",
                ReasonCode::GrantUsed,
                Decision::Allow,
                verdict.tier,
                Severity::Info,
                format!(
                    "allowed by grant {} ({}, {} of {} uses left)",
                    g.id,
                    g.scope.describe(),
                    g.remaining(),
                    g.max_uses
                ),
            ),
        );
    }
    Ok(Decided { verdict, grant })
}
