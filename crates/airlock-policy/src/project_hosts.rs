//! The hosts a project's own files name: the URLs of its git remotes and every `scheme://host`
//! written in its files. An upload to one of them is part of the project's work; an upload to
//! any other host asks (`policy.unknown_host`). Read from the working tree by plain file reads,
//! never by running `git` (a repository's configuration can make `git` run programs, and the
//! agent may have written it).
//!
//! A file the agent just wrote must not make its own destination known, so files modified in
//! the last [`MIN_AGE`] are skipped: a host enters the list only through files that were there
//! before. The remotes in `.git/config` are read under the same rule.
//!
//! The walk is bounded (files, bytes, depth) and skips dependency and build trees, so a large
//! repository costs a fixed ceiling. Callers read it only for actions that may upload.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::pattern::url_host;

/// Files modified more recently than this are not read (see the module's note).
pub const MIN_AGE: Duration = Duration::from_secs(3600);
/// The most files read.
const MAX_FILES: usize = 4000;
/// The most bytes read from one file.
const MAX_FILE_BYTES: u64 = 256 * 1024;
/// The most bytes read in all.
const MAX_TOTAL_BYTES: u64 = 16 * 1024 * 1024;
/// The deepest directory entered below the root.
const MAX_DEPTH: usize = 10;
/// The most hosts kept.
const MAX_HOSTS: usize = 5000;

/// Directories never entered: other people's code, build output, caches.
const SKIP_DIRS: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    "vendor",
    "dist",
    "build",
    "out",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".mypy_cache",
    ".cache",
    ".next",
    "bower_components",
    "Pods",
    ".gradle",
    ".idea",
];

impl crate::eval::Context {
    /// Fills [`project_hosts`](crate::eval::Context::project_hosts) from the project `cwd` is in,
    /// when `action` may upload and nothing filled it yet.
    pub fn with_project_hosts(mut self, action: &airlock_core::Action) -> Self {
        if self.project_hosts.is_none() && crate::risk::may_upload(action) {
            self.project_hosts = self
                .cwd
                .as_deref()
                .filter(|c| c.starts_with('/'))
                .and_then(|c| project_hosts(Path::new(c)));
        }
        self
    }
}

/// The project root at or above `dir`: the nearest directory holding `.git`.
pub fn project_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The hosts named by the project at or above `dir`, lower-cased and sorted; `None` when `dir`
/// is in no project (no `.git` above it).
pub fn project_hosts(dir: &Path) -> Option<Vec<String>> {
    project_hosts_at(dir, SystemTime::now())
}

/// [`project_hosts`] as seen at `now` (files modified after `now - MIN_AGE` are skipped).
pub fn project_hosts_at(dir: &Path, now: SystemTime) -> Option<Vec<String>> {
    let root = project_root(dir)?;
    let cutoff = now.checked_sub(MIN_AGE).unwrap_or(SystemTime::UNIX_EPOCH);
    let mut walk = Walk {
        cutoff,
        files: 0,
        bytes: 0,
        hosts: BTreeSet::new(),
    };
    if let Some(config) = git_config(&root) {
        walk.read_file(&config, &mut |text, hosts| remote_hosts(text, hosts));
    }
    walk.dir(&root, 0);
    Some(walk.hosts.into_iter().collect())
}

struct Walk {
    cutoff: SystemTime,
    files: usize,
    bytes: u64,
    hosts: BTreeSet<String>,
}

impl Walk {
    fn full(&self) -> bool {
        self.files >= MAX_FILES || self.bytes >= MAX_TOTAL_BYTES || self.hosts.len() >= MAX_HOSTS
    }

    fn dir(&mut self, dir: &Path, depth: usize) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        // a stable order, so that the bounds cut the same files every time
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        let mut subdirs = Vec::new();
        for e in entries {
            if self.full() {
                return;
            }
            // never follow a link: it may point anywhere, or at itself
            let Ok(kind) = e.file_type() else { continue };
            let name = e.file_name();
            let name = name.to_string_lossy();
            if kind.is_dir() {
                if !SKIP_DIRS.contains(&name.as_ref()) && !name.starts_with('.') {
                    subdirs.push(e.path());
                }
            } else if kind.is_file() && text_like(&name) {
                self.read_file(&e.path(), &mut |text, hosts| url_hosts(text, hosts));
            }
        }
        if depth < MAX_DEPTH {
            for d in subdirs {
                self.dir(&d, depth + 1);
            }
        }
    }

    fn read_file(&mut self, path: &Path, scan: &mut dyn FnMut(&str, &mut BTreeSet<String>)) {
        let Ok(meta) = std::fs::metadata(path) else {
            return;
        };
        // a file without a modification time, or one changed within MIN_AGE, is not read
        if !meta.modified().is_ok_and(|m| m <= self.cutoff) {
            return;
        }
        let Ok(f) = std::fs::File::open(path) else {
            return;
        };
        let budget = MAX_FILE_BYTES.min(MAX_TOTAL_BYTES.saturating_sub(self.bytes));
        let mut buf = Vec::new();
        if f.take(budget).read_to_end(&mut buf).is_err() {
            return;
        }
        self.files += 1;
        self.bytes += buf.len() as u64;
        // binary files hold no URLs worth trusting
        if buf.contains(&0) {
            return;
        }
        scan(&String::from_utf8_lossy(&buf), &mut self.hosts);
    }
}

