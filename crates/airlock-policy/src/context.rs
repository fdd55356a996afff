//! Context that counts, after the rules: an agent's tool bundle (before anything else decides),
//! then production, uploads to unknown hosts, behaviours and trusted directories, each leaving
//! its part of the risk score with its reason.

use airlock_core::{Action, Decision, Finding, ReasonCode, Severity, Tier};

use crate::Context;
use crate::eval::{Inspected, PolicyVerdict, Step, clip, deny_only};
use crate::file::SideEffects;
use crate::policy::Policy;
use crate::risk::{self as ctxrisk, ScorePart};

impl Policy {
    /// A bundle of tools for the agent (`[agents.NAME] tools`): anything outside it is denied,
    /// whatever else would decide, and no allow rule lifts it.
    pub(crate) fn apply_bundle(&self, action: &Action, ctx: &Context, ins: &mut Inspected) {
        if ins.crisis_support {
            return;
        }
        let name = match action {
            Action::Tool { tool, .. } => tool.as_str(),
            Action::Shell { .. } => "shell",
            Action::FileWrite { .. } => "write",
            Action::NetworkFetch { .. } => "fetch",
            Action::MessageSend { .. } => "message",
        };
        if self.settings.bundle_allows(ctx.agent.as_deref(), name) != Some(false) {
            return;
        }
        let agent = ctx.agent.as_deref().unwrap_or_default();
        ins.assessment = deny_only(
            Finding::new(
                "policy.agent_bundle",
                ReasonCode::ToolUndeclared,
                Decision::Deny,
                Tier::Medium,
                Severity::Medium,
                format!(
                    "the agent `{}` was given a tool bundle without `{}`, so it may not use it; use a tool from its bundle, or hand the task to an agent that has it",
                    clip(agent),
                    clip(name)
                ),
            )
            .with_remediation(format!(
                "Add it to `[agents.{}] tools` in the user policy if this agent should have it.",
                clip(agent)
            )),
        );
        ins.side_effects = SideEffects::Write;
    }

