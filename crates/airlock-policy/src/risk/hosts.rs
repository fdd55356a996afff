//! Known hosts: the hosts an upload or write goes to that the project does not know.

use airlock_core::Action;

use crate::eval::Context;
use crate::pattern::{DomainPattern, hosts_in, is_fetch_tool, is_read_method, url_host};
use crate::tiers::Settings;

/// Hosts an upload or write goes to that neither the policy nor the caller knows. Empty when
/// no known hosts are configured (the check is off) or the action uploads nothing.
pub fn unknown_upload_hosts(
    s: &Settings,
    ctx: &Context,
    action: &Action,
    commands: &[airlock_shell::Ran],
) -> Vec<String> {
    let project = ctx.project_hosts.as_deref();
    if !s.ask_unknown_hosts
        || (s.known_hosts.is_empty() && ctx.known_hosts.is_empty() && project.is_none())
    {
        return Vec::new();
    }
    let known = |h: &str| {
        project.is_some_and(|p| p.iter().any(|k| k == h))
            || names(s.known_hosts.iter().chain(&ctx.known_hosts), h)
    };
    let mut hosts = Vec::new();
    match action {
        Action::NetworkFetch { url, method } => {
            if !is_read_method(method)
                && let Some(h) = url_host(url)
            {
                hosts.push(h);
            }
        }
        Action::Shell { .. } => {
            for c in commands {
                if uploads(&c.text) {
                    hosts.extend(hosts_in(&c.text));
                    hosts.extend(remote_copy_hosts(&c.text));
                }
            }
        }
        _ => {}
    }
    hosts.retain(|h| !known(h) && !is_loopback(h));
    hosts.sort();
    hosts.dedup();
    hosts
}

/// Whether `action` may upload somewhere: a write fetch, or a shell line naming a program
/// that can send data ([`uploads`] decides on the analysed commands). A cheap superset, so that
/// callers read the project's hosts ([`crate::project_hosts`]) only when they may matter.
pub fn may_upload(action: &Action) -> bool {
    match action {
        Action::NetworkFetch { method, .. } => !is_read_method(method),
        Action::Shell { command, .. } => UPLOADERS.iter().any(|p| command.contains(p)),
        _ => false,
    }
}

/// The programs [`uploads`] knows, as they appear in a command's text.
const UPLOADERS: &[&str] = &[
    "curl", "wget", "http", "xh", "scp", "rsync", "sftp", "rclone",
];

/// The host a read fetch goes to when the policy lists the hosts web-fetch tools may read
/// (`[hosts] fetch`) and neither that list, the known hosts nor past approvals name it. `None`
/// when no list is configured, the action is no read fetch, or the host is listed. Loopback and
/// private addresses are left to the fetch findings (`NETWORK_INTERNAL`), which ask anyway.
pub fn unlisted_fetch_host(s: &Settings, ctx: &Context, action: &Action) -> Option<String> {
    if s.fetch_hosts.is_empty() {
        return None;
    }
    let url = match action {
        Action::NetworkFetch { url, method } if is_read_method(method) => url,
        Action::Tool { tool, arguments } if is_fetch_tool(tool) => {
            arguments.get("url")?.as_str()?
        }
        _ => return None,
    };
    let host = url_host(url)?;
    let listed = names(
        s.fetch_hosts
            .iter()
            .chain(&s.known_hosts)
            .chain(&ctx.known_hosts),
        &host,
    );
    (!listed && !is_loopback(&host)).then_some(host)
}

/// Whether any of the domain patterns names `host` (patterns were checked when their layer
/// loaded; the caller's known hosts come from approvals).
fn names<'a>(mut patterns: impl Iterator<Item = &'a String>, host: &str) -> bool {
    patterns.any(|d| DomainPattern::new(d).is_ok_and(|p| p.matches(host)))
}

fn is_loopback(h: &str) -> bool {
    h == "localhost" || h.starts_with("127.") || h == "::1" || h.ends_with(".localhost")
}

