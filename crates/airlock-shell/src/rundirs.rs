//! Where a command line will run: an accessor over what the walk found, which changes nothing in
//! the analysis. The project policy that applies is the one of the directory a command runs in,
//! not only the one the agent reports: `cd proj && npm publish`, sent from outside `proj`, runs
//! `npm publish` in `proj`, so `proj/.airlock/policy.toml` must judge it (the hook), and a
//! daemon that registered an agent's workspace roots refuses a line that leaves them (REST).
//!
//! The directories are read from the commands the shell analyser walked (`Ran::text`, the
//! canonical words of each command, `cd` and `pushd` among them): each target is taken against
//! the reported working directory and against the directory the previous `cd` led to, since
//! the walk does not say which commands share a subshell. `cd` without a target (or `~`) is the
//! home directory; `cd -`, and targets only known at run time (`cd "$X"`), add nothing: the
//! analyser already asks for what runs at run time.

use std::path::{Component, Path, PathBuf};

/// Every directory other than `cwd` that a command of `line` may run in, normalised, without
/// repeats, at most `MAX`.
pub fn elsewhere(line: &str, cwd: &Path, home: Option<&str>) -> Vec<PathBuf> {
    const MAX: usize = 16;
    let Ok(an) = crate::Analyser::builtin() else {
        return Vec::new();
    };
    let a = an.analyse_full(line, true);
    let mut out: Vec<PathBuf> = Vec::new();
    let mut chained = cwd.to_path_buf();
    for ran in &a.commands {
        let Some(target) = cd_target(&ran.text) else {
            continue;
        };
        let Some(target) = target else {
            continue;
        };
        let dirs = [
            resolve(&target, cwd, home),
            resolve(&target, &chained, home),
        ];
        for d in dirs.into_iter().flatten() {
            if d != cwd && !out.contains(&d) && out.len() < MAX {
                out.push(d);
            }
        }
        if let Some(d) = resolve(&target, &chained, home) {
            chained = d;
        }
    }
    out
}

/// `Some(Some(target))` for `cd DIR`/`pushd DIR`, `Some(Some("~"))` for a bare `cd`,
/// `Some(None)` for `cd -` and the like, `None` for other commands.
fn cd_target(text: &str) -> Option<Option<String>> {
    let argv = crate::simple_argv(text)?;
    let (prog, args) = argv.split_first()?;
    if prog != "cd" && prog != "pushd" {
        return None;
    }
    let operands: Vec<&String> = args
        .iter()
        .skip_while(|a| matches!(a.as_str(), "-L" | "-P" | "-e" | "-@" | "--"))
        .collect();
    Some(match operands.first() {
        None => Some("~".to_string()),
        Some(t) if t.as_str() == "-" || t.starts_with('+') || t.contains('$') => None,
        Some(t) => Some(t.to_string()),
    })
}

/// `target` taken against `base`, `~` against `home`, normalised lexically.
pub fn resolve(target: &str, base: &Path, home: Option<&str>) -> Option<PathBuf> {
    let joined = if target == "~" || target.starts_with("~/") {
        let h = home?;
        Path::new(h).join(target.trim_start_matches('~').trim_start_matches('/'))
    } else if target.starts_with('~') {
        // `~user`: another account's home, not known here
        return None;
    } else {
        base.join(target)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(line: &str) -> Vec<String> {
        elsewhere(line, Path::new("/work"), Some("/home/dev"))
            .iter()
            .map(|p| p.display().to_string())
            .collect()
    }

    #[test]
    fn cd_targets_are_where_commands_run() {
        assert_eq!(dirs("cd proj && npm publish"), ["/work/proj"]);
        assert_eq!(dirs("cd /srv/app; make deploy"), ["/srv/app"]);
        assert_eq!(dirs("(cd ../other && git push)"), ["/other"]);
        assert_eq!(
            dirs("cd a && cd b && ls"),
            ["/work/a", "/work/b", "/work/a/b"]
        );
        assert_eq!(dirs("pushd proj >/dev/null && npm publish"), ["/work/proj"]);
        assert_eq!(dirs("cd && ls"), ["/home/dev"]);
        assert_eq!(dirs("sudo -u x bash -c 'cd /opt/x && ./run'"), ["/opt/x"]);
        // nothing else
        assert!(dirs("npm publish").is_empty());
        assert!(dirs("cd . && ls").is_empty());
        assert!(dirs("cd - && ls").is_empty());
        assert!(dirs("echo cd proj").is_empty());
    }
}
