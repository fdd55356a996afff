//! `airlock policy test`: every layer's `[[examples]]` run against the effective policy. An
//! example fails when the decision differs, or when it names a rule and another one decided.

use airlock_core::{Action, Decision};

use crate::file::ExampleSpec;
use crate::{Context, Policy};

/// One example's outcome.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ExampleOutcome {
    pub layer: String,
    pub index: usize,
    pub action: String,
    pub expect: Decision,
    pub got: Decision,
    pub decided_by: String,
    pub expect_rule: Option<String>,
    pub passed: bool,
}

/// The action an example describes.
pub fn action_of(ex: &ExampleSpec) -> Option<Action> {
    if let Some(c) = &ex.shell {
        return Some(Action::shell(c.clone()));
    }
    if let Some(t) = &ex.tool {
        return Some(Action::Tool {
            tool: t.clone(),
            arguments: ex
                .arguments
                .clone()
                .unwrap_or(serde_json::Value::Object(Default::default())),
        });
    }
    if let Some(p) = &ex.write {
        return Some(Action::FileWrite {
            path: p.clone(),
            content: None,
            edit: false,
        });
    }
    ex.fetch.as_ref().map(|u| Action::NetworkFetch {
        url: u.clone(),
        method: "GET".into(),
    })
}

/// Runs every example of every layer. `base` supplies cwd, home and workspace.
pub fn run(policy: &Policy, base: &Context) -> Vec<ExampleOutcome> {
    let mut out = Vec::new();
    for layer in &policy.layers {
        for (i, ex) in layer.file.examples.iter().enumerate() {
            let Some(action) = action_of(ex) else {
                continue;
            };
            let mut ctx = base.clone();
            if let Some(a) = &ex.agent {
                ctx.agent = Some(a.clone());
            }
            ctx.crisis = ex.crisis.unwrap_or(false);
            // an example's production facts are its own, never the machine's
            ctx.production = ex.production.unwrap_or(false);
            ctx.environment = ex.environment.clone();
            ctx.kube_context = ex.kube_context.clone();
            ctx.git_branch = ex.git_branch.clone();
            ctx.cloud_profile = ex.cloud_profile.clone();
            if let Some(c) = &ex.cwd {
                ctx.cwd = Some(c.clone());
            }
            let v = policy.evaluate(&action, &ctx);
            let rule_ok = ex.rule.as_ref().is_none_or(|r| *r == v.decided_by);
            out.push(ExampleOutcome {
                layer: layer.kind.as_str().to_string(),
                index: i + 1,
                action: describe(&action),
                expect: ex.expect,
                got: v.decision,
                decided_by: v.decided_by.clone(),
                expect_rule: ex.rule.clone(),
                passed: v.decision == ex.expect && rule_ok,
            });
        }
    }
    out
}

/// A one-line description of an action, for reports.
pub fn describe(a: &Action) -> String {
    match a {
        Action::Shell { command, .. } => format!("shell: {command}"),
        Action::Tool { tool, arguments } => format!("tool: {tool} {arguments}"),
        Action::FileWrite { path, .. } => format!("write: {path}"),
        Action::NetworkFetch { url, .. } => format!("fetch: {url}"),
        Action::MessageSend { channel, .. } => format!("message: {channel}"),
    }
}
