//! Risk in context: what the action's surroundings add to its findings. Production (declared by
//! the policy, the environment, a kube context, a git branch or a cloud profile, including the
//! ones a command names itself), behaviours (reading credentials, changing the agent's own
//! configuration, entering another agent's files, asking the person for secrets), uploads to
//! hosts the project does not know, and trusted directories. Each part of the score is kept
//! with its reason, so `airlock policy explain` can show where every point came from.

use std::path::Path;

use airlock_core::{Action, Finding};
use serde::Serialize;

use crate::eval::{Context, resolve};
use crate::pattern::{DomainPattern, NameGlob, PathPattern, hosts_in, url_host};
use crate::tiers::Settings;

/// One part of the risk score.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScorePart {
    /// `findings`, `production`, `recent_denials`, `behaviour.NAME`, `unknown_host`.
    pub part: String,
    pub points: u32,
    pub why: String,
}

/// Whether any glob of `list` matches `name` (globs were checked when their layer loaded).
fn any_glob(list: &[String], name: &str) -> Option<String> {
    list.iter()
        .find(|p| NameGlob::new(p).is_ok_and(|g| g.matches(name)))
        .cloned()
}

/// Why this context is production, or `None`.
pub fn production_reason(
    s: &Settings,
    ctx: &Context,
    commands: &[airlock_shell::Ran],
) -> Option<String> {
    if s.production {
        return Some("the policy declares this machine or project production".into());
    }
    if ctx.production {
        return Some("the caller declares this context production (AIRLOCK_PRODUCTION)".into());
    }
    let p = &s.production_patterns;
    let check = |what: &str, value: Option<&str>, globs: &[String]| {
        let v = value?;
        any_glob(globs, v).map(|g| format!("the {what} `{v}` matches the production pattern `{g}`"))
    };
    if let Some(r) = check("environment", ctx.environment.as_deref(), &p.environments)
        .or_else(|| {
            check(
                "kube context",
                ctx.kube_context.as_deref(),
                &p.kube_contexts,
            )
        })
        .or_else(|| check("git branch", ctx.git_branch.as_deref(), &p.git_branches))
        .or_else(|| {
            check(
                "cloud profile",
                ctx.cloud_profile.as_deref(),
                &p.cloud_profiles,
            )
        })
    {
        return Some(r);
    }
    // what the command line names itself: `kubectl --context prod-eu`, `aws --profile prod`,
    // `gcloud --project acme-prod`, `serverless deploy --stage prod`
    for c in commands {
        for (flag, value) in flags(&c.text) {
            let (what, globs) = match flag {
                "--context" | "--kube-context" | "--kubecontext" => {
                    ("kube context", &p.kube_contexts)
                }
                "--profile" | "--project" | "--subscription" | "--account" => {
                    ("cloud profile", &p.cloud_profiles)
                }
                "--env" | "--environment" | "--stage" | "-e" if value.len() > 1 => {
                    ("environment", &p.environments)
                }
                _ => continue,
            };
            if let Some(g) = any_glob(globs, value) {
                return Some(format!(
                    "the command names the {what} `{value}` ({flag}), which matches the production pattern `{g}`"
                ));
            }
        }
        // `AWS_PROFILE=prod aws …`, `KUBECONTEXT=prod …` kept in the command's text
        for w in c.text.split(' ') {
            if let Some((k, v)) = w.split_once('=') {
                let globs = match k {
                    "AWS_PROFILE" | "CLOUDSDK_CORE_PROJECT" | "CLOUDSDK_ACTIVE_CONFIG_NAME" => {
                        &p.cloud_profiles
                    }
                    "AIRLOCK_ENV" | "RAILS_ENV" | "NODE_ENV" | "APP_ENV" | "MIX_ENV" => {
                        &p.environments
                    }
                    _ => continue,
                };
                let v = v.trim_matches('\'');
                if let Some(g) = any_glob(globs, v) {
                    return Some(format!(
                        "the command sets {k}={v}, which matches the production pattern `{g}`"
                    ));
                }
            }
        }
    }
    None
}

