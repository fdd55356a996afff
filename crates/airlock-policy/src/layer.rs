//! One policy layer: a parsed file, checked against what its layer may say, with its rules'
//! matchers and its tools' schemas compiled. Layers are built-in < user < project, plus the
//! managed (admin) layer: the user layer may loosen built-in decisions; the project and managed
//! layers may only tighten, so they refuse allow rules and loosening settings at load time.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use airlock_core::{Decision, Tier};
use serde::Serialize;

use crate::file::{PolicyFile, RuleSpec, ToolSpec};
use crate::pattern::{DomainPattern, Matcher, NameGlob, PathPattern};
use crate::schema::{self, Pinned};
use crate::{CommandPattern, PolicyError};

/// Policy files larger than this are refused.
pub const MAX_FILE: usize = 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LayerKind {
    Builtin,
    User,
    Project,
    Managed,
}

impl LayerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LayerKind::Builtin => "builtin",
            LayerKind::User => "user",
            LayerKind::Project => "project",
            LayerKind::Managed => "managed",
        }
    }

    /// Project and managed layers only tighten.
    pub fn tightens_only(self) -> bool {
        matches!(self, LayerKind::Project | LayerKind::Managed)
    }
}

/// A compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    pub id: String,
    pub layer: LayerKind,
    pub matcher: Matcher,
    pub decision: Decision,
    pub tier: Option<Tier>,
    pub message: Option<String>,
}

impl Rule {
    /// `layer:id`, as findings and explanations name it.
    pub fn qualified_id(&self) -> String {
        format!("{}:{}", self.layer.as_str(), self.id)
    }
}

/// A compiled tool declaration.
#[derive(Debug)]
pub struct Tool {
    pub spec: ToolSpec,
    pub layer: LayerKind,
    pub name: NameGlob,
    pub args: Option<Pinned>,
    pub output: Option<Pinned>,
}

/// One loaded layer.
#[derive(Debug)]
pub struct Layer {
    pub kind: LayerKind,
    /// Where it came from (a path, or `<builtin>`).
    pub origin: String,
    pub file: PolicyFile,
    pub rules: Vec<Rule>,
    pub tools: Vec<Tool>,
    /// SHA-256 of every schema the layer uses, by tool name (part of the policy hash).
    pub schema_hashes: Vec<(String, String)>,
}

