//! The effective policy: the built-in layer plus whichever user, project and managed files
//! exist, their merged settings, and the content hash that goes into every receipt.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::PolicyError;
use crate::layer::{Layer, LayerKind};
use crate::tiers::Settings;

/// The built-in layer, compiled into the binary.
pub const BUILTIN: &str = include_str!("../../../rules/policy/builtin.toml");

/// The same layer as JSON, converted by build.rs (what hooks load: it parses several times
/// faster than the TOML).
const BUILTIN_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/builtin.json"));

/// Which files make up the policy. Missing optional files are skipped; a file that exists but
/// does not load is an error (never silently ignored).
#[derive(Debug, Clone, Default)]
pub struct Sources {
    pub user: Option<PathBuf>,
    pub project: Option<PathBuf>,
    pub managed: Option<PathBuf>,
}

impl Sources {
    /// The usual places: `CONFIG_DIR/airlock/policy.toml` for the user, the nearest
    /// `.airlock/policy.toml` from `cwd` up to the repository root for the project, and
    /// `AIRLOCK_MANAGED_POLICY` or `/etc/airlock/managed.toml` for the managed layer.
    pub fn discover(config_dir: Option<&Path>, cwd: Option<&Path>) -> Sources {
        let existing = |p: PathBuf| p.is_file().then_some(p);
        let user = config_dir.and_then(|c| existing(c.join("airlock").join("policy.toml")));
        let project = cwd.and_then(find_project);
        let managed = std::env::var_os("AIRLOCK_MANAGED_POLICY")
            .map(PathBuf::from)
            .or_else(|| existing(PathBuf::from("/etc/airlock/managed.toml")));
        Sources {
            user,
            project,
            managed,
        }
    }
}

/// The nearest `.airlock/policy.toml` at or above `cwd`, not above a directory holding `.git`.
fn find_project(cwd: &Path) -> Option<PathBuf> {
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        let p = d.join(".airlock").join("policy.toml");
        if p.is_file() {
            return Some(p);
        }
        if d.join(".git").exists() {
            return None;
        }
        dir = d.parent();
    }
    None
}

/// The loaded layers in order, their merged settings and the policy hash.
#[derive(Debug)]
pub struct Policy {
    pub layers: Vec<Layer>,
    pub settings: Settings,
    /// Computed on first use: deciding does not need it, recording does (and it costs more than
    /// loading, since it covers every shell rule pack).
    hash: std::sync::OnceLock<Result<String, String>>,
}

impl Policy {
    /// The built-in layer alone.
    pub fn builtin() -> Result<Policy, PolicyError> {
        Policy::from_layers(Vec::new())
    }

    /// Loads the files `sources` names on top of the built-in layer.
    pub fn load(sources: &Sources) -> Result<Policy, PolicyError> {
        let mut layers = Vec::new();
        for (kind, path) in [
            (LayerKind::User, &sources.user),
            (LayerKind::Project, &sources.project),
            (LayerKind::Managed, &sources.managed),
        ] {
            if let Some(p) = path {
                layers.push(Layer::from_path(kind, p)?);
            }
        }
        Policy::from_layers(layers)
    }

    /// Stacks `layers` (any of user, project, managed) on the built-in layer.
    pub fn from_layers(mut extra: Vec<Layer>) -> Result<Policy, PolicyError> {
        let mut layers = vec![Layer::from_json(
            LayerKind::Builtin,
            "<builtin>",
            BUILTIN_JSON,
        )?];
        extra.sort_by_key(|l| l.kind);
        for w in extra.windows(2) {
            if w[0].kind == w[1].kind {
                return Err(PolicyError::Invalid {
                    layer: w[1].kind.as_str(),
                    origin: w[1].origin.clone(),
                    message: format!("a second {} layer ({})", w[1].kind.as_str(), w[0].origin),
                });
            }
        }
        layers.extend(extra);
        let mut settings = Settings::base();
        for l in &layers {
            settings.apply(l.kind, &l.file);
        }
        Ok(Policy {
            layers,
            settings,
            hash: std::sync::OnceLock::new(),
        })
    }

    /// SHA-256 (hex) of the effective policy: the built-in rule packs, and every layer's parsed
    /// content and schema hashes in RFC 8785 canonical form. Formatting and comments in a file
    /// do not change it; any change of meaning does.
    pub fn hash(&self) -> Result<&str, PolicyError> {
        self.hash
            .get_or_init(|| hash_of(&self.layers))
            .as_deref()
            .map_err(|message| PolicyError::Invalid {
                layer: "effective",
                origin: "<stack>".into(),
                message: format!("cannot hash the policy: {message}"),
            })
    }

    pub fn layer(&self, kind: LayerKind) -> Option<&Layer> {
        self.layers.iter().find(|l| l.kind == kind)
    }
}

fn hash_of(layers: &[Layer]) -> Result<String, String> {
    let doc = json!({
        "format": "airlock-policy/1",
        "shell_rule_packs": airlock_shell::policy_hash(),
        "layers": layers.iter().map(|l| Ok(json!({
            "layer": l.kind.as_str(),
            "file": serde_json::to_value(&l.file).map_err(|e| e.to_string())?,
            "schemas": l.schema_hashes,
        }))).collect::<Result<Vec<_>, String>>()?,
    });
    crate::schema::canonical_sha256(&doc)
}

#[cfg(test)]
mod builtin_json_tests {
    use super::*;

    #[test]
    fn the_json_form_is_the_toml_file() {
        let from_toml = Layer::from_str(LayerKind::Builtin, "<builtin>", BUILTIN, None).unwrap();
        let from_json = Layer::from_json(LayerKind::Builtin, "<builtin>", BUILTIN_JSON).unwrap();
        assert_eq!(
            serde_json::to_value(&from_toml.file).unwrap(),
            serde_json::to_value(&from_json.file).unwrap()
        );
        assert_eq!(from_toml.rules.len(), from_json.rules.len());
        assert_eq!(from_toml.tools.len(), from_json.tools.len());
    }
}