/// Whether a command not on the analyser's read-only list still reads only, by its verbs: one
/// of its first words is a read verb (`get`, `ls`, `describe-instances`) and no word at all is a
/// write verb (`apply`, `put-object`, `delete`). For production, where an unknown command asks:
/// `aws --profile prod s3 ls` reads, `aws --profile prod s3 cp …` does not.
pub fn looks_read_only(text: &str) -> bool {
    const READ: &[&str] = &[
        "ls",
        "list",
        "get",
        "describe",
        "show",
        "status",
        "logs",
        "log",
        "view",
        "top",
        "version",
        "whoami",
        "diff",
        "plan",
        "preview",
        "inspect",
        "info",
        "history",
        "explain",
        "tail",
        "search",
        "current-context",
        "get-contexts",
        "cat",
    ];
    const WRITE_PREFIX: &[&str] = &[
        "apply",
        "create",
        "delete",
        "deploy",
        "put",
        "update",
        "set",
        "rm",
        "mv",
        "cp",
        "sync",
        "run",
        "exec",
        "patch",
        "scale",
        "rollout",
        "edit",
        "replace",
        "invoke",
        "start",
        "stop",
        "terminate",
        "modify",
        "attach",
        "detach",
        "remove",
        "destroy",
        "up",
        "down",
        "push",
        "publish",
        "release",
        "restart",
        "reboot",
        "drain",
        "cordon",
        "taint",
        "label",
        "annotate",
        "expose",
        "autoscale",
        "install",
        "upgrade",
        "uninstall",
        "rollback",
        "import",
        "export",
        "send",
        "execute",
        "enable",
        "disable",
        "add",
        "revoke",
        "grant",
        "reset",
        "restore",
        "copy",
        "move",
        "write",
        "upload",
        "promote",
        "approve",
        "cancel",
        "purge",
        "register",
        "deregister",
        "associate",
        "disassociate",
        "tag",
        "untag",
    ];
    // only for CLIs whose words are subcommands; for any other program a word is an operand
    // (`rm status` removes a file named status)
    const CLIS: &[&str] = &[
        "aws",
        "gcloud",
        "az",
        "kubectl",
        "oc",
        "helm",
        "gh",
        "glab",
        "doctl",
        "fly",
        "flyctl",
        "heroku",
        "vercel",
        "netlify",
        "railway",
        "terraform",
        "tofu",
        "pulumi",
        "docker",
        "podman",
        "eksctl",
        "hcloud",
        "firebase",
        "supabase",
        "wrangler",
        "stripe",
        "render",
    ];
    let mut words = text.split(' ');
    if !words.next().is_some_and(|p| CLIS.contains(&p)) {
        return false;
    }
    let positional: Vec<&str> = words
        .filter(|w| !w.starts_with('-') && !w.contains('='))
        .map(|w| w.trim_matches('\''))
        .collect();
    let reads = positional.iter().take(4).any(|w| {
        READ.contains(w)
            || w.starts_with("describe-")
            || w.starts_with("list-")
            || w.starts_with("get-")
    });
    let writes = positional.iter().any(|w| {
        let w = w.to_ascii_lowercase();
        WRITE_PREFIX
            .iter()
            .any(|p| w == *p || w.starts_with(&format!("{p}-")) || w.starts_with(&format!("{p}_")))
    });
    reads && !writes
}

/// `--flag value` and `--flag=value` pairs of a command's text.
fn flags(text: &str) -> Vec<(&str, &str)> {
    let words: Vec<&str> = text.split(' ').collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if !w.starts_with('-') {
            continue;
        }
        if let Some((f, v)) = w.split_once('=') {
            out.push((f, v.trim_matches('\'')));
        } else if let Some(v) = words.get(i + 1) {
            out.push((w, v.trim_matches('\'')));
        }
    }
    out
}

/// The dot-directory an agent keeps its configuration, memory and sessions in.
fn own_dir(agent: Option<&str>) -> Option<&'static str> {
    let a = agent?.to_ascii_lowercase();
    [
        ("claude", ".claude"),
        ("codex", ".codex"),
        ("gemini", ".gemini"),
        ("copilot", ".copilot"),
        ("cursor", ".cursor"),
    ]
    .into_iter()
    .find(|(k, _)| a.contains(k))
    .map(|(_, d)| d)
}

const AGENT_DIRS: &[&str] = &[".claude", ".codex", ".gemini", ".copilot", ".cursor"];
const INSTRUCTION_FILES: &[&str] = &[
    "claude.md",
    "claude.local.md",
    "agents.md",
    "gemini.md",
    ".cursorrules",
    "copilot-instructions.md",
];

