//! Production: why a context is production (the policy, the caller, patterns over the
//! environment, kube context, git branch and cloud profile, and what a command names itself),
//! and which commands of a cloud CLI only read.

use super::any_glob;
use crate::eval::Context;
use crate::tiers::Settings;

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
}
