//! Workspace roots of agent tokens. The project policy that judges an action is found from the
//! directory it runs in, and over REST the agent names that directory (`cwd`): an agent free to
//! name any directory picks the one whose policy suits it. A token created with roots
//! (`POST /v1/tokens` `{"roots": […]}`, `airlock token create --root DIR`) is confined to them:
//! a submission's `cwd` must lie inside one (none given: the first root), and so must every
//! directory a shell line `cd`s into; otherwise 422 `CWD_OUTSIDE_ROOTS`, and nothing reaches the
//! broker. A token without roots is not confined (as before roots existed).

use std::path::{Path, PathBuf};

use airlock_confirm::Submission;
use airlock_core::Action;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// The most roots one token may have, and the longest root.
const MAX_ROOTS: usize = 64;
const MAX_ROOT: usize = 4096;

/// The stable code of a refused working directory.
pub const OUTSIDE: &str = "CWD_OUTSIDE_ROOTS";

/// `p` made absolute-only and normalised lexically (`.`, `..`, repeated `/`); `None` when it is
/// not absolute or holds a NUL or control character.
pub fn normalise(p: &str) -> Option<PathBuf> {
    if !p.starts_with('/') || p.len() > MAX_ROOT || p.chars().any(char::is_control) {
        return None;
    }
    airlock_shell::rundirs::resolve(p, Path::new("/"), None)
}

/// Roots as given (by `POST /v1/tokens` or `airlock token create --root`), checked and
/// normalised, without repeats; the message says which one is wrong.
pub fn normalised(roots: &[String]) -> Result<Vec<String>, String> {
    if roots.len() > MAX_ROOTS {
        return Err(format!("at most {MAX_ROOTS} roots"));
    }
    let mut out: Vec<String> = Vec::new();
    for r in roots {
        let Some(n) = normalise(r) else {
            return Err(format!(
                "a root must be an absolute directory of at most {MAX_ROOT} bytes: {r:?}"
            ));
        };
        let n = n.display().to_string();
        if !out.contains(&n) {
            out.push(n);
        }
    }
    Ok(out)
}

/// Whether `dir` is `root` or below it (whole components: `/work/ab` is not under `/work/a`).
pub fn inside(dir: &Path, root: &Path) -> bool {
    dir.starts_with(root)
}

fn outside(what: String) -> ApiError {
    ApiError::invalid(OUTSIDE, what)
}

/// Confines submission `s` of `caller` to the token's roots (see the module documentation).
pub async fn confine(st: &AppState, caller: &Caller, s: &mut Submission) -> Result<(), ApiError> {
    let roots = st
        .auth
        .db()
        .token_roots(&caller.token_id)
        .await
        .map_err(ApiError::internal)?;
    let Some(first) = roots.first() else {
        return Ok(());
    };
    let roots: Vec<PathBuf> = roots.iter().map(PathBuf::from).collect();
    let within = |d: &Path| roots.iter().any(|r| inside(d, r));
    let cwd = match s.cwd.as_deref() {
        None => PathBuf::from(first),
        Some(c) => {
            let Some(n) = normalise(c) else {
                return Err(outside(format!(
                    "cwd {c:?} must be an absolute directory inside the token's workspace roots"
                )));
            };
            if !within(&n) {
                return Err(outside(format!(
                    "cwd {c:?} is outside this agent token's workspace roots ({}); run the action in the workspace",
                    show(&roots)
                )));
            }
            n
        }
    };
    let cwd_text = cwd.display().to_string();
    s.cwd = Some(cwd_text.clone());
    if let Action::Shell { command, cwd: own } = &mut s.action {
        *own = Some(cwd_text);
        let home = std::env::var("HOME").ok().filter(|h| !h.is_empty());
        for d in airlock_shell::rundirs::elsewhere(command, &cwd, home.as_deref()) {
            if !within(&d) {
                return Err(outside(format!(
                    "the command changes into {}, outside this agent token's workspace roots ({})",
                    d.display(),
                    show(&roots)
                )));
            }
        }
    }
    Ok(())
}

fn show(roots: &[PathBuf]) -> String {
    roots
        .iter()
        .map(|r| r.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_absolute_and_normalised() {
        assert_eq!(
            normalise("/work//a/./b/../c"),
            Some(PathBuf::from("/work/a/c"))
        );
        assert_eq!(normalise("/../.."), Some(PathBuf::from("/")));
        assert_eq!(normalise("work"), None);
        assert_eq!(normalise("/work\n"), None);
        assert!(inside(Path::new("/work/a/x"), Path::new("/work/a")));
        assert!(inside(Path::new("/work/a"), Path::new("/work/a")));
        assert!(!inside(Path::new("/work/ab"), Path::new("/work/a")));
        assert!(!inside(Path::new("/work"), Path::new("/work/a")));
    }
}