impl Layer {
    /// Reads and compiles a layer from a file; schema files are relative to its directory.
    pub fn from_path(kind: LayerKind, path: &Path) -> Result<Layer, PolicyError> {
        let bytes = read_bounded(path).map_err(|source| PolicyError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        if bytes.len() > MAX_FILE {
            return Err(PolicyError::Invalid {
                layer: kind.as_str(),
                origin: path.display().to_string(),
                message: format!("the file is over the limit of {MAX_FILE} bytes"),
            });
        }
        let text = text_of(kind, &path.display().to_string(), &bytes)?;
        let base = path.parent().map(Path::to_path_buf);
        Layer::from_str(kind, &path.display().to_string(), &text, base.as_deref())
    }

    /// Compiles a layer from its text.
    pub fn from_str(
        kind: LayerKind,
        origin: &str,
        text: &str,
        base: Option<&Path>,
    ) -> Result<Layer, PolicyError> {
        let invalid = |message: String| PolicyError::Invalid {
            layer: kind.as_str(),
            origin: origin.to_string(),
            message,
        };
        if text.len() > MAX_FILE {
            return Err(invalid(format!(
                "the file is {} bytes, over the limit of {MAX_FILE}",
                text.len()
            )));
        }
        let file: PolicyFile = toml::from_str(text).map_err(|e| PolicyError::Parse {
            layer: kind.as_str(),
            origin: origin.to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;
        Layer::compile(kind, origin, file, base)
    }

    /// Compiles a layer from the JSON form of its file (the built-in layer, converted from its
    /// TOML at build time).
    pub fn from_json(kind: LayerKind, origin: &str, json: &str) -> Result<Layer, PolicyError> {
        let file: PolicyFile = serde_json::from_str(json).map_err(|e| PolicyError::Parse {
            layer: kind.as_str(),
            origin: origin.to_string(),
            message: e.to_string(),
        })?;
        Layer::compile(kind, origin, file, None)
    }

    fn compile(
        kind: LayerKind,
        origin: &str,
        file: PolicyFile,
        base: Option<&Path>,
    ) -> Result<Layer, PolicyError> {
        let invalid = |message: String| PolicyError::Invalid {
            layer: kind.as_str(),
            origin: origin.to_string(),
            message,
        };
        check_settings(kind, &file).map_err(invalid)?;
        let mut ids = HashSet::new();
        let mut rules = Vec::new();
        for r in &file.rules {
            if !ids.insert(r.id.as_str()) {
                return Err(invalid(format!("rule id `{}` is used twice", r.id)));
            }
            rules
                .push(compile_rule(kind, r).map_err(|e| invalid(format!("rule `{}`: {e}", r.id)))?);
        }
        let mut tools = Vec::new();
        let mut schema_hashes = Vec::new();
        for t in &file.tools {
            let tool = compile_tool(kind, t, base)
                .map_err(|e| invalid(format!("tool `{}`: {e}", t.name)))?;
            for p in [&tool.args, &tool.output].into_iter().flatten() {
                if let Pinned::Ready { sha256, .. } = p {
                    schema_hashes.push((t.name.clone(), sha256.clone()));
                }
            }
            tools.push(tool);
        }
        for (i, ex) in file.examples.iter().enumerate() {
            let n = [
                ex.shell.is_some(),
                ex.tool.is_some(),
                ex.write.is_some(),
                ex.fetch.is_some(),
            ]
            .iter()
            .filter(|b| **b)
            .count();
            if n != 1 {
                return Err(invalid(format!(
                    "example {} must name exactly one of shell, tool, write, fetch",
                    i + 1
                )));
            }
        }
        Ok(Layer {
            kind,
            origin: origin.to_string(),
            file,
            rules,
            tools,
            schema_hashes,
        })
    }
}

/// Policy text must be UTF-8 (a clear error, never a lossy read).
pub fn text_of(kind: LayerKind, origin: &str, bytes: &[u8]) -> Result<String, PolicyError> {
    String::from_utf8(bytes.to_vec()).map_err(|e| PolicyError::Invalid {
        layer: kind.as_str(),
        origin: origin.to_string(),
        message: format!("not UTF-8 (at byte {})", e.utf8_error().valid_up_to()),
    })
}

fn check_settings(kind: LayerKind, f: &PolicyFile) -> Result<(), String> {
    if let Some(v) = f.policy.version
        && v != 1
    {
        return Err(format!("policy.version {v} is not supported (only 1)"));
    }
    if kind != LayerKind::Managed {
        for (set, key) in [
            (f.policy.max_profile.is_some(), "max_profile"),
            (f.policy.user_may_allow.is_some(), "user_may_allow"),
            (f.policy.allow_broad_grants.is_some(), "allow_broad_grants"),
        ] {
            if set {
                return Err(format!(
                    "policy.{key} belongs to the managed (admin) layer only"
                ));
            }
        }
    }
    if kind.tightens_only() {
        if let Some(r) = f.rules.iter().find(|r| r.decision == Decision::Allow) {
            return Err(format!(
                "rule `{}` allows, but the {} layer can only tighten (ask or deny); put allow rules in the user policy",
                r.id,
                kind.as_str()
            ));
        }
        if kind == LayerKind::Project {
            if let Some(t) = f.tools.iter().find(|t| t.decision == Some(Decision::Allow)) {
                return Err(format!(
                    "tool `{}` says decision = \"allow\", but the project layer can only tighten: it may add schemas or ask/deny for tools the user or managed policy declares",
                    t.name
                ));
            }
            if f.crisis
                .as_ref()
                .is_some_and(|c| !c.support_tools.is_empty())
            {
                return Err("crisis.support_tools are never gated, so only the user or managed layer may name them".into());
            }
        }
    }
    if let Some(c) = &f.crisis {
        for name in c.support_tools.iter().chain(&c.decision_tools) {
            NameGlob::new(name).map_err(|e| format!("crisis: {e}"))?;
        }
    }
    for k in f.tiers.keys() {
        if !matches!(k.as_str(), "0" | "1" | "2" | "3" | "4") {
            return Err(format!("tiers.{k}: tiers are 0 to 4"));
        }
    }
    for spec in f.tiers.values() {
        for d in [&spec.timeout, &spec.time_lock].into_iter().flatten() {
            crate::tiers::parse_duration(d).map_err(|e| format!("tiers: {e}"))?;
        }
    }
    if !f.policy.trusted_dirs.is_empty() && kind != LayerKind::User {
        return Err(
            "policy.trusted_dirs lowers friction, so only the user layer may name trusted directories"
                .into(),
        );
    }
    for d in &f.policy.trusted_dirs {
        PathPattern::new(d).map_err(|e| format!("policy.trusted_dirs: {e}"))?;
    }
    if let Some(p) = &f.production {
        for g in p
            .environments
            .iter()
            .chain(&p.kube_contexts)
            .chain(&p.git_branches)
            .chain(&p.cloud_profiles)
        {
            NameGlob::new(g).map_err(|e| format!("production: {e}"))?;
        }
        if let Some(t) = p.min_tier
            && !(1..=4).contains(&t)
        {
            return Err(format!("production.min_tier {t}: use 1 to 4"));
        }
    }
    for (name, b) in &f.behaviour {
        for g in &b.rules {
            NameGlob::new(g).map_err(|e| format!("behaviour.{name}: {e}"))?;
        }
        // The built-in layer is loaded by every hook process; its patterns are compiled by a
        // test (`builtin_behaviour_texts_compile`) instead of at each load.
        if kind != LayerKind::Builtin {
            for t in &b.text {
                regex::Regex::new(t).map_err(|e| format!("behaviour.{name}.text: {e}"))?;
            }
        }
    }
    if let Some(h) = &f.hosts {
        for d in &h.known {
            DomainPattern::new(d).map_err(|e| format!("hosts.known: {e}"))?;
        }
        for d in &h.fetch {
            DomainPattern::new(d).map_err(|e| format!("hosts.fetch: {e}"))?;
        }
        if kind.tightens_only() && !h.known.is_empty() && h.ask_unknown == Some(false) {
            return Err(
                "hosts.ask_unknown = false loosens, so only the user layer may say it".into(),
            );
        }
    }
    for (name, a) in &f.agents {
        for g in a.tools.iter().flatten() {
            NameGlob::new(g).map_err(|e| format!("agents.{name}.tools: {e}"))?;
        }
    }
    if let Some(r) = &f.risk {
        for k in r.weights.keys() {
            if !matches!(k.as_str(), "info" | "low" | "medium" | "high" | "critical") {
                return Err(format!(
                    "risk.weights.{k}: use info, low, medium, high or critical"
                ));
            }
        }
        for k in r.thresholds.keys() {
            if crate::Channel::parse(k).is_none() {
                return Err(format!(
                    "risk.thresholds.{k}: channels are terminal, chat, api, telegram, discord and slack"
                ));
            }
        }
    }
    Ok(())
}

fn compile_rule(kind: LayerKind, r: &RuleSpec) -> Result<Rule, String> {
    if r.id.trim().is_empty() || r.id.contains(char::is_whitespace) {
        return Err("the id must be one non-empty word".into());
    }
    let given = [
        r.when.is_some(),
        r.shell.is_some(),
        r.tool.is_some(),
        r.write.is_some(),
        r.network.is_some(),
    ]
    .iter()
    .filter(|b| **b)
    .count();
    if given != 1 {
        return Err("name exactly one of when, shell, tool, write, network".into());
    }
    let matcher = if let Some(w) = &r.when {
        Matcher::parse_claude(w)
    } else if let Some(s) = &r.shell {
        CommandPattern::new(s).map(Matcher::Shell)
    } else if let Some(t) = &r.tool {
        NameGlob::new(t).map(Matcher::Tool)
    } else if let Some(p) = &r.write {
        PathPattern::new(p).map(Matcher::Write)
    } else if let Some(d) = &r.network {
        DomainPattern::new(d).map(Matcher::Network)
    } else {
        return Err("no matcher".into());
    }
    .map_err(|e| e.to_string())?;
    let tier = r
        .tier
        .map(Tier::try_from)
        .transpose()
        .map_err(|e| e.to_string())?;
    Ok(Rule {
        id: r.id.clone(),
        layer: kind,
        matcher,
        decision: r.decision,
        tier,
        message: r.message.clone(),
    })
}

fn compile_tool(kind: LayerKind, t: &ToolSpec, base: Option<&Path>) -> Result<Tool, String> {
    let name = NameGlob::new(&t.name).map_err(|e| e.to_string())?;
    if let Some(tier) = t.tier {
        Tier::try_from(tier).map_err(|e| e.to_string())?;
    }
    if t.schema.is_some() && t.schema_file.is_some() {
        return Err("give schema or schema_file, not both".into());
    }
    if t.output_schema.is_some() && t.output_schema_file.is_some() {
        return Err("give output_schema or output_schema_file, not both".into());
    }
    let load = |inline: &Option<serde_json::Value>, file: &Option<String>, pin: &Option<String>| {
        let value = match (inline, file) {
            (Some(v), _) => Some(Ok(v.clone())),
            (None, Some(f)) => Some(read_schema(base, f)),
            (None, None) => None,
        };
        value.map(|v| match v {
            Ok(v) => schema::pin(&v, pin.as_deref()),
            Err(e) => Pinned::Invalid(e),
        })
    };
    let args = load(&t.schema, &t.schema_file, &t.schema_sha256);
    if args.is_none() && t.schema_sha256.is_some() {
        return Err("schema_sha256 pins a schema, but no schema or schema_file is given".into());
    }
    let output = load(
        &t.output_schema,
        &t.output_schema_file,
        &t.output_schema_sha256,
    );
    Ok(Tool {
        spec: t.clone(),
        layer: kind,
        name,
        args,
        output,
    })
}

fn read_schema(base: Option<&Path>, file: &str) -> Result<serde_json::Value, String> {
    let p = match base {
        Some(b) if !Path::new(file).is_absolute() => b.join(file),
        _ => PathBuf::from(file),
    };
    let bytes = read_bounded(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
    if bytes.len() > MAX_FILE {
        return Err(format!("{} is over {MAX_FILE} bytes", p.display()));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("{} is not JSON: {e}", p.display()))
}

/// Reads at most one byte past [`MAX_FILE`]: enough for the size check that follows, without
/// reading a huge file (a project policy comes with whatever repository is checked out).
fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_FILE as u64 + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}
