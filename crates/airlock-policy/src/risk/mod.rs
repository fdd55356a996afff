//! Risk in context: what the action's surroundings add to its findings. Production (declared by
//! the policy, the environment, a kube context, a git branch or a cloud profile, including the
//! ones a command names itself), behaviours (reading credentials, changing the agent's own
//! configuration, entering another agent's files, asking the person for secrets), uploads to
//! hosts the project does not know, and trusted directories. Each part of the score is kept
//! with its reason, so `airlock policy explain` can show where every point came from.

mod behaviour;
mod hosts;
mod production;
mod secrets;

use std::path::Path;

use serde::Serialize;

use crate::eval::{Context, resolve};
use crate::pattern::{NameGlob, PathPattern};
use crate::tiers::Settings;

pub use behaviour::{behaviours, evidence};
pub use hosts::{may_upload, unknown_upload_hosts, unlisted_fetch_host};
pub use production::{looks_read_only, production_reason};
pub use secrets::secrets_to_network;

/// One part of the risk score.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScorePart {
    /// `findings`, `production`, `recent_denials`, `behaviour.NAME`, `unknown_host`.
    pub part: String,
    pub points: u32,
    pub why: String,
}

/// Whether any glob of `list` matches `name` (globs were checked when their layer loaded).
pub(crate) fn any_glob(list: &[String], name: &str) -> Option<String> {
    list.iter()
        .find(|p| NameGlob::new(p).is_ok_and(|g| g.matches(name)))
        .cloned()
}

/// The trusted directory the working directory is in, when the person named one.
pub fn trusted_dir(s: &Settings, ctx: &Context) -> Option<String> {
    let cwd = ctx.cwd.as_deref()?;
    let cwd = resolve(cwd, None, ctx.home.as_deref());
    s.trusted_dirs
        .iter()
        .find(|d| {
            PathPattern::new(d)
                .ok()
                .and_then(|p| p.resolve(ctx.home.as_deref(), None))
                .is_some_and(|m| {
                    // the directory itself or anything below it
                    m.is_match(&cwd)
                        || Path::new(&cwd)
                            .ancestors()
                            .any(|a| m.is_match(a.to_string_lossy().as_ref()))
                })
        })
        .cloned()
}