/// Whether a file's name says it holds text a project writes URLs in (source, configuration,
/// documentation); images, archives and lock files are left out.
fn text_like(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "Dockerfile",
        "Makefile",
        "Procfile",
        "Gemfile",
        "Jenkinsfile",
        "Vagrantfile",
        "README",
        ".npmrc",
        ".pypirc",
        ".gitmodules",
        ".env.example",
    ];
    const EXTS: &[&str] = &[
        "rs",
        "py",
        "js",
        "mjs",
        "cjs",
        "ts",
        "tsx",
        "jsx",
        "go",
        "rb",
        "java",
        "kt",
        "kts",
        "scala",
        "swift",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "cs",
        "php",
        "pl",
        "lua",
        "sh",
        "bash",
        "zsh",
        "ps1",
        "toml",
        "json",
        "yaml",
        "yml",
        "ini",
        "cfg",
        "conf",
        "properties",
        "xml",
        "gradle",
        "md",
        "rst",
        "txt",
        "adoc",
        "html",
        "vue",
        "svelte",
        "sql",
        "tf",
        "hcl",
        "mod",
    ];
    if NAMES.contains(&name) {
        return true;
    }
    if name.ends_with(".lock") || name.ends_with("-lock.json") || name.ends_with(".min.js") {
        return false;
    }
    name.rsplit_once('.')
        .is_some_and(|(_, ext)| EXTS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// The configuration file of the repository at `root` (`.git/config`, or through a worktree's
/// or submodule's `gitdir:` link, the common directory's).
fn git_config(root: &Path) -> Option<PathBuf> {
    let dotgit = root.join(".git");
    if dotgit.is_dir() {
        return Some(dotgit.join("config"));
    }
    let mut text = String::new();
    std::fs::File::open(&dotgit)
        .ok()?
        .take(4096)
        .read_to_string(&mut text)
        .ok()?;
    let gitdir = text.trim().strip_prefix("gitdir:")?.trim();
    let gitdir = root.join(gitdir);
    // a linked worktree keeps its configuration in the common directory
    let common = std::fs::read_to_string(gitdir.join("commondir"))
        .ok()
        .map(|c| gitdir.join(c.trim()));
    Some(common.unwrap_or(gitdir).join("config"))
}

/// The hosts of `url = …` lines of a git configuration (`https://host/…`, `ssh://git@host/…`
/// and the scp form `git@host:owner/repo`).
fn remote_hosts(config: &str, hosts: &mut BTreeSet<String>) {
    for line in config.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if !matches!(key.trim(), "url" | "pushurl") {
            continue;
        }
        let value = value.trim().trim_matches('"');
        let host = if value.contains("://") {
            url_host(value)
        } else {
            // scp-like: [user@]host:path
            value
                .split_once(':')
                .map(|(h, _)| h.rsplit('@').next().unwrap_or(h).to_ascii_lowercase())
                .filter(|h| valid_host(h))
        };
        hosts.extend(host.filter(|h| valid_host(h)));
    }
}

/// Every `scheme://host` in `text`.
fn url_hosts(text: &str, hosts: &mut BTreeSet<String>) {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(i) = text[from..].find("://") {
        let at = from + i;
        from = at + 3;
        // the scheme: letters, digits, `+.-` before `://`, starting with a letter
        let start = bytes[..at]
            .iter()
            .rposition(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-')))
            .map_or(0, |p| p + 1);
        if start == at || !bytes[start].is_ascii_alphabetic() {
            continue;
        }
        let end = bytes[from..]
            .iter()
            .position(|b| {
                b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b'<' | b'>' | b'`' | b')')
            })
            .map_or(bytes.len(), |p| from + p);
        if let Some(h) = url_host(&text[start..end]).filter(|h| valid_host(h)) {
            hosts.insert(h);
        }
    }
}

/// A host name worth keeping: a DNS name with a dot or an IP literal, nothing a template or
/// placeholder left (`${HOST}`, `{host}`, `%s`).
fn valid_host(h: &str) -> bool {
    !h.is_empty()
        && h.len() <= 253
        && (h.contains('.') || h.contains(':'))
        && h.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':'))
        && !h.starts_with(['.', '-'])
        && !h.ends_with(['.', '-'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(f: impl Fn(&mut BTreeSet<String>)) -> Vec<String> {
        let mut s = BTreeSet::new();
        f(&mut s);
        s.into_iter().collect()
    }

    #[test]
    fn urls_in_text_give_their_hosts() {
        let text = "see https://API.Example.com/v1?x=1, (http://docs.example.org) \
                    `wss://stream.example.net:8443/feed` git+ssh://git@git.example.io/a.git \
                    ${BASE}://x.y https://${HOST}/path https://{host}/ https://localhost/ \
                    ://bare.example";
        assert_eq!(
            set(|h| url_hosts(text, h)),
            [
                "api.example.com",
                "docs.example.org",
                "git.example.io",
                "stream.example.net",
            ]
        );
    }

    #[test]
    fn remotes_in_every_form() {
        let config = "[remote \"origin\"]\n\turl = git@github.com:acme/tool.git\n\
                      [remote \"up\"]\n\turl = https://gitlab.example.com/acme/tool\n\
                      \tpushurl = ssh://git@push.example.com:2222/acme/tool\n\
                      [core]\n\tbare = false\n";
        assert_eq!(
            set(|h| remote_hosts(config, h)),
            ["github.com", "gitlab.example.com", "push.example.com"]
        );
    }

    #[test]
    fn text_files_by_name() {
        for yes in [
            "main.rs",
            "Cargo.toml",
            "package.json",
            "README.md",
            "Dockerfile",
            "a.YAML",
        ] {
            assert!(text_like(yes), "{yes}");
        }
        for no in [
            "Cargo.lock",
            "package-lock.json",
            "logo.png",
            "app.min.js",
            "a.tar.gz",
        ] {
            assert!(!text_like(no), "{no}");
        }
    }
}