/// Evidence for behaviours: the rule ids of the findings, plus what the policy sees itself in
/// the paths an action reads or writes (`paths.*` classes of read paths, `policy.other_agent`,
/// `policy.agent_instructions`).
pub fn evidence(
    action: &Action,
    ctx: &Context,
    findings: &[Finding],
    commands: &[airlock_shell::Ran],
) -> Vec<String> {
    let mut ev: Vec<String> = findings.iter().map(|f| f.rule_id.clone()).collect();
    let mut paths: Vec<(String, bool)> = Vec::new();
    match action {
        Action::FileWrite { path, .. } => paths.push((path.clone(), true)),
        Action::Tool { arguments, .. } => {
            for k in [
                "file_path",
                "path",
                "absolute_path",
                "filePath",
                "notebook_path",
            ] {
                if let Some(p) = arguments.get(k).and_then(|v| v.as_str()) {
                    paths.push((p.to_string(), false));
                }
            }
        }
        Action::Shell { .. } => {
            for c in commands {
                for w in c.text.split(' ').skip(1) {
                    let w = w.trim_matches('\'');
                    if !w.starts_with('-') && (w.contains('/') || w.starts_with('.')) {
                        paths.push((w.to_string(), false));
                    }
                }
            }
        }
        _ => {}
    }
    let own = own_dir(ctx.agent.as_deref());
    for (p, write) in paths {
        let resolved = resolve(&p, ctx.cwd.as_deref(), ctx.home.as_deref());
        if !write
            && let Some(f) =
                airlock_shell::paths::write_target_finding(&resolved, ctx.home.as_deref())
        {
            ev.push(format!("read.{}", f.rule_id));
        }
        let comps: Vec<&str> = resolved.split('/').collect();
        if let Some(d) = comps.iter().find(|c| AGENT_DIRS.contains(c))
            && own.is_some_and(|o| o != *d)
        {
            ev.push("policy.other_agent".into());
        }
        if comps
            .iter()
            .any(|c| *c == "sessions" || *c == "projects" || *c == "history.jsonl")
            && comps.iter().any(|c| AGENT_DIRS.contains(c))
            && own.is_none_or(|o| !comps.contains(&o))
        {
            ev.push("policy.other_agent".into());
        }
        if write
            && comps
                .last()
                .is_some_and(|b| INSTRUCTION_FILES.contains(&b.to_ascii_lowercase().as_str()))
        {
            ev.push("policy.agent_instructions".into());
        }
    }
    ev.sort();
    ev.dedup();
    ev
}

/// The behaviours `evidence` (and a sent message's text) show: name, weight, why.
pub fn behaviours(s: &Settings, ev: &[String], action: &Action) -> Vec<(String, u32, String)> {
    let text = match action {
        Action::MessageSend { body, .. } => Some(body.as_str()),
        _ => None,
    };
    let mut out = Vec::new();
    for (name, b) in &s.behaviours {
        if b.weight == 0 {
            continue;
        }
        let by_rule = ev.iter().find(|e| any_glob(&b.rules, e).is_some());
        let by_text = text.is_some_and(|t| {
            b.text
                .iter()
                .any(|r| regex::Regex::new(r).is_ok_and(|re| re.is_match(t)))
        });
        if by_rule.is_none() && !by_text {
            continue;
        }
        let what = if b.message.is_empty() {
            format!("the action shows the behaviour `{name}`")
        } else {
            b.message.clone()
        };
        let why = match by_rule {
            Some(r) => format!("{what} (seen in `{r}`)"),
            None => format!("{what} (seen in the message text)"),
        };
        out.push((name.clone(), b.weight, why));
    }
    out
}

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
    let known = |h: &str| {
        s.known_hosts
            .iter()
            .chain(&ctx.known_hosts)
            .any(|d| DomainPattern::new(d).is_ok_and(|p| p.matches(h)))
    };
    let mut hosts = Vec::new();
    match action {
        Action::NetworkFetch { url, method } => {
            if !matches!(
                method.to_ascii_uppercase().as_str(),
                "GET" | "HEAD" | "OPTIONS"
            ) && let Some(h) = url_host(url)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_read_both_spellings() {
        assert_eq!(
            flags("kubectl --context=prod-eu apply -f x.yaml"),
            vec![("--context", "prod-eu"), ("-f", "x.yaml")]
        );
        assert_eq!(flags("aws --profile prod s3 ls")[0], ("--profile", "prod"));
    }

    #[test]
    fn read_verbs_read_and_any_write_verb_writes() {
        for yes in [
            "aws --profile prod s3 ls",
            "aws ec2 describe-instances --profile prod",
            "kubectl --context prod-eu get pods",
        ] {
            assert!(looks_read_only(yes), "{yes}");
        }
        for no in [
            "aws --profile prod s3 cp x s3://b/",
            "aws s3api put-object --bucket b --key k",
            "kubectl --context prod-eu get pods delete",
            "kubectl --context prod-eu apply -f x.yaml",
            "make ls-remote-and-deploy",
            "touch ls",
            "rm -rf logs",
            "gcloud run deploy api",
            // a word that is a write verb anywhere makes it a write, even a group name: the
            // cost is a question in production, never a silent change
            "gcloud --project acme-prod run services list",
        ] {
            assert!(!looks_read_only(no), "{no}");
        }
    }

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
