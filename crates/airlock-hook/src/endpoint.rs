//! Where a running `airlock serve` is, for the hook and the one-shot commands: `--url` or
//! `AIRLOCK_URL`, else the `serve.json` that `airlock serve` writes into the data directory while
//! it runs. Which token: `--token` or `AIRLOCK_TOKEN`, else (agents only) the `agent.token` file
//! the daemon writes beside it, so hooks on the same machine work without setup. An approver's
//! token is never written to disk by airlock: the person passes it. Which daemon: the one that
//! proves `daemon.key` from the same data directory (`proof`); plain HTTP is only ever spoken
//! to a daemon that has.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::proof::DaemonKey;

/// The file `airlock serve` writes into the data directory while it runs.
pub const SERVE_FILE: &str = "serve.json";
/// The agent token of this machine's hooks (owner-only permissions).
pub const AGENT_TOKEN_FILE: &str = "agent.token";

/// What `serve.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServeInfo {
    pub url: String,
    pub pid: u32,
    pub node: String,
}

/// A daemon's address and the token to present.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub url: String,
    pub token: Option<String>,
    /// The key the daemon proves its answers with (`daemon.key` in the data directory).
    pub key: Option<DaemonKey>,
}

impl Endpoint {
    /// The daemon for this data directory: explicit values first, then the environment, then
    /// the files the daemon wrote. `agent` also reads the machine's agent token file.
    pub fn discover(
        data_dir: &Path,
        url: Option<String>,
        token: Option<String>,
        agent: bool,
    ) -> Option<Endpoint> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let url = url.or_else(|| env("AIRLOCK_URL")).or_else(|| {
            let text = std::fs::read_to_string(data_dir.join(SERVE_FILE)).ok()?;
            serde_json::from_str::<ServeInfo>(&text).ok().map(|i| i.url)
        })?;
        let token = token.or_else(|| env("AIRLOCK_TOKEN")).or_else(|| {
            agent
                .then(|| std::fs::read_to_string(data_dir.join(AGENT_TOKEN_FILE)).ok())
                .flatten()
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
        });
        Some(Endpoint {
            url: url.trim_end_matches('/').to_string(),
            token,
            key: DaemonKey::load(data_dir),
        })
    }
}

/// The data directory when no `--data-dir` was given: `AIRLOCK_DATA_DIR`, else the user's data
/// directory for airlock. The same place `airlock` itself uses (a test in the `airlock` crate
/// holds the two together).
pub fn data_dir_from_env() -> PathBuf {
    std::env::var_os("AIRLOCK_DATA_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(default_data_dir)
}

/// The user's data directory for airlock (`$XDG_DATA_HOME/airlock`, `~/.local/share/airlock`,
/// or the platform's equivalent), or `./.airlock` when the platform has none.
pub fn default_data_dir() -> PathBuf {
    dirs::data_dir()
        .map(|d| d.join("airlock"))
        .unwrap_or_else(|| PathBuf::from(".airlock"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_reads_the_files_the_daemon_wrote() {
        if std::env::var_os("AIRLOCK_URL").is_some() || std::env::var_os("AIRLOCK_TOKEN").is_some()
        {
            return; // the environment wins over the files; nothing to check here
        }
        let dir = tempfile::tempdir().unwrap();
        assert!(Endpoint::discover(dir.path(), None, None, true).is_none());
        let info = ServeInfo {
            url: "http://127.0.0.1:7373/".into(),
            pid: 1,
            node: "n".into(),
        };
        let info = serde_json::to_string(&info).unwrap();
        std::fs::write(dir.path().join(SERVE_FILE), info).unwrap();
        std::fs::write(dir.path().join(AGENT_TOKEN_FILE), "alk_secret\n").unwrap();
        let ep = Endpoint::discover(dir.path(), None, None, true).unwrap();
        assert_eq!(ep.url, "http://127.0.0.1:7373");
        assert_eq!(ep.token.as_deref(), Some("alk_secret"));
        assert!(ep.key.is_none(), "no daemon.key yet");
        let key = DaemonKey::generate().unwrap();
        std::fs::write(dir.path().join(crate::proof::DAEMON_KEY_FILE), key.to_hex()).unwrap();
        let ep = Endpoint::discover(dir.path(), None, None, true).unwrap();
        assert_eq!(ep.key, Some(key));
        let person = Endpoint::discover(dir.path(), None, None, false).unwrap();
        assert_eq!(
            person.token, None,
            "a person's command never picks up the agent token"
        );
        let explicit = Endpoint::discover(
            dir.path(),
            Some("http://h:1".into()),
            Some("t".into()),
            true,
        );
        let explicit = explicit.unwrap();
        assert_eq!(explicit.url, "http://h:1");
        assert_eq!(explicit.token.as_deref(), Some("t"));
    }
}