/// The hosts of `scp`/`rsync`/`sftp` operands in the `[user@]host:path` form (`sftp
/// user@host` without a path too): these name no scheme.
fn remote_copy_hosts(text: &str) -> Vec<String> {
    let mut words = text.split(' ');
    let prog = words.next().unwrap_or_default();
    if !matches!(prog, "scp" | "rsync" | "sftp") {
        return Vec::new();
    }
    words
        .filter(|w| !w.starts_with('-') && !w.contains("://"))
        .filter_map(|w| {
            let w = w.trim_matches(|c| c == '\'' || c == '"');
            let before = match w.split_once(':') {
                Some((h, _)) => h,
                None if prog == "sftp" && w.contains('@') => w,
                None => return None,
            };
            let host = before.rsplit('@').next().unwrap_or(before);
            // `C:` or a lone word is no host; a host has a dot (or is an IP literal)
            (host.contains('.') && !host.contains('/')).then(|| host.to_ascii_lowercase())
        })
        .collect()
}

/// A network client sending data: a body, a file, a form, or an explicit write method.
fn uploads(text: &str) -> bool {
    let mut words = text.split(' ');
    let Some(prog) = words.next() else {
        return false;
    };
    let words: Vec<&str> = words.collect();
    match prog {
        "curl" | "curlie" => words.iter().enumerate().any(|(i, w)| {
            w.starts_with("-d")
                || w.starts_with("--data")
                || w.starts_with("-F")
                || w.starts_with("--form")
                || w.starts_with("-T")
                || w.starts_with("--upload-file")
                || *w == "--json"
                || ((*w == "-X" || *w == "--request")
                    && words.get(i + 1).is_some_and(|m| {
                        matches!(
                            m.trim_matches('\'').to_ascii_uppercase().as_str(),
                            "POST" | "PUT" | "PATCH" | "DELETE"
                        )
                    }))
                || matches!(*w, "-XPOST" | "-XPUT" | "-XPATCH" | "-XDELETE")
        }),
        "wget" | "wget2" => words.iter().any(|w| {
            w.starts_with("--post-") || w.starts_with("--body-") || w.starts_with("--method")
        }),
        "http" | "https" | "xh" | "xhs" => words.iter().any(|w| {
            matches!(*w, "POST" | "PUT" | "PATCH" | "DELETE")
                || (!w.starts_with('-')
                    && !w.contains("://")
                    && (w.contains('=') || w.contains(":=") || w.starts_with('@')))
        }),
        "scp" | "rsync" | "sftp" | "rclone" => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uploads_are_bodies_files_and_write_methods() {
        for yes in [
            "curl -d x=1 https://a.example",
            "curl --data-binary @f https://a.example",
            "curl -T f https://a.example",
            "curl -X POST https://a.example",
            "curl -XPUT https://a.example",
            "wget --post-file=f https://a.example",
            "http POST a.example x=1",
            "http a.example x=1",
            "scp f user@a.example:",
        ] {
            assert!(uploads(yes), "{yes}");
        }
        for no in [
            "curl https://a.example",
            "curl -s -o out https://a.example",
            "wget https://a.example/f",
            "http a.example",
            "ls -d /x",
        ] {
            assert!(!uploads(no), "{no}");
        }
    }

    #[test]
    fn remote_copies_name_their_hosts() {
        assert_eq!(
            remote_copy_hosts("scp -P 2222 f.tgz deploy@backup.example.net:/srv/"),
            ["backup.example.net"]
        );
        assert_eq!(
            remote_copy_hosts("rsync -az ./dist/ web1.example.org:/var/www/"),
            ["web1.example.org"]
        );
        assert_eq!(
            remote_copy_hosts("sftp me@files.example.com"),
            ["files.example.com"]
        );
        assert!(remote_copy_hosts("rsync -a src/ dst/").is_empty());
        assert!(
            remote_copy_hosts("scp a.txt backup:/srv/").is_empty(),
            "an ssh alias"
        );
        assert!(remote_copy_hosts("curl -T f me@x.example:/").is_empty());
    }
}
