//! Hosts people have approved: when a person approves an action that was asked because it
//! uploads to a host the project does not know (`UNKNOWN_HOST`), that host becomes known, and
//! later uploads to it are not asked about again. The approval history is the grant's record.

use airlock_core::{Action, Finding, ReasonCode};
use airlock_policy::pattern::{hosts_in, url_host};

/// How many of the most recent decided approvals are searched for approved hosts.
pub const HISTORY: i64 = 500;

/// The hosts of actions a person approved that were asked for an unknown host.
pub fn approved_hosts(rows: &[airlock_store::ApprovalRow]) -> Vec<String> {
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
            Ok(Action::Shell { command, .. }) => out.extend(hosts_in(&command)),
            Ok(Action::NetworkFetch { url, .. }) => out.extend(url_host(&url)),
            _ => {}
        }
    }
    out.sort();
    out.dedup();
    out
}
