//! A session's crisis mode as this machine keeps it without a daemon: one small file per session
//! under `<data dir>/crisis/`, named by the SHA-256 of the session id. The hook marks it when the
//! person's prompt gets a crisis verdict and reads it on every tool call of that session (the
//! policy's crisis mode: support tools never gated, decision tools need a person). A running
//! daemon keeps the same state in its store for every node (`airlock-store`'s `session_crisis`),
//! and the hook reports each mark to it (`daemon::report_crisis`). Only an approver clears it
//! (`airlock crisis clear`, which removes the file and the store's row).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::protocol::Protocol;

/// The directory under the data directory.
pub const DIR: &str = "crisis";

/// Why and since when a session is in crisis mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    pub session: String,
    pub since_ms: i64,
    /// The surface that saw the crisis (`hook:claude`, `proxy`, `mcp:<server>`, …).
    pub source: String,
    /// The scanner's rule that fired first (`crisis.*`), or the verdict.
    pub rule: String,
}

/// The session a hook event belongs to: `AIRLOCK_SESSION` when set, else the agent's session
/// id, else one session per agent (`claude-hook`): without an id, crisis mode covers every
/// session of that agent on this machine rather than none.
pub fn session_key(protocol: Protocol, session: Option<&str>) -> String {
    std::env::var("AIRLOCK_SESSION")
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| session.map(str::to_string))
        .unwrap_or_else(|| format!("{}-hook", protocol.name()))
}

/// The file of `session`'s mark.
pub fn path(data_dir: &Path, session: &str) -> PathBuf {
    let digest = Sha256::digest(session.as_bytes());
    let name: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    data_dir.join(DIR).join(format!("{name}.json"))
}

/// `session`'s mark, if it is in crisis mode. A file that cannot be read as a mark still counts
/// as one: its session stays in crisis mode until an approver clears it.
pub fn get(data_dir: &Path, session: &str) -> Option<Mark> {
    let p = path(data_dir, session);
    match fs::read(&p) {
        Ok(bytes) => Some(serde_json::from_slice(&bytes).unwrap_or_else(|_| Mark {
            session: session.to_string(),
            since_ms: 0,
            source: "unreadable mark".to_string(),
            rule: p.display().to_string(),
        })),
        Err(_) => None,
    }
}

/// Marks `mark.session` in crisis mode; false when it already was (the first mark is kept).
/// Written owner-only, through a temporary file and a rename.
pub fn mark(data_dir: &Path, mark: &Mark) -> std::io::Result<bool> {
    let p = path(data_dir, &mark.session);
    if p.exists() {
        return Ok(false);
    }
    let dir = data_dir.join(DIR);
    create_private_dir(&dir)?;
    let body = serde_json::to_vec(mark).map_err(std::io::Error::other)?;
    let tmp = dir.join(format!(".mark-{}.tmp", std::process::id()));
    let written = (|| {
        let mut f = private_file(&tmp)?;
        f.write_all(&body)?;
        f.sync_all()?;
        fs::rename(&tmp, &p)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written.map(|()| true)
}

/// Ends `session`'s crisis mode here; false when it was not in it.
pub fn clear(data_dir: &Path, session: &str) -> std::io::Result<bool> {
    match fs::remove_file(path(data_dir, session)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Every session marked here, oldest first.
pub fn list(data_dir: &Path) -> Vec<Mark> {
    let Ok(entries) = fs::read_dir(data_dir.join(DIR)) else {
        return Vec::new();
    };
    let mut out: Vec<Mark> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .filter_map(|e| serde_json::from_slice(&fs::read(e.path()).ok()?).ok())
        .collect();
    out.sort_by(|a, b| (a.since_ms, &a.session).cmp(&(b.since_ms, &b.session)));
    out
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

fn private_file(p: &Path) -> std::io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(session: &str, since_ms: i64) -> Mark {
        Mark {
            session: session.into(),
            since_ms,
            source: "hook:claude".into(),
            rule: "crisis.x".into(),
        }
    }

    #[test]
    fn mark_get_list_clear() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(get(d.path(), "s1"), None);
        assert!(mark(d.path(), &m("s1", 5)).unwrap_or(false));
        // the first mark stays
        assert!(!mark(d.path(), &m("s1", 9)).unwrap_or(true));
        assert!(mark(d.path(), &m("s0/../x", 3)).unwrap_or(false));
        assert_eq!(get(d.path(), "s1").map(|x| x.since_ms), Some(5));
        let all: Vec<String> = list(d.path()).into_iter().map(|x| x.session).collect();
        assert_eq!(all, ["s0/../x", "s1"]);
        assert!(clear(d.path(), "s1").unwrap_or(false));
        assert!(!clear(d.path(), "s1").unwrap_or(true));
        assert_eq!(get(d.path(), "s1"), None);
    }

    #[test]
    fn an_unreadable_mark_still_counts() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = path(d.path(), "s");
        fs::create_dir_all(p.parent().unwrap_or(d.path())).unwrap_or(());
        fs::write(&p, b"not json").unwrap_or(());
        assert!(get(d.path(), "s").is_some());
    }
}
