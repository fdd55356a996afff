//! `airlock policy import claude SETTINGS.json`: Claude Code's `permissions` (allow, ask and
//! deny lists in its permission syntax) as an airlock user-layer policy. MCP tools in the allow
//! or ask list become tool declarations (airlock denies undeclared tools); everything else
//! becomes a rule. Entries airlock cannot express are reported, never silently dropped.

use std::path::Path;

use airlock_core::Decision;
use serde_json::Value;

use crate::file::{PolicyFile, RuleSpec, ToolSpec};
use crate::pattern::Matcher;

/// The converted policy and the entries that could not be converted, with why.
#[derive(Debug, Default)]
pub struct Imported {
    pub policy: PolicyFile,
    pub skipped: Vec<(String, String)>,
}

/// Converts a settings document. `settings_dir` resolves Claude's `/path` patterns, which are
/// relative to the settings file.
pub fn import(settings: &Value, settings_dir: Option<&Path>) -> Result<Imported, String> {
    let perms = settings
        .get("permissions")
        .ok_or("the settings have no `permissions` object")?;
    if !perms.is_object() {
        return Err("`permissions` is not an object".into());
    }
    let mut out = Imported::default();
    out.policy.policy.version = Some(1);
    out.policy.policy.name = Some("imported from Claude Code settings".into());
    let mut n = 0usize;
    for (key, decision) in [
        ("deny", Decision::Deny),
        ("ask", Decision::Ask),
        ("allow", Decision::Allow),
    ] {
        let Some(list) = perms.get(key) else {
            continue;
        };
        let Some(items) = list.as_array() else {
            return Err(format!("`permissions.{key}` is not a list"));
        };
        for item in items {
            let Some(spec) = item.as_str() else {
                out.skipped.push((item.to_string(), "not a string".into()));
                continue;
            };
            let spec = rebase(spec, settings_dir);
            match Matcher::parse_claude(&spec) {
                Ok(Matcher::Tool(g)) if decision != Decision::Deny => {
                    out.policy.tools.push(ToolSpec {
                        name: g.source.clone(),
                        decision: Some(decision),
                        tier: None,
                        side_effects: None,
                        schema: None,
                        schema_file: None,
                        schema_sha256: None,
                        require_schema: false,
                        output_schema: None,
                        output_schema_file: None,
                        output_schema_sha256: None,
                        output_drift: None,
                        message: None,
                    });
                }
                Ok(_) => {
                    n += 1;
                    out.policy.rules.push(RuleSpec {
                        id: format!("claude-{key}-{n}"),
                        when: Some(spec.clone()),
                        shell: None,
                        tool: None,
                        write: None,
                        network: None,
                        decision,
                        tier: None,
                        message: None,
                    });
                }
                Err(e) => out.skipped.push((spec.clone(), e.to_string())),
            }
        }
    }
    Ok(out)
}

/// Claude's `Edit(/src/**)` is relative to the settings file; `//x` is absolute.
fn rebase(spec: &str, dir: Option<&Path>) -> String {
    let Some(open) = spec.find('(') else {
        return spec.to_string();
    };
    let tool = &spec[..open];
    if !matches!(tool, "Edit" | "Write" | "MultiEdit" | "NotebookEdit") {
        return spec.to_string();
    }
    let arg = spec[open + 1..].trim_end_matches(')');
    match (arg.strip_prefix('/'), dir) {
        (Some(rest), Some(d)) if !rest.starts_with('/') => {
            format!(
                "{tool}({}/{rest})",
                d.display().to_string().trim_end_matches('/')
            )
        }
        _ => spec.to_string(),
    }
}

/// The imported policy as TOML text.
pub fn to_toml(p: &PolicyFile) -> Result<String, String> {
    toml::to_string_pretty(p).map_err(|e| e.to_string())
}