    /// Context that counts: production, uploads to unknown hosts, behaviours and trusted
    /// directories. Returns the score parts it adds.
    pub(crate) fn apply_context(
        &self,
        action: &Action,
        ctx: &Context,
        ins: &Inspected,
        v: &mut PolicyVerdict,
        trace: &mut Vec<Step>,
    ) -> Vec<ScorePart> {
        let s = &self.settings;
        let mut parts = Vec::new();
        if ins.crisis_support {
            return parts;
        }
        let production = ctxrisk::production_reason(s, ctx, &ins.commands);
        if let Some(why) = &production {
            if s.production_weight > 0 {
                parts.push(ScorePart {
                    part: "production".into(),
                    points: s.production_weight,
                    why: why.clone(),
                });
            }
            let min = Tier::try_from(s.production_min_tier).unwrap_or(Tier::High);
            let changes = ins.side_effects != SideEffects::Read
                && !(matches!(action, Action::Shell { .. })
                    && ins.complete
                    && !ins.commands.is_empty()
                    && v.decision == Decision::Allow
                    && ins
                        .commands
                        .iter()
                        .all(|c| c.read_only || c.wrapper || ctxrisk::looks_read_only(&c.text)));
            if changes
                && v.decision != Decision::Deny
                && (v.decision == Decision::Allow || v.tier < min)
            {
                let tier = v.tier.max(min);
                v.raise(
                    trace,
                    "production",
                    "policy.production".into(),
                    Finding::new(
                        "policy.production",
                        ReasonCode::ProductionChange,
                        Decision::Ask,
                        tier,
                        Severity::High,
                        format!("{why}, and this action changes something there; a person must confirm it. Try it outside production first, or ask the user"),
                    ),
                );
            }
        }
        let trusted = if production.is_none() {
            ctxrisk::trusted_dir(s, ctx)
        } else {
            None
        };
        let unknown = if trusted.is_none() {
            ctxrisk::unknown_upload_hosts(s, ctx, action, &ins.commands)
        } else {
            Vec::new()
        };
        if !unknown.is_empty() && v.decision != Decision::Deny {
            let list = unknown.join(", ");
            parts.push(ScorePart {
                part: "unknown_host".into(),
                points: s.weight(Severity::Medium),
                why: format!("uploads to {list}, which the project's known hosts do not name"),
            });
            if v.decision == Decision::Allow || v.tier < Tier::Medium {
                let tier = v.tier.max(Tier::Medium);
                v.raise(
                    trace,
                    "hosts",
                    "policy.unknown_host".into(),
                    Finding::new(
                        "policy.unknown_host",
                        ReasonCode::UnknownHost,
                        Decision::Ask,
                        tier,
                        Severity::Medium,
                        format!("this sends data to {}, a host this project does not use ([hosts] known, past approvals); a person must confirm it. If the host is expected, the approval can add it", clip(&list)),
                    )
                    .with_remediation("Check the host; approving with a grant adds it to the project's known hosts."),
                );
            }
        }
        if let Some(host) = ctxrisk::unlisted_fetch_host(s, ctx, action)
            && v.decision != Decision::Deny
            && (v.decision == Decision::Allow || v.tier < Tier::Medium)
        {
            let tier = v.tier.max(Tier::Medium);
            v.raise(
                trace,
                "hosts",
                "policy.fetch_unlisted_host".into(),
                Finding::new(
                    "policy.fetch_unlisted_host",
                    ReasonCode::UnknownHost,
                    Decision::Ask,
                    tier,
                    Severity::Medium,
                    format!("this fetches from {}, which the hosts this project's agents may read ([hosts] fetch) do not name; a person must confirm it. Fetch from a listed host, or ask the user", clip(&host)),
                )
                .with_remediation("Check the host; approving adds it to the project's known hosts, or list it under [hosts] fetch."),
            );
        }
        let sent = ctxrisk::secrets_to_network(action);
        if !sent.is_empty()
            && v.decision != Decision::Deny
            && (v.decision == Decision::Allow || v.tier < Tier::High)
        {
            let tier = v.tier.max(Tier::High);
            v.raise(
                trace,
                "privacy",
                "policy.secret_to_network".into(),
                Finding::new(
                    "policy.secret_to_network",
                    ReasonCode::SecretToNetwork,
                    Decision::Ask,
                    tier,
                    Severity::High,
                    format!("this sends what looks like a secret ({}) to a network destination in its arguments; a person must confirm it. Reference the secret by name (an environment variable the tool reads) instead of its value", clip(&sent.join(", "))),
                )
                .with_remediation("If the value is a real credential that already left, rotate it."),
            );
        }
        let tool_writes =
            matches!(action, Action::Tool { .. }) && ins.side_effects != SideEffects::Read;
        let ev = ctxrisk::evidence(
            action,
            ctx,
            &ins.assessment.reasons,
            &ins.commands,
            tool_writes,
        );
        for (name, weight, why) in ctxrisk::behaviours(s, &ev, action) {
            parts.push(ScorePart {
                part: format!("behaviour.{name}"),
                points: weight,
                why: why.clone(),
            });
            trace.push(Step {
                layer: "behaviour".into(),
                rule: format!("behaviour.{name} +{weight}"),
                decision: v.decision,
                effect: "weighed".into(),
            });
            // on a denial the score decides nothing: the part is kept, the finding would be noise
            if v.decision == Decision::Deny {
                continue;
            }
            v.reasons.push(Finding::new(
                format!("behaviour.{name}"),
                ReasonCode::RiskBehaviour,
                Decision::Allow,
                v.tier,
                Severity::Medium,
                why,
            ));
        }
        if let Some(dir) = trusted
            && v.decision == Decision::Allow
            && v.tier == Tier::Low
            && parts.is_empty()
        {
            v.tier = Tier::Safe;
            trace.push(Step {
                layer: "trusted".into(),
                rule: format!("trusted_dirs {dir}"),
                decision: v.decision,
                effect: "tier lowered to 0: no review".into(),
            });
        }
        parts
    }
}
