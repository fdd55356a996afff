//! Sandbox profiles (the data in `profiles.toml`) and the paths no profile, workspace or grant
//! may ever open: SSH and cloud credentials, credential stores, the agents' own configuration,
//! airlock's files.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

use crate::SandboxError;

const PROFILES: &str = include_str!("../profiles.toml");

/// Under $HOME: read or written by no confined command.
const PROTECTED_IN_HOME: &[&str] = &[
    ".ssh",
    ".aws",
    ".azure",
    ".gnupg",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".password-store",
    ".local/share/keyrings",
    ".claude",
    ".claude.json",
    ".codex",
    ".gemini",
    ".hermes",
    ".config/airlock",
    ".local/share/airlock",
];

/// System files of the same kind.
const PROTECTED_SYSTEM: &[&str] = &["/etc/shadow", "/etc/gshadow", "/etc/ssh", "/etc/sudoers"];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    description: String,
    #[serde(default)]
    inherits: Option<String>,
    #[serde(default)]
    read: Vec<String>,
    #[serde(default)]
    write: Vec<String>,
    #[serde(default)]
    write_files: Vec<String>,
}

/// A profile with its inherited entries merged and `~/` expanded.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub name: String,
    pub description: String,
    pub read: Vec<PathBuf>,
    pub write: Vec<PathBuf>,
    pub write_files: Vec<PathBuf>,
}

fn raw_profiles() -> Result<BTreeMap<String, RawProfile>, SandboxError> {
    toml::from_str(PROFILES)
        .map_err(|e| SandboxError::Invalid(format!("the built-in sandbox profiles: {e}")))
}

/// The names of the built-in profiles.
pub fn names() -> Vec<String> {
    raw_profiles()
        .map(|m| m.into_keys().collect())
        .unwrap_or_default()
}

impl Profile {
    /// Loads profile `name` for a user whose home is `home`.
    pub fn load(name: &str, home: &Path) -> Result<Profile, SandboxError> {
        let all = raw_profiles()?;
        let mut chain = Vec::new();
        let mut at = Some(name.to_string());
        while let Some(n) = at {
            if chain.len() > all.len() {
                return Err(SandboxError::Invalid(format!(
                    "sandbox profile {name:?} inherits in a cycle"
                )));
            }
            let p = all.get(&n).ok_or_else(|| {
                SandboxError::Invalid(format!(
                    "no sandbox profile {n:?}: use one of {}",
                    all.keys().cloned().collect::<Vec<_>>().join(", ")
                ))
            })?;
            at = p.inherits.clone();
            chain.push(p.clone());
        }
        let expand = |v: &[String]| -> Result<Vec<PathBuf>, SandboxError> {
            v.iter().map(|s| expand_path(s, home)).collect()
        };
        let mut out = Profile {
            name: name.to_string(),
            description: chain
                .first()
                .map(|p| p.description.clone())
                .unwrap_or_default(),
            read: Vec::new(),
            write: Vec::new(),
            write_files: Vec::new(),
        };
        for p in chain.iter().rev() {
            out.read.extend(expand(&p.read)?);
            out.write.extend(expand(&p.write)?);
            out.write_files.extend(expand(&p.write_files)?);
        }
        Ok(out)
    }
}

fn expand_path(s: &str, home: &Path) -> Result<PathBuf, SandboxError> {
    let p = match s.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None => PathBuf::from(s),
    };
    if !p.is_absolute() || p.components().any(|c| c == Component::ParentDir) {
        return Err(SandboxError::Invalid(format!(
            "sandbox path {s:?} must be absolute (or start with ~/) and have no `..`"
        )));
    }
    Ok(p)
}

/// The paths no confined command may read or write, for a user whose home is `home`, plus
/// `extra` (airlock's data directory).
pub fn protected_paths(home: &Path, extra: &[PathBuf]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = PROTECTED_IN_HOME.iter().map(|p| home.join(p)).collect();
    v.extend(PROTECTED_SYSTEM.iter().map(PathBuf::from));
    v.extend(extra.iter().cloned());
    v
}

/// Refuses a root that is, contains or lies inside a protected path (compared after resolving
/// symbolic links where the path exists).
pub fn check_not_protected(root: &Path, protected: &[PathBuf]) -> Result<(), SandboxError> {
    check_roots(std::slice::from_ref(&root.to_path_buf()), protected).map(|_| ())
}

/// [`check_not_protected`] for many roots, each path resolved once (a run checks a few dozen
/// roots against a few dozen protected paths, and resolving is a system call per component).
/// Returns whether each root exists, so that the launcher need not try the missing ones.
pub fn check_roots(roots: &[PathBuf], protected: &[PathBuf]) -> Result<Vec<bool>, SandboxError> {
    let protected: Vec<PathBuf> = protected.iter().map(|p| resolve(p).0).collect();
    let mut exists = Vec::with_capacity(roots.len());
    for root in roots {
        let (r, found) = resolve(root);
        if let Some(p) = protected
            .iter()
            .find(|p| p.starts_with(&r) || r.starts_with(p))
        {
            return Err(SandboxError::Invalid(format!(
                "{} would open the protected path {} to the command: choose a narrower directory",
                root.display(),
                p.display()
            )));
        }
        exists.push(found);
    }
    Ok(exists)
}

/// The path with symbolic links resolved, and whether it exists (else the path as given).
fn resolve(p: &Path) -> (PathBuf, bool) {
    match std::fs::canonicalize(p) {
        Ok(r) => (r, true),
        Err(_) => (p.to_path_buf(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_loads_and_opens_nothing_protected() {
        let home = Path::new("/home/someone");
        let protected = protected_paths(home, &[]);
        assert!(names().contains(&"default".to_string()));
        for n in names() {
            let p = Profile::load(&n, home).unwrap();
            assert!(!p.read.is_empty(), "{n}");
            for r in p.read.iter().chain(&p.write).chain(&p.write_files) {
                check_not_protected(r, &protected).unwrap();
            }
        }
        let dev = Profile::load("dev", home).unwrap();
        assert!(dev.read.contains(&PathBuf::from("/usr")));
        assert!(dev.read.contains(&PathBuf::from("/home/someone/.rustup")));
    }

    #[test]
    fn unknown_profile_and_protected_roots_are_refused() {
        let home = Path::new("/home/someone");
        let e = Profile::load("nope", home).unwrap_err().to_string();
        assert!(e.contains("default"), "{e}");
        let protected = protected_paths(home, &[PathBuf::from("/var/lib/airlock")]);
        assert!(check_not_protected(home, &protected).is_err());
        assert!(check_not_protected(Path::new("/"), &protected).is_err());
        assert!(check_not_protected(&home.join(".ssh/keys"), &protected).is_err());
        assert!(check_not_protected(Path::new("/var/lib"), &protected).is_err());
        assert!(check_not_protected(&home.join("src/project"), &protected).is_ok());
        assert!(expand_path("relative/x", home).is_err());
        assert!(expand_path("/usr/../etc", home).is_err());
    }
}
