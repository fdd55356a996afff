//! What a normalised path is: the file lists and predicates behind each class (credentials,
//! shell start-up files, persistence, agent configuration, the guard's own binaries, …).

use airlock_core::Decision;

use super::Class;
use super::target::Target;

/// Files under /etc that decide who can log in or become root.
pub(super) const AUTH_FILES: &[&str] = &[
    "passwd",
    "shadow",
    "group",
    "gshadow",
    "sudoers",
    "sudoers.d",
    "pam.d",
    "security",
];

/// Top-level directories holding system software.
pub(super) const SYSTEM_DIRS: &[&str] = &[
    "bin", "sbin", "usr", "lib", "lib32", "lib64", "libx32", "opt", "snap", "system",
];

/// Directories where coding agents keep settings, commands, memory and instructions.
pub(super) const AGENT_DIRS: &[&str] = &[".claude", ".codex", ".gemini", ".copilot", ".cursor"];

pub(super) fn is_harmless_device(t: &Target) -> bool {
    match t.comps.get(1).map(String::as_str) {
        // Writing to the `/dev` directory itself is not writing to a device.
        None => true,
        Some(d) => matches!(
            d,
            "null"
                | "zero"
                | "full"
                | "random"
                | "urandom"
                | "stdout"
                | "stderr"
                | "stdin"
                | "tty"
                | "fd"
                | "shm"
                | "pts"
                | "ptmx"
        ),
    }
}

/// `/proc/self/fd/N` and `/proc/<pid>/fd/N` are the process's own streams.
pub(super) fn is_proc_fd(t: &Target) -> bool {
    t.comps.len() >= 3
        && t.comps[2] == "fd"
        && (t.comps[1] == "self" || t.comps[1].bytes().all(|b| b.is_ascii_digit()))
}

pub(super) fn is_agent_config(t: &Target) -> bool {
    const SEQS: &[&[&str]] = &[
        &[".claude", "settings.json"],
        &[".claude", "settings.local.json"],
        &[".claude", "hooks"],
        &[".codex", "config.toml"],
        &[".codex", "hooks.json"],
        &[".codex", "requirements.toml"],
        &[".codex", "hooks"],
        &[".gemini", "settings.json"],
        &[".gemini", "policies"],
        &[".gemini", "hooks"],
        &[".copilot", "config.json"],
        &[".copilot", "settings.json"],
        &[".copilot", "hooks"],
        &[".github", "hooks"],
        &[".github", "copilot", "settings.json"],
        &[".github", "copilot", "settings.local.json"],
        &[".config", "airlock"],
        // Hermes Agent: its plugin list and plugins (airlock's guard is one of them).
        &[".hermes", "config.yaml"],
        &[".hermes", "plugins"],
        // airlock's default data directory: `serve.json` tells hooks and plugins where the
        // daemon is, so rewriting it points them at a fake one.
        &[".local", "share", "airlock"],
    ];
    const MANAGED: &[&str] = &["claude-code", "codex", "gemini-cli", "github-copilot"];
    SEQS.iter().any(|s| t.has_seq(s))
        || matches!(t.basename(), ".claude.json" | ".mcp.json")
        || t.has_comp(".airlock")
        || (t.under(&["etc"])
            && t.comps
                .get(1)
                .is_some_and(|c| MANAGED.contains(&c.as_str())))
}

/// airlock's own programs: breaking or replacing them switches the guard off. Inside a cargo
/// `target` directory (a build of airlock itself) this asks instead of denying.
pub(super) fn guard_binary(t: &Target) -> Option<Decision> {
    if !t.absolute && !t.first().starts_with('~') {
        return None;
    }
    let base = t.basename();
    let stem = base.strip_suffix(".exe").unwrap_or(base);
    if !matches!(stem, "airlock" | "airlock-hook") {
        return None;
    }
    Some(if t.has_comp("target") {
        Decision::Ask
    } else {
        Decision::Deny
    })
}

/// The user's git configuration (the repository's is `.git/config`): aliases, pagers, editors,
/// `core.sshCommand` and `core.fsmonitor` make later git commands run programs.
pub(super) fn is_user_git_config(t: &Target) -> bool {
    match t.in_home() {
        Some([one]) => one == ".gitconfig",
        Some([a, b, c]) => {
            a == ".config" && b == "git" && matches!(c.as_str(), "config" | "attributes")
        }
        _ => false,
    }
}

