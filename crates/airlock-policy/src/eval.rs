//! Evaluation: an action and its context in, a verdict out. The built-in inspection (shell
//! analysis, sensitive paths, tool declarations and schemas) gives a first decision; the user
//! layer's rules may loosen it where loosening is safe or tighten it; project and managed rules
//! only tighten; then side-effect profiles, crisis mode and the risk score. The trace records
//! every step, so `airlock policy explain` can say which rule and layer decided.

use std::path::{Component, Path, PathBuf};

use airlock_core::{Action, Assessment, Decision, Finding, ReasonCode, Severity, Tier};
use serde::Serialize;

use crate::file::{Confirmers, Profile, SideEffects};
use crate::layer::{LayerKind, Rule, Tool};
use crate::pattern::{Matcher, hosts_in, url_host};
use crate::policy::Policy;
use crate::risk::ScorePart;
use crate::schema::{self, Pinned};
use crate::tiers::{Channel, Requirement};

/// Who asks, from where, in what state.
#[derive(Debug, Clone, Default)]
pub struct Context {
    pub agent: Option<String>,
    pub session: Option<String>,
    pub channel: Option<Channel>,
    /// The working directory relative paths are resolved against.
    pub cwd: Option<String>,
    /// The workspace root for the workspace-write profile (defaults to `cwd`).
    pub workspace: Option<String>,
    pub home: Option<String>,
    /// The session's own profile (can only narrow the agent's).
    pub session_profile: Option<Profile>,
    /// The context is production even if the policy does not say so.
    pub production: bool,
    /// The session is in crisis mode.
    pub crisis: bool,
    /// Denials in this session recently (the caller decides the window).
    pub recent_denials: u32,
    /// The environment's name (`AIRLOCK_ENV`), for `[production] environments`.
    pub environment: Option<String>,
    /// The current kube context, for `[production] kube_contexts`.
    pub kube_context: Option<String>,
    /// The git branch checked out in `cwd`, for `[production] git_branches`.
    pub git_branch: Option<String>,
    /// The active cloud profile or project, for `[production] cloud_profiles`.
    pub cloud_profile: Option<String>,
    /// Hosts past approved actions of this project used (domain patterns), added to
    /// `[hosts] known` by the caller.
    pub known_hosts: Vec<String>,
    /// Hosts the project's own files and git remotes name (`project_hosts`), exact names.
    /// `Some` (even empty) turns the unknown-host check on without `[hosts] known`: the action
    /// runs in a project, and an upload anywhere else is not part of its work.
    pub project_hosts: Option<Vec<String>>,
    /// airlock's data directory when it is not the default one (`AIRLOCK_DATA_DIR`): its secrets
    /// are guarded from file tools (`guard_secrets`).
    pub data_dir: Option<String>,
}

/// One step of the evaluation, for explanations.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// `builtin`, `user`, `project`, `managed`, or the check (`profile`, `crisis`, `risk`).
    pub layer: String,
    pub rule: String,
    pub decision: Decision,
    /// What it did: `decided`, `tightened`, `loosened`, `kept`, or why it was ignored.
    pub effect: String,
}

/// The outcome.
#[derive(Debug, Clone, Serialize)]
pub struct PolicyVerdict {
    pub decision: Decision,
    pub tier: Tier,
    pub reasons: Vec<Finding>,
    /// The rule or check that set the final decision.
    pub decided_by: String,
    pub profile: Profile,
    pub score: u32,
    /// Where the score's points came from.
    pub score_parts: Vec<crate::risk::ScorePart>,
    /// What confirming takes, when the decision is ask.
    pub confirm: Option<Requirement>,
    pub trace: Vec<Step>,
}

impl PolicyVerdict {
    /// A later check (profile, crisis, risk) raises the decision: its finding goes first and
    /// the step is traced.
    pub(crate) fn raise(&mut self, trace: &mut Vec<Step>, layer: &str, rule: String, f: Finding) {
        self.decision = self.decision.max(f.decision);
        self.tier = self.tier.max(f.tier);
        self.decided_by = f.rule_id.clone();
        trace.push(Step {
            layer: layer.into(),
            rule,
            decision: f.decision,
            effect: "tightened".into(),
        });
        self.reasons.insert(0, f);
    }

    pub fn assessment(&self) -> Assessment {
        Assessment {
            decision: self.decision,
            tier: self.tier,
            reasons: self.reasons.clone(),
        }
    }
}

