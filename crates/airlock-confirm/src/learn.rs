//! Learned grants: after a person approved the same kind of action by one agent several times
//! in a row (the kind is the action's shape, as the LLM reviewer's precedents see it: the
//! program and the words that say what it does, never values; a tool's name), airlock proposes
//! the narrowest grant covering those approvals, with an expiry: the exact action when every
//! approval was for the same one, else the command prefix the approved command lines share (a
//! program and at least one word). It stays a proposal until an approver accepts it (one tap
//! in chat); accepting creates the grant, recorded as a grant receipt naming the person. A
//! denial of the kind starts the count again; tier 4 and decisions for a person who may be in
//! crisis are never learned.

use airlock_core::{Action, Finding, Tier};
use airlock_grants::{Grant, GrantKind, ListFilter, NewGrant, Scope, Subject};
use airlock_store::ApprovalRow;

use crate::ConfirmError;
use crate::broker::Broker;
use crate::model::{Approval, ApprovalStatus, Principal, Role};
use crate::precedent::shape;

/// How many of the most recent decided approvals are searched for a run of the same kind.
pub const HISTORY: i64 = 500;
/// How a learned grant's reason starts (`airlock stats` counts their uses).
pub const LEARNED: &str = "learned:";

/// A grant airlock proposes after repeated approvals.
#[derive(Debug, Clone, PartialEq)]
pub struct Learned {
    pub agent: String,
    pub scope: Scope,
    /// Approvals of this kind by a person in a row, the newest included.
    pub approvals: u32,
    pub expires_ms: i64,
}

/// The narrowest scope covering every action of `actions`: the exact action when they are all
/// the same, else the command prefix their simple command lines share, without trailing
/// options, when it is a program and at least one word.
pub fn narrowest(actions: &[Action]) -> Option<Scope> {
    let first = actions.first()?;
    let h0 = airlock_grants::action_hash(first).ok()?;
    if actions
        .iter()
        .all(|a| airlock_grants::action_hash(a).ok().as_deref() == Some(h0.as_str()))
    {
        return Scope::exact(first).ok();
    }
    let mut prefix: Option<Vec<String>> = None;
    for a in actions {
        let Action::Shell { command, .. } = a else {
            return None;
        };
        let argv = airlock_shell::simple_argv(command)?;
        prefix = Some(match prefix {
            None => argv,
            Some(mut p) => {
                let n = p.iter().zip(&argv).take_while(|(x, y)| x == y).count();
                p.truncate(n);
                p
            }
        });
    }
    let mut argv = prefix?;
    while argv.last().is_some_and(|w| w.starts_with('-')) {
        argv.pop();
    }
    (argv.len() >= 2).then_some(Scope::CommandPrefix { argv })
}

/// Whether a decided approval row may count towards, or be, a learned grant.
fn learnable_row(r: &ApprovalRow) -> bool {
    let reasons: Vec<Finding> = serde_json::from_str(&r.reasons).unwrap_or_default();
    r.by_person
        && r.tier < i64::from(Tier::Critical.as_u8())
        && !r.deliberate
        && !crate::crisis::decides_for_person(&reasons)
}