/// Files that run code later without looking like start-up files: programs earlier on `PATH`,
/// Python start-up hooks, login environment, editor and tool start-up files, and in a project
/// the files that run on commit, on opening, in CI, or that instruct the next agent session.
pub(super) fn persistence(t: &Target) -> Option<Class> {
    let base = t.basename();
    // `.pth` lines starting with `import` run at every Python start; sitecustomize too
    if matches!(base, "sitecustomize.py" | "usercustomize.py")
        || (base.ends_with(".pth") && base.len() > 4)
    {
        return Some(Class::PythonStartup);
    }
    if let Some(home) = t
        .in_home()
        .filter(|_| t.absolute || t.first().starts_with('~'))
    {
        let h: Vec<&str> = home.iter().map(String::as_str).collect();
        match h.as_slice() {
            [".local", "bin", _, ..] | ["bin", _, ..] => return Some(Class::PathShadowing),
            [".pam_environment"] | [".config", "environment.d", ..] => {
                return Some(Class::ShellStartup);
            }
            [
                ".vimrc" | ".gvimrc" | ".exrc" | ".nanorc" | ".emacs" | ".gdbinit" | ".tmux.conf"
                | ".inputrc" | ".lesskey" | ".wgetrc" | ".curlrc",
            ]
            | [".vim" | ".emacs.d", ..]
            | [".config", "nvim" | "emacs" | "tmux" | "helix", ..] => {
                return Some(Class::EditorStartup);
            }
            [".pip", "pip.conf"]
            | [".config", "pip", "pip.conf"]
            | [".pydistutils.cfg"]
            | [".condarc"]
            | [".yarnrc" | ".yarnrc.yml" | ".bunfig.toml"] => return Some(Class::ToolConfig),
            _ => {}
        }
    }
    // `.cargo/config.toml` sets runners and rustc wrappers, in a project as in home
    if t.has_seq(&[".cargo", "config.toml"]) || t.has_seq(&[".cargo", "config"]) {
        return Some(Class::ToolConfig);
    }
    if matches!(base, "pip.conf" | "pip.ini") {
        return Some(Class::ToolConfig);
    }
    if t.has_comp(".husky")
        || t.has_seq(&[".vscode", "tasks.json"])
        || t.has_seq(&[".vscode", "launch.json"])
        || t.has_seq(&[".github", "workflows"])
        || t.has_seq(&[".github", "actions"])
        || t.has_comp(".devcontainer")
        || t.has_comp(".circleci")
        || matches!(
            base,
            ".gitlab-ci.yml"
                | ".devcontainer.json"
                | "jenkinsfile"
                | "azure-pipelines.yml"
                | "bitbucket-pipelines.yml"
                | ".pre-commit-config.yaml"
                | "lefthook.yml"
        )
    {
        return Some(Class::ProjectAutomation);
    }
    if matches!(
        base,
        "claude.md"
            | "claude.local.md"
            | "agents.md"
            | "gemini.md"
            | ".cursorrules"
            | ".windsurfrules"
            | ".clinerules"
            | "copilot-instructions.md"
    ) && !AGENT_DIRS.iter().any(|d| t.has_comp(d))
    {
        return Some(Class::AgentInstructions);
    }
    None
}

pub(super) fn is_credentials(t: &Target) -> bool {
    const SEQS: &[&[&str]] = &[
        &[".aws", "credentials"],
        &[".aws", "config"],
        &[".docker", "config.json"],
        &[".kube", "config"],
        &[".config", "gh", "hosts.yml"],
        &[".config", "gcloud"],
        &[".config", "rclone"],
    ];
    const DIRS: &[&str] = &[".azure", ".gnupg", ".password-store"];
    const FILES: &[&str] = &[
        ".netrc",
        "_netrc",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        ".pgpass",
        ".my.cnf",
        ".vault-token",
        ".terraformrc",
        "credentials.tfrc.json",
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "id_ecdsa_sk",
        "id_ed25519_sk",
    ];
    const KEY_EXTENSIONS: &[&str] = &["pem", "key", "p12", "pfx", "jks", "keystore", "ppk"];
    let base = t.basename();
    SEQS.iter().any(|s| t.has_seq(s))
        || DIRS.iter().any(|d| t.has_comp(d))
        || FILES.contains(&base)
        || base
            .rsplit_once('.')
            .is_some_and(|(stem, ext)| !stem.is_empty() && KEY_EXTENSIONS.contains(&ext))
}

/// `.env`, `.env.local`, `.env.production`, but not `.env.example` and friends, which document
/// variables without holding them.
pub(super) fn is_dotenv(base: &str) -> bool {
    const TEMPLATES: &[&str] = &[
        "example", "sample", "template", "dist", "defaults", "schema",
    ];
    base == ".env"
        || base.strip_prefix(".env.").is_some_and(|rest| {
            !rest.is_empty() && !TEMPLATES.iter().any(|t| rest.split('.').any(|p| p == *t))
        })
}

pub(super) fn is_shell_startup(t: &Target) -> bool {
    const HOME_FILES: &[&str] = &[
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        // Debian's and Ubuntu's default .bashrc sources it
        ".bash_aliases",
        ".profile",
        ".zshrc",
        ".zprofile",
        ".zshenv",
        ".zlogin",
        ".zlogout",
        ".cshrc",
        ".tcshrc",
        ".kshrc",
        ".xprofile",
        ".xinitrc",
    ];
    // direnv runs `.envrc` on entering a directory, wherever it is.
    if t.basename() == ".envrc" {
        return true;
    }
    match t.in_home() {
        Some([one]) => HOME_FILES.contains(&one.as_str()),
        // fish, and oh-my-zsh's custom directory (every `*.zsh` in it is sourced)
        Some([a, b, ..]) => (a == ".config" && b == "fish") || (a == ".oh-my-zsh" && b == "custom"),
        _ => false,
    }
}

pub(super) fn is_autostart(t: &Target) -> bool {
    const SEQS: &[&[&str]] = &[
        &[".config", "systemd"],
        &[".config", "autostart"],
        &[".local", "share", "systemd"],
        &["library", "launchagents"],
        &["library", "launchdaemons"],
    ];
    SEQS.iter().any(|s| t.has_seq(s)) || t.under(&["var", "spool", "cron"])
}