/// Codes whose finding no allow rule may override: what was not analysed, hard denials of
/// critical actions, and failed argument checks.
fn unloosenable(f: &Finding) -> bool {
    (f.decision == Decision::Deny && f.tier == Tier::Critical)
        || matches!(
            f.code,
            ReasonCode::ParseError
                | ReasonCode::DynamicCode
                | ReasonCode::DecodedPayload
                | ReasonCode::InputTooLarge
                | ReasonCode::NestingTooDeep
                | ReasonCode::TerminalDeception
                | ReasonCode::NulByte
                | ReasonCode::ConfusableCommand
                | ReasonCode::AnalysisTimeout
                | ReasonCode::InternalError
                | ReasonCode::MalformedInput
                | ReasonCode::ToolUndeclared
                | ReasonCode::SchemaViolation
                | ReasonCode::SchemaMissing
                | ReasonCode::SchemaPinMismatch
        )
}

/// What the built-in inspection found, plus what rules need to match.
pub(crate) struct Inspected {
    pub(crate) assessment: Assessment,
    pub(crate) commands: Vec<airlock_shell::Ran>,
    pub(crate) complete: bool,
    /// Normalised whole line (shell) for rules written over pipelines.
    pub(crate) line: String,
    pub(crate) path: Option<String>,
    pub(crate) host: Option<String>,
    pub(crate) tool: Option<String>,
    pub(crate) side_effects: SideEffects,
    /// A support tool in crisis mode: never gated.
    pub(crate) crisis_support: bool,
    pub(crate) home: Option<String>,
    pub(crate) workspace: Option<String>,
}

impl Policy {
    /// Decides on one action. Never fails: what cannot be decided denies.
    pub fn evaluate(&self, action: &Action, ctx: &Context) -> PolicyVerdict {
        let profile = self
            .settings
            .profile_for(ctx.agent.as_deref(), ctx.session_profile);
        let mut trace = Vec::new();
        let mut ins = self.inspect(action, ctx);
        self.apply_bundle(action, ctx, &mut ins);
        let mut v = PolicyVerdict {
            decision: ins.assessment.decision,
            tier: ins.assessment.tier,
            reasons: ins.assessment.reasons.clone(),
            decided_by: ins
                .assessment
                .reasons
                .first()
                .map(|f| f.rule_id.clone())
                .unwrap_or_else(|| "builtin:default".into()),
            profile,
            score: 0,
            score_parts: Vec::new(),
            confirm: None,
            trace: Vec::new(),
        };
        trace.push(Step {
            layer: "builtin".into(),
            rule: v.decided_by.clone(),
            decision: v.decision,
            effect: "decided".into(),
        });
        if ins.crisis_support {
            v.trace = trace;
            return v;
        }
        // on a shell line, findings about what the commands do beyond their names (a redirect
        // into a sensitive file, inline code, an expansion that may reach `/`) are not the
        // command an allow rule names, so no allow rule overrides them
        let shell = matches!(action, Action::Shell { .. });
        let locked = ins.assessment.reasons.iter().any(|f| {
            unloosenable(f)
                || (shell
                    && matches!(
                        f.code,
                        ReasonCode::SensitivePath
                            | ReasonCode::InlineCode
                            | ReasonCode::UnsafeExpansion
                    ))
        });
        for layer in &self.layers {
            let Some((rule, decision)) = self.layer_outcome(&layer.rules, &ins) else {
                continue;
            };
            let qid = rule.qualified_id();
            let effect = if decision > v.decision {
                v.decision = decision;
                v.tier = v.tier.max(rule.tier.unwrap_or(default_tier(decision)));
                v.decided_by = qid.clone();
                v.reasons.insert(0, rule_finding(rule, decision));
                "tightened".to_string()
            } else if decision == v.decision {
                // The same decision at a higher tier is still a tightening (a stronger
                // confirmation, a shorter timeout), which every layer may make.
                let tier = rule.tier.unwrap_or(default_tier(decision));
                if decision > Decision::Allow {
                    v.reasons.push(rule_finding(rule, decision));
                }
                if decision > Decision::Allow && tier > v.tier {
                    v.tier = tier;
                    v.decided_by = qid.clone();
                    "tier raised".to_string()
                } else {
                    "kept".to_string()
                }
            } else if layer.kind.tightens_only() {
                "ignored: this layer only tightens".to_string()
            } else if layer.kind == LayerKind::User && !self.settings.user_may_allow {
                "ignored: the managed policy forbids user allow rules".to_string()
            } else if locked {
                "ignored: the built-in finding cannot be overridden (not analysable, critical, or a failed argument check)".to_string()
            } else {
                v.decision = decision;
                v.tier = rule.tier.unwrap_or(default_tier(decision));
                v.decided_by = qid.clone();
                // the overridden findings stay visible, after the deciding rule
                v.reasons.insert(0, rule_finding(rule, decision));
                "loosened".to_string()
            };
            trace.push(Step {
                layer: layer.kind.as_str().into(),
                rule: qid,
                decision,
                effect,
            });
        }
        self.apply_profile(action, ctx, &ins, profile, &mut v, &mut trace);
        self.apply_crisis(action, ctx, &mut v, &mut trace);
        let parts = self.apply_context(action, ctx, &ins, &mut v, &mut trace);
        self.apply_risk(ctx, parts, &mut v, &mut trace);
        if v.decision == Decision::Ask {
            let mut req = self.settings.requirement(v.tier);
            if v.reasons.iter().any(|f| {
                matches!(
                    f.code,
                    ReasonCode::RiskThreshold
                        | ReasonCode::CrisisDecision
                        | ReasonCode::ProductionChange
                )
            }) {
                req.confirm = crate::tiers::stronger(req.confirm, Confirmers::Human);
            }
            v.confirm = Some(req);
        }
        v.trace = trace;
        v
    }

