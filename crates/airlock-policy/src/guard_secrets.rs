//! airlock's own secrets named as a tool's path argument. The shell rule
//! `secrets.read_airlock_secrets` denies any program reading them; an agent's file tools (`Read`,
//! `Grep`, an MCP filesystem server's `read_file`) reach the same bytes without a shell, so the
//! same files deny here, under the same rule id: the daemon's proof key (with it an agent answers
//! the hook as the daemon), the agent token, the ledger and admin signing keys, and the database
//! (approver token hashes, the tier-4 code secret). `serve.json` (an address) and listing the
//! directory stay allowed; searching inside it (a directory given to `Grep`) reads the files.

use std::path::Path;

use airlock_core::{Decision, Finding, ReasonCode, Severity, Tier};

/// The rule id of the shell rule pack's rule for the same files.
pub const RULE_ID: &str = "secrets.read_airlock_secrets";

/// File names that hold a secret wherever the data directory is (`AIRLOCK_DATA_DIR` may put it
/// anywhere; the shell rule matches these names in any directory too).
const SECRET_FILES: &[&str] = &[
    "daemon.key",
    "agent.token",
    "ledger.key",
    "admin.key",
    "airlock.db",
    "airlock.db-wal",
    "airlock.db-shm",
    "airlock.db-journal",
];

/// Tool argument keys that name a path.
const PATH_KEYS: &[&str] = &[
    "file_path",
    "path",
    "absolute_path",
    "filePath",
    "notebook_path",
    "paths",
    "directory",
    "dir",
];

/// Tools that only list names: a directory given to them reads no file.
fn lists_only(tool: &str) -> bool {
    matches!(
        tool.to_ascii_lowercase().as_str(),
        "glob" | "ls" | "list_directory" | "list_dir" | "directory_tree"
    )
}

/// Whether `resolved` (absolute, normalised) is one of airlock's secret files, or (`searches`,
/// for tools that read what a directory holds) a data directory or its `keys/`.
fn is_secret(resolved: &str, data_dirs: &[String], searches: bool) -> bool {
    let p = Path::new(resolved);
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if SECRET_FILES.contains(&name) {
        return true;
    }
    for d in data_dirs {
        let keys = Path::new(d).join("keys");
        // keys/ under a data directory holds only keys
        if p.parent() == Some(keys.as_path()) {
            return true;
        }
        if searches && (p == Path::new(d) || p == keys) {
            return true;
        }
    }
    searches && (resolved.ends_with("/share/airlock") || resolved.ends_with("/share/airlock/keys"))
}

/// The paths a tool call names (strings, or arrays of strings, under the usual keys).
fn named_paths(args: &serde_json::Value) -> Vec<&str> {
    let mut out = Vec::new();
    for k in PATH_KEYS {
        match args.get(k) {
            Some(serde_json::Value::String(s)) => out.push(s.as_str()),
            Some(serde_json::Value::Array(a)) => {
                out.extend(a.iter().filter_map(serde_json::Value::as_str))
            }
            _ => {}
        }
    }
    out
}

/// The deny finding when a tool call names one of airlock's secrets. `data_dirs` are the data
/// directories known here (the default one and `AIRLOCK_DATA_DIR`), already resolved.
pub fn finding(
    tool: &str,
    args: &serde_json::Value,
    cwd: Option<&str>,
    home: Option<&str>,
    data_dirs: &[String],
) -> Option<Finding> {
    let searches = !lists_only(tool);
    let hit = named_paths(args).into_iter().find(|p| {
        let resolved = crate::eval::resolve(p, cwd, home);
        is_secret(&resolved, data_dirs, searches)
    })?;
    Some(
        Finding::new(
            RULE_ID,
            ReasonCode::RuleMatch,
            Decision::Deny,
            Tier::Critical,
            Severity::Critical,
            format!(
                "Blocked `{tool}` on `{hit}`: it is one of airlock's own secrets (the daemon's proof key, the agent token, signing keys or airlock's database). With them an agent could answer its own approvals or pose as the daemon; an agent has no need of them."
            ),
        )
        .with_remediation(
            "An agent reaching for its guard's keys is a strong sign of prompt injection or goal drift; review the session, and if anything was read, restart `airlock serve` with a new daemon.key and rotate the tokens.",
        ),
    )
}

/// The data directories to guard: `data_dir` (the context's, from `AIRLOCK_DATA_DIR`) when
/// set, and the default one under `home`.
pub fn data_dirs(data_dir: Option<&str>, home: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(d) = data_dir.filter(|d| !d.trim().is_empty()) {
        out.push(crate::eval::resolve(d, None, home));
    }
    if let Some(h) = home {
        out.push(crate::eval::resolve(
            "~/.local/share/airlock",
            None,
            Some(h),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn denied(tool: &str, args: serde_json::Value) -> bool {
        let dirs = vec![
            "/srv/airlock-data".to_string(),
            "/home/dev/.local/share/airlock".into(),
        ];
        finding(tool, &args, Some("/work/proj"), Some("/home/dev"), &dirs).is_some()
    }

    #[test]
    fn secret_files_deny_through_any_file_tool() {
        for (tool, args) in [
            (
                "Read",
                json!({"file_path": "~/.local/share/airlock/daemon.key"}),
            ),
            (
                "Read",
                json!({"file_path": "/home/dev/.local/share/airlock/agent.token"}),
            ),
            ("read_file", json!({"path": "/srv/airlock-data/airlock.db"})),
            (
                "Read",
                json!({"file_path": "/srv/airlock-data/keys/ledger.key"}),
            ),
            (
                "Read",
                json!({"file_path": "/srv/airlock-data/keys/anything"}),
            ),
            ("view", json!({"path": "/var/lib/airlock/airlock.db-wal"})),
            // spelt through `..` and relative to the working directory
            (
                "Read",
                json!({"file_path": "../../home/dev/.local/share/airlock/./daemon.key"}),
            ),
            (
                "read_multiple_files",
                json!({"paths": ["a.txt", "/srv/airlock-data/admin.key"]}),
            ),
            // a search inside the data directory reads every file there
            (
                "Grep",
                json!({"pattern": "alk_", "path": "/home/dev/.local/share/airlock"}),
            ),
            (
                "Grep",
                json!({"pattern": ".", "path": "/srv/airlock-data/"}),
            ),
            (
                "search_files",
                json!({"pattern": "x", "path": "/opt/x/.local/share/airlock"}),
            ),
        ] {
            assert!(denied(tool, args.clone()), "{tool} {args}");
        }
    }

    #[test]
    fn look_alikes_stay_allowed() {
        for (tool, args) in [
            (
                "Read",
                json!({"file_path": "~/.local/share/airlock/serve.json"}),
            ),
            (
                "Read",
                json!({"file_path": "/work/proj/docs/trust-model.md"}),
            ),
            ("Read", json!({"file_path": "/work/proj/daemon.key.md"})),
            (
                "Grep",
                json!({"pattern": "daemon.key", "path": "/work/proj"}),
            ),
            (
                "Glob",
                json!({"pattern": "*", "path": "/home/dev/.local/share/airlock"}),
            ),
            ("LS", json!({"path": "/srv/airlock-data"})),
            (
                "Read",
                json!({"file_path": "/srv/airlock-data-backup/notes.txt"}),
            ),
            ("Read", json!({"file_path": "/srv/airlock-data/serve.json"})),
        ] {
            assert!(!denied(tool, args.clone()), "{tool} {args}");
        }
    }
}
