//! Hosts people have approved: when a person approves an action that was asked because it
//! uploads to a host the project does not know (`UNKNOWN_HOST`), that host becomes known, and
//! later uploads to it are not asked about again. The approval history is the grant's record.
//! Inside a project a host is known to that project only: an approval counts where its action
//! ran in the same project (a shell action's working directory under the same root).

use std::path::Path;

use airlock_core::{Action, Finding, ReasonCode};
use airlock_policy::pattern::{hosts_in, url_host};

/// How many of the most recent decided approvals are searched for approved hosts.
pub const HISTORY: i64 = 500;

/// The hosts of actions a person approved that were asked for an unknown host; with `project`
/// (the root of the project the action to decide runs in), only those approved for actions that
/// ran inside it.
pub fn approved_hosts(rows: &[airlock_store::ApprovalRow], project: Option<&Path>) -> Vec<String> {
    let mut out = Vec::new();
    for r in rows {
        if !r.by_person || r.status != "approved" {
            continue;
        }
        let asked_for_host = serde_json::from_str::<Vec<Finding>>(&r.reasons)
            .is_ok_and(|fs| fs.iter().any(|f| f.code == ReasonCode::UnknownHost));
        if !asked_for_host {
            continue;
        }
        match serde_json::from_str::<Action>(&r.action) {
            Ok(Action::Shell { command, cwd }) => {
                let here = match (project, cwd.as_deref()) {
                    (None, _) => true,
                    (Some(root), Some(cwd)) => Path::new(cwd).starts_with(root),
                    (Some(_), None) => false,
                };
                if here {
                    out.extend(hosts_in(&command));
                }
            }
            // a fetch names no directory: it belongs to no project, and counts outside them
            Ok(Action::NetworkFetch { url, .. }) if project.is_none() => out.extend(url_host(&url)),
            _ => {}
        }
    }
    out.sort();
    out.dedup();
    out
}
