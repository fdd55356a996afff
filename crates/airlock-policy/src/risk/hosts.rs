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
    if !s.ask_unknown_hosts || (s.known_hosts.is_empty() && ctx.known_hosts.is_empty()) {
        return Vec::new();
    }
    let known = |h: &str| names(s.known_hosts.iter().chain(&ctx.known_hosts), h);
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
}