impl Broker {
    /// The grant airlock proposes after approval `a`, if `a` was approved by a person and ends
    /// a run of at least `learn_after` approvals of its kind by a person for its agent.
    pub async fn learnable(&self, a: &Approval) -> Result<Option<Learned>, ConfirmError> {
        let n = self.inner.config.learn_after;
        if n == 0
            || a.status != ApprovalStatus::Approved
            || a.tier >= Tier::Critical
            || a.code_required
            || crate::crisis::decides_for_person(&a.reasons)
        {
            return Ok(None);
        }
        let kind = shape(&a.action);
        let rows = self.db().approval_history(HISTORY).await?;
        let mut run: Vec<(String, Action)> = Vec::new();
        for r in rows.iter().filter(|r| r.agent == a.agent) {
            let Ok(action) = serde_json::from_str::<Action>(&r.action) else {
                continue;
            };
            if shape(&action) != kind || !matches!(r.status.as_str(), "approved" | "denied") {
                continue;
            }
            if r.status != "approved" || !learnable_row(r) {
                // A denial (or an answer that was not a person's) ends the run.
                break;
            }
            run.push((r.id.clone(), action));
        }
        if !run.iter().any(|(id, _)| id == &a.id) || run.len() < n as usize {
            return Ok(None);
        }
        let approvals = u32::try_from(run.len()).unwrap_or(u32::MAX);
        let newest: Vec<Action> = run.into_iter().take(n as usize).map(|(_, a)| a).collect();
        let Some(scope) = narrowest(&newest) else {
            return Ok(None);
        };
        let ttl = i64::try_from(self.inner.config.learn_ttl.as_millis()).unwrap_or(i64::MAX);
        Ok(Some(Learned {
            agent: a.agent.clone(),
            scope,
            approvals,
            expires_ms: self.now().saturating_add(ttl),
        }))
    }

    /// An approver accepts the grant learned from approval `id`: it is created (recorded as a
    /// grant receipt naming them) for the agent, with the learned expiry. Accepting twice
    /// returns the grant made the first time.
    pub async fn accept_learned(&self, id: &str, by: &Principal) -> Result<Grant, ConfirmError> {
        if by.role == Role::Agent {
            return Err(ConfirmError::Forbidden(
                "an agent token can never create a grant for itself".into(),
            ));
        }
        let a = self.approval(id).await?;
        if by.name == a.agent {
            return Err(ConfirmError::Forbidden(format!(
                "{} is the agent the grant is for",
                by.name
            )));
        }
        let Some(l) = self.learnable(&a).await? else {
            return Err(ConfirmError::Invalid(format!(
                "approval {id} proposes no learned grant (not enough approvals of its kind in a row, a denial since, tier 4, or a decision for a person in crisis)"
            )));
        };
        let reason = format!(
            "{LEARNED} {} approvals of this kind by a person in a row, the last {id}",
            l.approvals
        );
        let filter = ListFilter {
            agent: Some(l.agent.clone()),
            session: None,
            all: false,
        };
        let now = self.now();
        if let Some(g) =
            self.inner.book.list(&filter).await?.into_iter().find(|g| {
                g.reason.starts_with(LEARNED) && g.scope == l.scope && g.is_usable_at(now)
            })
        {
            return Ok(g);
        }
        let mut g = NewGrant::new(
            Subject::new(l.agent.clone(), None),
            l.scope,
            GrantKind::Permanent,
        );
        g.expires_at = Some(l.expires_ms);
        g.reason = reason;
        crate::grant_log::create(&self.inner.book, self.ledger(), g, &by.name).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_narrowest_scope_of_a_run() {
        let same = vec![Action::shell("npm test"), Action::shell("npm test")];
        assert!(matches!(narrowest(&same), Some(Scope::Exact { .. })));
        let pushes = vec![
            Action::shell("git push origin feat-a"),
            Action::shell("git push origin feat-b"),
        ];
        assert_eq!(
            narrowest(&pushes),
            Some(Scope::CommandPrefix {
                argv: vec!["git".into(), "push".into(), "origin".into()]
            })
        );
        let flags = vec![
            Action::shell("cargo test -p a --locked"),
            Action::shell("cargo test -p b --locked"),
        ];
        assert_eq!(
            narrowest(&flags),
            Some(Scope::CommandPrefix {
                argv: vec!["cargo".into(), "test".into()]
            })
        );
        // only the program in common: too broad to learn
        assert_eq!(
            narrowest(&[Action::shell("rm a"), Action::shell("rm b")]),
            None
        );
        // not simple command lines
        assert_eq!(
            narrowest(&[Action::shell("ls | wc"), Action::shell("ls | sort")]),
            None
        );
    }
}
