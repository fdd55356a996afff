//! The facts about where an action runs that production patterns are matched against, read
//! from the process environment and two small files: the git branch checked out (`.git/HEAD`)
//! and the current kube context (`current-context:` of the kubeconfig). Callers that evaluate in
//! the agent's own process (the hook, the CLI) fill them with `Context::with_env_facts`; the
//! daemon does too for each submission (the branch where the action runs, and its own
//! environment), which can only make a context production.

use std::path::{Path, PathBuf};

use crate::eval::Context;

/// The most bytes read from `.git/HEAD` or a kubeconfig.
const MAX_READ: u64 = 256 * 1024;

impl Context {
    /// Fills the production facts that are not set yet from the environment:
    /// `AIRLOCK_PRODUCTION` (`1`/`true`: production), `AIRLOCK_ENV` (the environment name),
    /// `AWS_PROFILE`, `CLOUDSDK_ACTIVE_CONFIG_NAME` or `CLOUDSDK_CORE_PROJECT` (the cloud
    /// profile), the kubeconfig's current context, and the git branch of `cwd`.
    pub fn with_env_facts(mut self) -> Context {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        if var("AIRLOCK_PRODUCTION")
            .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
        {
            self.production = true;
        }
        if self.environment.is_none() {
            self.environment = var("AIRLOCK_ENV");
        }
        if self.cloud_profile.is_none() {
            self.cloud_profile = var("AWS_PROFILE")
                .or_else(|| var("CLOUDSDK_ACTIVE_CONFIG_NAME"))
                .or_else(|| var("CLOUDSDK_CORE_PROJECT"));
        }
        if self.kube_context.is_none() {
            let config = var("KUBECONFIG")
                .and_then(|k| k.split(':').next().map(PathBuf::from))
                .or_else(|| {
                    self.home
                        .as_deref()
                        .map(|h| Path::new(h).join(".kube/config"))
                });
            self.kube_context = config.as_deref().and_then(kube_current_context);
        }
        if self.data_dir.is_none() {
            self.data_dir = var("AIRLOCK_DATA_DIR");
        }
        if self.git_branch.is_none() {
            self.git_branch = self.cwd.as_deref().and_then(|c| git_branch(Path::new(c)));
        }
        self
    }
}

fn read_small(p: &Path) -> Option<String> {
    use std::io::Read;
    let f = std::fs::File::open(p).ok()?;
    let mut s = String::new();
    f.take(MAX_READ).read_to_string(&mut s).ok()?;
    Some(s)
}

/// `current-context:` of a kubeconfig (YAML, but this one key is all that is needed).
pub fn kube_current_context(config: &Path) -> Option<String> {
    let text = read_small(config)?;
    text.lines().find_map(|l| {
        let v = l.strip_prefix("current-context:")?.trim();
        let v = v.trim_matches(|c| c == '"' || c == '\'');
        (!v.is_empty()).then(|| v.to_string())
    })
}

/// The branch checked out at or above `dir` (`None` when detached or not in a repository).
pub fn git_branch(dir: &Path) -> Option<String> {
    let mut d = Some(dir);
    while let Some(cur) = d {
        let dotgit = cur.join(".git");
        let head = if dotgit.is_dir() {
            Some(dotgit.join("HEAD"))
        } else if dotgit.is_file() {
            // a worktree or submodule: `gitdir: PATH`
            let text = read_small(&dotgit)?;
            let gitdir = text.trim().strip_prefix("gitdir:")?.trim().to_string();
            let gitdir = if Path::new(&gitdir).is_absolute() {
                PathBuf::from(gitdir)
            } else {
                cur.join(gitdir)
            };
            Some(gitdir.join("HEAD"))
        } else {
            None
        };
        if let Some(h) = head {
            let text = read_small(&h)?;
            return text
                .trim()
                .strip_prefix("ref: refs/heads/")
                .map(str::to_string);
        }
        d = cur.parent();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_branch_and_kube_context_from_real_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(
            dir.path().join(".git/HEAD"),
            "ref: refs/heads/release/2.1\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("src/deep")).unwrap();
        assert_eq!(
            git_branch(&dir.path().join("src/deep")).as_deref(),
            Some("release/2.1")
        );
        std::fs::write(dir.path().join(".git/HEAD"), "3f2a…\n").unwrap();
        assert_eq!(
            git_branch(dir.path()),
            None,
            "a detached HEAD has no branch"
        );
        let kc = dir.path().join("kubeconfig");
        std::fs::write(
            &kc,
            "apiVersion: v1\nclusters: []\ncurrent-context: \"prod-eu-1\"\nkind: Config\n",
        )
        .unwrap();
        assert_eq!(kube_current_context(&kc).as_deref(), Some("prod-eu-1"));
    }
}