    /// The strictest rule of one layer that applies, with its decision.
    fn layer_outcome<'r>(
        &self,
        rules: &'r [Rule],
        ins: &Inspected,
    ) -> Option<(&'r Rule, Decision)> {
        let mut best: Option<(&Rule, Decision)> = None;
        for r in rules {
            let hit = if r.decision == Decision::Allow {
                self.allow_applies(rules, r, ins)
            } else {
                self.restrict_applies(r, ins)
            };
            if hit && best.is_none_or(|(_, d)| r.decision > d) {
                best = Some((r, r.decision));
            }
        }
        best
    }

    /// Ask and deny rules match when any command (or the whole line) matches.
    fn restrict_applies(&self, r: &Rule, ins: &Inspected) -> bool {
        match &r.matcher {
            Matcher::AnyShell => ins.tool.is_none() && !ins.line.is_empty(),
            Matcher::Shell(p) => {
                !ins.line.is_empty()
                    && (ins.commands.iter().any(|c| p.matches(&c.text)) || p.matches(&ins.line))
            }
            Matcher::Tool(g) => ins.tool.as_deref().is_some_and(|t| g.matches(t)),
            Matcher::Write(p) => ins.path.as_deref().is_some_and(|path| {
                p.resolve(ins.home.as_deref(), ins.workspace.as_deref())
                    .is_some_and(|m| m.is_match(path))
            }),
            Matcher::Network(d) => {
                ins.host.as_deref().is_some_and(|h| d.matches(h))
                    || ins
                        .commands
                        .iter()
                        .any(|c| hosts_in(&c.text).iter().any(|h| d.matches(h)))
            }
        }
    }

    /// An allow rule applies when it matches and, for a shell line, every command in the line
    /// is read-only, a transparent wrapper, or matched by some allow rule of the same layer.
    fn allow_applies(&self, rules: &[Rule], r: &Rule, ins: &Inspected) -> bool {
        match &r.matcher {
            Matcher::AnyShell | Matcher::Shell(_) => {
                if ins.tool.is_some() || ins.line.is_empty() || !ins.complete {
                    return false;
                }
                let allows = |text: &str| {
                    rules.iter().any(|a| {
                        a.decision == Decision::Allow
                            && match &a.matcher {
                                Matcher::AnyShell => true,
                                Matcher::Shell(p) => p.matches(text),
                                _ => false,
                            }
                    })
                };
                let this = |text: &str| match &r.matcher {
                    Matcher::AnyShell => true,
                    Matcher::Shell(p) => p.matches(text),
                    _ => false,
                };
                ins.commands.iter().any(|c| this(&c.text))
                    && ins
                        .commands
                        .iter()
                        .all(|c| c.read_only || c.wrapper || allows(&c.text))
            }
            _ => self.restrict_applies(r, ins),
        }
    }

    fn inspect(&self, action: &Action, ctx: &Context) -> Inspected {
        let mut ins = Inspected {
            assessment: Assessment::allow(),
            commands: Vec::new(),
            complete: false,
            line: String::new(),
            path: None,
            host: None,
            tool: None,
            side_effects: SideEffects::Write,
            crisis_support: false,
            home: ctx.home.clone(),
            workspace: ctx
                .workspace
                .as_deref()
                .or(ctx.cwd.as_deref())
                .map(|w| resolve(w, None, ctx.home.as_deref())),
        };
        match action {
            Action::Shell { command, .. } => {
                let a = match airlock_shell::Analyser::builtin() {
                    Ok(an) => an.analyse_full(command, true),
                    Err(e) => {
                        ins.assessment =
                            internal(&format!("the built-in rule packs failed to load ({e})"));
                        return ins;
                    }
                };
                ins.assessment = a.assessment;
                ins.commands = a.commands;
                ins.complete = a.complete;
                ins.line = command.split_whitespace().collect::<Vec<_>>().join(" ");
                let read_only =
                    ins.complete && ins.commands.iter().all(|c| c.read_only || c.wrapper);
                ins.side_effects = if read_only {
                    SideEffects::Read
                } else {
                    SideEffects::Write
                };
            }
            Action::FileWrite { path, .. } => {
                let resolved = resolve(path, ctx.cwd.as_deref(), ctx.home.as_deref());
                let findings =
                    airlock_shell::paths::write_target_finding(&resolved, ctx.home.as_deref())
                        .into_iter()
                        .collect();
                let mut a = Assessment::from_findings(findings, Decision::Allow);
                a.tier = a.tier.max(Tier::Low);
                ins.assessment = a;
                ins.path = Some(resolved);
            }
            Action::NetworkFetch { url, method } => {
                ins.host = url_host(url);
                let m = method.to_ascii_uppercase();
                let mut a = Assessment::allow();
                if ins.host.is_none() {
                    a.push(Finding::new(
                        "policy.bad_url",
                        ReasonCode::MalformedInput,
                        Decision::Deny,
                        Tier::Medium,
                        Severity::Medium,
                        format!("`{}` is not an absolute URL with a host", clip(url)),
                    ));
                } else if crate::pattern::is_read_method(&m) {
                    a.tier = Tier::Low;
                    ins.side_effects = SideEffects::Read;
                } else {
                    a.push(Finding::new(
                        "policy.network_write",
                        ReasonCode::PolicyRule,
                        Decision::Ask,
                        Tier::Medium,
                        Severity::Medium,
                        format!("a {m} request changes something on another system; a person must confirm it"),
                    ));
                    ins.side_effects = SideEffects::External;
                }
                if ins.host.is_some() {
                    for f in airlock_shell::fetch::fetch_findings(url) {
                        a.push(f);
                    }
                }
                ins.assessment = a;
            }
            Action::MessageSend { channel, .. } => {
                ins.side_effects = SideEffects::External;
                ins.assessment = Assessment::from_findings(
                    vec![Finding::new(
                        "policy.message_send",
                        ReasonCode::PolicyRule,
                        Decision::Ask,
                        Tier::Medium,
                        Severity::Medium,
                        format!(
                            "sending a message on `{}` reaches people; a person must confirm it",
                            clip(channel)
                        ),
                    )],
                    Decision::Allow,
                );
            }
            Action::Tool { tool, arguments } => {
                ins.tool = Some(tool.clone());
                self.inspect_tool(tool, arguments, ctx, &mut ins);
                let dirs =
                    crate::guard_secrets::data_dirs(ctx.data_dir.as_deref(), ctx.home.as_deref());
                if let Some(f) = crate::guard_secrets::finding(
                    tool,
                    arguments,
                    ctx.cwd.as_deref(),
                    ctx.home.as_deref(),
                    &dirs,
                ) {
                    ins.assessment.push(f);
                }
                // the agents' web-fetch tools, when called by name (REST tool calls)
                let fetch = crate::pattern::is_fetch_tool(tool);
                if let Some(url) = arguments
                    .get("url")
                    .and_then(|u| u.as_str())
                    .filter(|_| fetch)
                {
                    for f in airlock_shell::fetch::fetch_findings(url) {
                        ins.assessment.push(f);
                    }
                }
            }
        }
        ins
    }

    fn inspect_tool(
        &self,
        tool: &str,
        args: &serde_json::Value,
        ctx: &Context,
        ins: &mut Inspected,
    ) {
        if ctx.crisis && self.settings.is_crisis_support(tool) {
            ins.crisis_support = true;
            ins.side_effects = SideEffects::Read;
            ins.assessment = Assessment::from_findings(
                vec![Finding::new(
                    "crisis.support",
                    ReasonCode::CrisisSupport,
                    Decision::Allow,
                    Tier::Safe,
                    Severity::Info,
                    "crisis support is never gated",
                )],
                Decision::Allow,
            );
            return;
        }
        let specs: Vec<&Tool> = self
            .layers
            .iter()
            .flat_map(|l| l.tools.iter())
            .filter(|t| t.name.matches(tool))
            .collect();
        let declared = specs.iter().any(|t| t.layer != LayerKind::Project)
            || (ctx.crisis && self.settings.is_crisis_decision(tool));
        if !declared {
            ins.assessment = deny_only(Finding::new(
                "policy.tool_undeclared",
                ReasonCode::ToolUndeclared,
                Decision::Deny,
                Tier::Medium,
                Severity::Medium,
                format!("the tool `{}` is not declared in the airlock policy, so it is denied; use a declared tool, or ask the user to declare it", clip(tool)),
            ).with_remediation("Declare it under [[tools]] in the user or managed policy (with a pinned schema if it takes arguments that matter)."));
            return;
        }
        // arguments first: nothing else is looked at for a call that fails its schema
        let mut any_schema = false;
        for t in &specs {
            match &t.args {
                None => {}
                Some(Pinned::Ready { validator, .. }) => {
                    any_schema = true;
                    let bad = schema::violations(validator, args, 5);
                    if !bad.is_empty() {
                        ins.assessment = deny_only(Finding::new(
                            "policy.schema_violation",
                            ReasonCode::SchemaViolation,
                            Decision::Deny,
                            Tier::Medium,
                            Severity::Medium,
                            format!(
                                "the arguments of `{}` do not match its pinned schema ({} policy): {}; send only the fields the schema names, with the right types",
                                clip(tool),
                                t.layer.as_str(),
                                clip(&bad.join("; "))
                            ),
                        ));
                        return;
                    }
                }
                Some(Pinned::PinMismatch { expected, actual }) => {
                    ins.assessment = deny_only(Finding::new(
                        "policy.schema_pin_mismatch",
                        ReasonCode::SchemaPinMismatch,
                        Decision::Deny,
                        Tier::High,
                        Severity::High,
                        format!(
                            "the schema of `{}` has SHA-256 {actual}, but the {} policy pins {expected}; the tool is denied until the pin is updated",
                            clip(tool),
                            t.layer.as_str()
                        ),
                    ));
                    return;
                }
                Some(Pinned::Invalid(why)) => {
                    ins.assessment = deny_only(Finding::new(
                        "policy.schema_missing",
                        ReasonCode::SchemaMissing,
                        Decision::Deny,
                        Tier::Medium,
                        Severity::Medium,
                        format!(
                            "the schema of `{}` cannot be used ({why}); the tool is denied",
                            clip(tool)
                        ),
                    ));
                    return;
                }
            }
        }
        if !any_schema && specs.iter().any(|t| t.spec.require_schema) {
            ins.assessment = deny_only(Finding::new(
                "policy.schema_missing",
                ReasonCode::SchemaMissing,
                Decision::Deny,
                Tier::Medium,
                Severity::Medium,
                format!(
                    "the tool `{}` requires an argument schema and none is configured; it is denied",
                    clip(tool)
                ),
            ));
            return;
        }
        // the declaration's decision: the user's replaces the built-in one, project and
        // managed declarations only tighten
        let mut decision = Decision::Allow;
        let mut tier = Tier::Low;
        let mut by: Option<&Tool> = None;
        for t in &specs {
            let d = t.spec.decision.unwrap_or(Decision::Allow);
            let ti = t
                .spec
                .tier
                .and_then(|x| Tier::try_from(x).ok())
                .unwrap_or(default_tier(d));
            if t.layer.tightens_only() {
                if d >= decision {
                    decision = d;
                    tier = tier.max(ti);
                    by = Some(t);
                }
            } else {
                decision = d;
                tier = ti;
                by = Some(t);
            }
            if let Some(s) = t.spec.side_effects {
                ins.side_effects = if t.layer.tightens_only() {
                    ins.side_effects.max(s)
                } else {
                    s
                };
            }
        }
        let layer = by.map(|t| t.layer.as_str()).unwrap_or("builtin");
        let message = by
            .and_then(|t| t.spec.message.clone())
            .unwrap_or_else(|| match decision {
                Decision::Allow => format!("`{}` is declared in the {layer} policy", clip(tool)),
                Decision::Ask => format!(
                    "the {layer} policy asks a person before `{}` runs",
                    clip(tool)
                ),
                Decision::Deny => format!("the {layer} policy denies `{}`", clip(tool)),
            });
        let mut a = Assessment::from_findings(
            vec![Finding::new(
                format!(
                    "{layer}:tool:{}",
                    by.map(|t| t.spec.name.as_str()).unwrap_or(tool)
                ),
                ReasonCode::PolicyRule,
                decision,
                tier,
                if decision == Decision::Allow {
                    Severity::Info
                } else {
                    Severity::Medium
                },
                message,
            )],
            Decision::Allow,
        );
        a.tier = tier;
        ins.assessment = a;
    }

    fn apply_profile(
        &self,
        action: &Action,
        ctx: &Context,
        ins: &Inspected,
        profile: Profile,
        v: &mut PolicyVerdict,
        trace: &mut Vec<Step>,
    ) {
        let (decision, tier, why) = match profile {
            Profile::Full => return,
            Profile::ReadOnly => {
                if ins.side_effects == SideEffects::Read {
                    return;
                }
                let what = match action {
                    Action::Shell { .. } => "a command that is not on the read-only list",
                    Action::Tool { .. } => "a tool not declared as read-only (side_effects = \"read\")",
                    Action::FileWrite { .. } => "a file write",
                    Action::NetworkFetch { .. } => "a request that changes something",
                    Action::MessageSend { .. } => "sending a message",
                };
                (Decision::Deny, Tier::Medium, format!("this agent or session is read-only, and this is {what}; only read"))
            }
            Profile::WorkspaceWrite => match action {
                Action::FileWrite { .. } => {
                    let ws = ctx.workspace.as_deref().or(ctx.cwd.as_deref());
                    let inside = match (ins.path.as_deref(), ws) {
                        (Some(p), Some(w)) => Path::new(p).starts_with(normalise(Path::new(w))),
                        _ => false,
                    };
                    if inside {
                        return;
                    }
                    (Decision::Ask, Tier::High, "the write is outside the workspace of this workspace-write agent; a person must confirm it, or write inside the workspace".to_string())
                }
                Action::Tool { .. } if ins.side_effects == SideEffects::External => (
                    Decision::Ask,
                    Tier::Medium,
                    "the tool reaches outside the workspace (side_effects = \"external\"); a person must confirm it".to_string(),
                ),
                _ => return,
            },
        };
        if decision > v.decision {
            let tier = v.tier.max(tier);
            v.raise(
                trace,
                "profile",
                format!("profile {}", profile.as_str()),
                Finding::new(
                    "policy.profile",
                    ReasonCode::ProfileViolation,
                    decision,
                    tier,
                    Severity::Medium,
                    why,
                ),
            );
        }
    }

    fn apply_crisis(
        &self,
        action: &Action,
        ctx: &Context,
        v: &mut PolicyVerdict,
        trace: &mut Vec<Step>,
    ) {
        if !ctx.crisis || v.decision == Decision::Deny {
            return;
        }
        let decides = match action {
            Action::MessageSend { .. } => true,
            Action::Tool { tool, .. } => self.settings.is_crisis_decision(tool),
            _ => false,
        };
        if !decides {
            return;
        }
        let tier = v.tier.max(Tier::High);
        v.raise(
            trace,
            "crisis",
            "crisis.decision".into(),
            Finding::new(
                "crisis.decision",
                ReasonCode::CrisisDecision,
                Decision::Ask,
                tier,
                Severity::High,
                "the person may be in crisis, and this action decides something for them; a person must confirm it",
            ),
        );
    }

    fn apply_risk(
        &self,
        ctx: &Context,
        context_parts: Vec<ScorePart>,
        v: &mut PolicyVerdict,
        trace: &mut Vec<Step>,
    ) {
        let s = &self.settings;
        let findings: u32 = v
            .reasons
            .iter()
            .filter(|f| f.decision == v.decision && f.decision > Decision::Allow)
            .map(|f| s.weight(f.severity))
            .fold(0, u32::saturating_add);
        let mut parts = Vec::new();
        if findings > 0 {
            parts.push(ScorePart {
                part: "findings".into(),
                points: findings,
                why: format!(
                    "the severities of the findings that set the decision ({})",
                    v.reasons
                        .iter()
                        .filter(|f| f.decision == v.decision)
                        .map(|f| f.rule_id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        let contextual = !context_parts.is_empty();
        parts.extend(context_parts);
        let denials = s.per_recent_denial.saturating_mul(ctx.recent_denials);
        if denials > 0 {
            parts.push(ScorePart {
                part: "recent_denials".into(),
                points: denials,
                why: format!("{} denials in this session recently", ctx.recent_denials),
            });
        }
        let score = parts.iter().map(|p| p.points).fold(0, u32::saturating_add);
        v.score = score;
        v.score_parts = parts;
        let channel = ctx.channel.unwrap_or(Channel::Terminal);
        let threshold = s.threshold(channel);
        if v.decision == Decision::Deny
            || (v.tier == Tier::Safe && !contextual)
            || score < threshold
        {
            return;
        }
        let already_person = v.confirm.is_some_and(|r| r.confirm.person())
            || (v.decision == Decision::Ask && s.requirement(v.tier).confirm.person());
        if already_person {
            return;
        }
        let tier = v.tier.max(Tier::Medium);
        v.raise(
            trace,
            "risk",
            format!("score {score} >= {threshold} ({})", channel.as_str()),
            Finding::new(
                "policy.risk",
                ReasonCode::RiskThreshold,
                Decision::Ask,
                tier,
                Severity::Medium,
                format!("the risk score {score} reached the {} threshold {threshold}; a person must confirm", channel.as_str()),
            ),
        );
    }
}

fn default_tier(d: Decision) -> Tier {
    match d {
        Decision::Allow => Tier::Low,
        Decision::Ask => Tier::Medium,
        Decision::Deny => Tier::High,
    }
}

fn rule_finding(r: &Rule, decision: Decision) -> Finding {
    let tier = r.tier.unwrap_or(default_tier(decision));
    let message = r.message.clone().unwrap_or_else(|| match decision {
        Decision::Allow => format!("allowed by the {} policy rule `{}`", r.layer.as_str(), r.id),
        Decision::Ask => format!(
            "the {} policy rule `{}` asks a person to confirm this",
            r.layer.as_str(),
            r.id
        ),
        Decision::Deny => format!(
            "the {} policy rule `{}` denies this",
            r.layer.as_str(),
            r.id
        ),
    });
    let severity = match decision {
        Decision::Allow => Severity::Info,
        Decision::Ask => Severity::Medium,
        Decision::Deny => Severity::High,
    };
    Finding::new(
        r.qualified_id(),
        ReasonCode::PolicyRule,
        decision,
        tier,
        severity,
        message,
    )
}

/// The deny every decision becomes while the policy files do not load (`POLICY_ERROR`).
pub fn load_error(why: &str) -> Assessment {
    deny_only(
        Finding::new(
            "policy.error",
            ReasonCode::PolicyError,
            Decision::Deny,
            Tier::High,
            Severity::High,
            format!(
                "the airlock policy does not load, so everything is denied until it is fixed: {why}"
            ),
        )
        .with_remediation("Run `airlock policy check` and fix the file it names."),
    )
}

pub(crate) fn deny_only(f: Finding) -> Assessment {
    Assessment::from_findings(vec![f], Decision::Deny)
}

fn internal(what: &str) -> Assessment {
    deny_only(Finding::new(
        "policy.internal_error",
        ReasonCode::InternalError,
        Decision::Deny,
        Tier::High,
        Severity::High,
        format!("{what}; airlock denies to stay safe"),
    ))
}

pub(crate) fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(160).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

/// Resolves `~`, relative paths and `..` lexically (the file may not exist yet).
pub fn resolve(path: &str, cwd: Option<&str>, home: Option<&str>) -> String {
    let p = if let (Some(rest), Some(h)) = (path.strip_prefix("~/"), home) {
        PathBuf::from(h).join(rest)
    } else if Path::new(path).is_absolute() {
        PathBuf::from(path)
    } else {
        PathBuf::from(cwd.unwrap_or("/")).join(path)
    };
    normalise(&p).to_string_lossy().into_owned()
}

fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}
