//! Sensitive write targets: is writing to this path something an agent should never do alone?
//!
//! Used by the hook for file-writing tools (Write, Edit, `write_file`, `apply_patch`, …) and by
//! the shell analyser for redirection targets (`> path`, `tee path`). Pure string work: no
//! file-system access, no regex, no allocation beyond one normalised copy of the path, so the
//! hook can call it without compiling any rules. Paths are normalised lexically (`~`, `$HOME`,
//! `//`, `/./`, `..`) and compared without ASCII case, so `/tmp/../ETC/passwd` is `/etc/passwd`.

use airlock_core::{Decision, Finding, ReasonCode, Severity, Tier};

/// The finding for writing `path`, or `None` when the path is not sensitive.
///
/// `home` is the user's home directory (`$HOME`); with it, `~/…`, `$HOME/…` and absolute paths
/// under it are recognised as home files. Without it, `~/…` still counts as home. A relative path
/// is checked as if the working directory could be the home directory (the caller rarely knows),
/// so `.bashrc` alone asks, while `src/.bashrc` does not.
///
/// Device sinks (`/dev/null`, `/dev/stderr`, `/dev/fd/N`, …) are not sensitive, so redirections
/// like `2>/dev/null` stay quiet.
pub fn write_target_finding(path: &str, home: Option<&str>) -> Option<Finding> {
    let target = Target::new(path, home)?;
    let (class, decision, tier, severity) = classify(&target)?;
    let shown = display(path);
    Some(
        Finding::new(
            class.rule_id(),
            ReasonCode::SensitivePath,
            decision,
            tier,
            severity,
            class.message(&shown),
        )
        .with_remediation(class.remediation())
        .with_evidence(shown),
    )
}

/// The finding for removing, emptying or changing the mode, owner or attributes of `path`
/// (`rm`, `unlink`, `shred`, `chmod -x`, `chattr`), or `None`: only the files that switch the
/// guard off count here (agent hook settings, airlock's configuration, data and programs), since
/// other paths are judged by the command rules.
pub fn guard_change_finding(path: &str, home: Option<&str>) -> Option<Finding> {
    let target = Target::new(path, home)?;
    // the agent's whole settings directory (`rm -rf ~/.codex`, `rm -r .claude`) holds its hooks
    let whole_dir = AGENT_DIRS.contains(&target.basename());
    match classify(&target) {
        Some((Class::AgentConfig | Class::GuardBinary, ..)) => {}
        _ if whole_dir => {}
        _ => return None,
    }
    let mut f = write_target_finding(path, home)?;
    if whole_dir {
        f.rule_id = Class::AgentConfig.rule_id().to_string();
        f.message = Class::AgentConfig.message(&display(path));
    }
    // removing the guard is never a reviewable choice, even where writing a build of it asks
    f.decision = Decision::Deny;
    Some(f)
}

/// A normalised path: lowercase components, and where the home-relative part starts.
struct Target {
    absolute: bool,
    comps: Vec<String>,
    /// Index in `comps` where a home directory's contents start (`Some(0)` for relative paths,
    /// which may be relative to home).
    home_start: Option<usize>,
}

impl Target {
    fn new(path: &str, home: Option<&str>) -> Option<Target> {
        let path = path.trim();
        if path.is_empty() {
            return None;
        }
        let home_comps = home
            .map(|h| normalise(h.trim(), Vec::new()).0)
            .filter(|h| !h.is_empty());
        let (comps, absolute) = if let Some((dir, rest)) = strip_agent_home(path) {
            // `$HERMES_HOME/…`, `$CODEX_HOME/…`: an agent's home directory, wherever it is
            let mut base = home_comps.clone().unwrap_or_else(|| vec!["~".to_string()]);
            base.push(dir.to_string());
            normalise(rest, base)
        } else if let Some(rest) = strip_home_prefix(path) {
            let base = home_comps.clone().unwrap_or_else(|| vec!["~".to_string()]);
            normalise(rest, base)
        } else if let Some(rest) = path.strip_prefix('~') {
            // `~user/…`: someone's home directory.
            let (user, rest) = rest.split_once('/').unwrap_or((rest, ""));
            normalise(rest, vec![format!("~{}", user.to_ascii_lowercase())])
        } else {
            normalise(path, Vec::new())
        };
        // `/work/proj/$HOME/.bashrc`, `/work/proj/~bob/.ssh/x`: a caller joined a home-relative
        // path to a working directory without expanding it; the home part is what counts
        let (comps, absolute) = match comps
            .iter()
            .rposition(|c| matches!(c.as_str(), "$home" | "${home}") || c.starts_with('~'))
        {
            Some(i) if i > 0 => {
                let mut base = match comps[i].as_str() {
                    "$home" | "${home}" | "~" => {
                        home_comps.clone().unwrap_or_else(|| vec!["~".to_string()])
                    }
                    user => vec![user.to_string()],
                };
                base.extend(comps[i + 1..].iter().cloned());
                let absolute = absolute || base.first().is_some_and(|c| !c.starts_with('~'));
                (base, absolute)
            }
            _ => (comps, absolute),
        };
        // Decided after normalisation, so `~/../../etc` is not taken for a home file.
        let home_start = if !absolute {
            Some(0)
        } else if comps.first().is_some_and(|c| c.starts_with('~')) {
            Some(1)
        } else {
            match &home_comps {
                Some(h) if comps.len() > h.len() && comps[..h.len()] == h[..] => Some(h.len()),
                _ => other_home_start(&comps),
            }
        };
        if comps.is_empty() {
            return None;
        }
        Some(Target {
            absolute,
            comps,
            home_start,
        })
    }

    fn first(&self) -> &str {
        self.comps.first().map(String::as_str).unwrap_or("")
    }

    fn basename(&self) -> &str {
        self.comps.last().map(String::as_str).unwrap_or("")
    }

    /// Components inside the home directory, if the path is in one.
    fn in_home(&self) -> Option<&[String]> {
        self.home_start.and_then(|i| self.comps.get(i..))
    }

    /// True when `seq` appears as consecutive components anywhere in the path.
    fn has_seq(&self, seq: &[&str]) -> bool {
        self.comps
            .windows(seq.len())
            .any(|w| w.iter().zip(seq).all(|(a, b)| a == b))
    }

    fn has_comp(&self, name: &str) -> bool {
        self.comps.iter().any(|c| c == name)
    }

    /// True for an absolute path whose components start with `prefix`.
    fn under(&self, prefix: &[&str]) -> bool {
        self.absolute
            && self.comps.len() >= prefix.len()
            && self.comps.iter().zip(prefix).all(|(a, b)| a == b)
    }
}

/// `~`, `~/x`, `$HOME/x`, `${HOME}/x` → the part after the home directory.
fn strip_home_prefix(path: &str) -> Option<&str> {
    for p in ["~", "$HOME", "${HOME}"] {
        if let Some(rest) = path.strip_prefix(p) {
            if rest.is_empty() {
                return Some("");
            }
            if let Some(r) = rest.strip_prefix('/') {
                return Some(r);
            }
        }
    }
    None
}

/// `$HERMES_HOME/x`, `${CODEX_HOME}/x`, `$CLAUDE_CONFIG_DIR/x`: variables that name a coding
/// agent's own directory, read as that directory under the home directory (its default place).
fn strip_agent_home(path: &str) -> Option<(&'static str, &str)> {
    const VARS: &[(&str, &str)] = &[
        ("HERMES_HOME", ".hermes"),
        ("CODEX_HOME", ".codex"),
        ("CLAUDE_CONFIG_DIR", ".claude"),
        ("GEMINI_CLI_HOME", ".gemini"),
    ];
    let body = path.strip_prefix('$')?;
    for (var, dir) in VARS {
        let rest = body
            .strip_prefix('{')
            .and_then(|b| b.strip_prefix(var))
            .and_then(|b| b.strip_prefix('}'))
            .or_else(|| {
                body.strip_prefix(var)
                    .filter(|r| !r.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
            });
        if let Some(rest) = rest {
            if rest.is_empty() {
                return Some((dir, ""));
            }
            if let Some(r) = rest.strip_prefix('/') {
                return Some((dir, r));
            }
        }
    }
    None
}

/// `/root/…`, `/home/<user>/…`, `/Users/<user>/…`: another account's home directory.
fn other_home_start(comps: &[String]) -> Option<usize> {
    match comps.first().map(String::as_str) {
        Some("root") => Some(1),
        Some("home") | Some("users") if comps.len() > 2 => Some(2),
        _ => None,
    }
}

/// Lexical normalisation onto `base`: drops empty and `.` components, resolves `..` (never
/// above the root), lowercases ASCII. Returns the components and whether the path is absolute.
fn normalise(path: &str, base: Vec<String>) -> (Vec<String>, bool) {
    let absolute = path.starts_with('/') || !base.is_empty();
    let floor = usize::from(base.first().is_some_and(|b| b.starts_with('~')));
    let mut out = base;
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if out.len() > floor && out.last().is_some_and(|c| c != "..") {
                    out.pop();
                } else if !absolute {
                    out.push("..".to_string());
                }
            }
            p => out.push(p.to_ascii_lowercase()),
        }
    }
    (out, absolute)
}

/// The path as shown to people: control characters escaped, bounded in length.
fn display(path: &str) -> String {
    const MAX: usize = 200;
    let mut s = String::new();
    for (n, ch) in path.trim().chars().enumerate() {
        if n >= MAX {
            s.push('…');
            break;
        }
        if ch.is_control() {
            s.extend(ch.escape_default());
        } else {
            s.push(ch);
        }
    }
    s
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    BlockDevice,
    Boot,
    SystemAuth,
    SshAuthorizedKeys,
    AgentConfig,
    Credentials,
    DotEnv,
    Ssh,
    ShellStartup,
    Autostart,
    GitHooks,
    GitConfig,
    SystemConfig,
    SystemDirs,
    KernelInterface,
    AgentFiles,
    GuardBinary,
    PathShadowing,
    PythonStartup,
    EditorStartup,
    ToolConfig,
    ProjectAutomation,
    AgentInstructions,
}

type Verdict = (Class, Decision, Tier, Severity);

/// The strictest class that applies, checked strictest first.
fn classify(t: &Target) -> Option<Verdict> {
    use Decision::{Ask, Deny};
    if t.under(&["dev"]) && !is_harmless_device(t) {
        return Some((Class::BlockDevice, Deny, Tier::Critical, Severity::Critical));
    }
    if t.under(&["boot"]) {
        return Some((Class::Boot, Deny, Tier::Critical, Severity::Critical));
    }
    if t.under(&["etc"])
        && t.comps
            .get(1)
            .is_some_and(|c| AUTH_FILES.contains(&c.as_str()))
    {
        return Some((Class::SystemAuth, Deny, Tier::High, Severity::Critical));
    }
    if matches!(t.basename(), "authorized_keys" | "authorized_keys2") {
        return Some((Class::SshAuthorizedKeys, Deny, Tier::High, Severity::High));
    }
    if is_agent_config(t) {
        return Some((Class::AgentConfig, Deny, Tier::High, Severity::High));
    }
    if let Some(decision) = guard_binary(t) {
        return Some((Class::GuardBinary, decision, Tier::High, Severity::High));
    }
    if is_credentials(t) {
        return Some((Class::Credentials, Ask, Tier::High, Severity::High));
    }
    if is_dotenv(t.basename()) {
        return Some((Class::DotEnv, Ask, Tier::High, Severity::Medium));
    }
    if t.has_comp(".ssh") {
        return Some((Class::Ssh, Ask, Tier::High, Severity::High));
    }
    if is_shell_startup(t) {
        return Some((Class::ShellStartup, Ask, Tier::High, Severity::High));
    }
    if is_autostart(t) {
        return Some((Class::Autostart, Ask, Tier::High, Severity::High));
    }
    if t.has_seq(&[".git", "hooks"]) {
        return Some((Class::GitHooks, Ask, Tier::High, Severity::High));
    }
    if t.has_seq(&[".git", "config"]) || is_user_git_config(t) {
        return Some((Class::GitConfig, Ask, Tier::High, Severity::Medium));
    }
    if let Some(class) = persistence(t) {
        return Some((class, Ask, Tier::High, Severity::Medium));
    }
    if t.under(&["etc"]) {
        return Some((Class::SystemConfig, Ask, Tier::High, Severity::Medium));
    }
    if t.absolute && SYSTEM_DIRS.contains(&t.first()) {
        return Some((Class::SystemDirs, Ask, Tier::High, Severity::Medium));
    }
    if (t.under(&["proc"]) && !is_proc_fd(t)) || t.under(&["sys"]) {
        return Some((Class::KernelInterface, Ask, Tier::High, Severity::Medium));
    }
    if AGENT_DIRS.iter().any(|d| t.has_comp(d)) || t.has_seq(&[".vscode", "settings.json"]) {
        return Some((Class::AgentFiles, Ask, Tier::High, Severity::Medium));
    }
    None
}

/// Files under /etc that decide who can log in or become root.
const AUTH_FILES: &[&str] = &[
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
const SYSTEM_DIRS: &[&str] = &[
    "bin", "sbin", "usr", "lib", "lib32", "lib64", "libx32", "opt", "snap", "system",
];

/// Directories where coding agents keep settings, commands, memory and instructions.
const AGENT_DIRS: &[&str] = &[".claude", ".codex", ".gemini", ".copilot", ".cursor"];

fn is_harmless_device(t: &Target) -> bool {
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
fn is_proc_fd(t: &Target) -> bool {
    t.comps.len() >= 3
        && t.comps[2] == "fd"
        && (t.comps[1] == "self" || t.comps[1].bytes().all(|b| b.is_ascii_digit()))
}

fn is_agent_config(t: &Target) -> bool {
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
fn guard_binary(t: &Target) -> Option<Decision> {
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
fn is_user_git_config(t: &Target) -> bool {
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
fn persistence(t: &Target) -> Option<Class> {
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

fn is_credentials(t: &Target) -> bool {
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
fn is_dotenv(base: &str) -> bool {
    const TEMPLATES: &[&str] = &[
        "example", "sample", "template", "dist", "defaults", "schema",
    ];
    base == ".env"
        || base.strip_prefix(".env.").is_some_and(|rest| {
            !rest.is_empty() && !TEMPLATES.iter().any(|t| rest.split('.').any(|p| p == *t))
        })
}

fn is_shell_startup(t: &Target) -> bool {
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

fn is_autostart(t: &Target) -> bool {
    const SEQS: &[&[&str]] = &[
        &[".config", "systemd"],
        &[".config", "autostart"],
        &[".local", "share", "systemd"],
        &["library", "launchagents"],
        &["library", "launchdaemons"],
    ];
    SEQS.iter().any(|s| t.has_seq(s)) || t.under(&["var", "spool", "cron"])
}

impl Class {
    fn rule_id(self) -> &'static str {
        match self {
            Class::BlockDevice => "paths.block_device",
            Class::Boot => "paths.boot",
            Class::SystemAuth => "paths.system_auth",
            Class::SshAuthorizedKeys => "paths.ssh_authorized_keys",
            Class::AgentConfig => "paths.agent_config",
            Class::Credentials => "paths.credentials",
            Class::DotEnv => "paths.dotenv",
            Class::Ssh => "paths.ssh",
            Class::ShellStartup => "paths.shell_startup",
            Class::Autostart => "paths.autostart",
            Class::GitHooks => "paths.git_hooks",
            Class::GitConfig => "paths.git_config",
            Class::SystemConfig => "paths.system_config",
            Class::SystemDirs => "paths.system_dirs",
            Class::KernelInterface => "paths.kernel_interface",
            Class::AgentFiles => "paths.agent_files",
            Class::GuardBinary => "paths.guard_binary",
            Class::PathShadowing => "paths.path_shadowing",
            Class::PythonStartup => "paths.python_startup",
            Class::EditorStartup => "paths.editor_startup",
            Class::ToolConfig => "paths.tool_config",
            Class::ProjectAutomation => "paths.project_automation",
            Class::AgentInstructions => "paths.agent_instructions",
        }
    }

    /// Written for the agent: what the path is, why that matters, what to do instead.
    fn message(self, p: &str) -> String {
        match self {
            Class::BlockDevice => format!(
                "`{p}` is a device file: writing to it can overwrite a disk or memory directly \
                 and destroy the system. Do not write to devices; write to a regular file instead."
            ),
            Class::Boot => format!(
                "`{p}` is under /boot: a wrong write leaves the machine unable to start. \
                 Leave boot files to a person."
            ),
            Class::SystemAuth => format!(
                "`{p}` decides who can log in or become root; an agent must not change accounts, \
                 passwords or sudo rights. Ask the user to make the change themselves."
            ),
            Class::SshAuthorizedKeys => format!(
                "`{p}` decides who can log in over SSH; adding a key there is a classic backdoor, \
                 so agents may not write it. Ask the user to add the key themselves."
            ),
            Class::AgentConfig => format!(
                "`{p}` is a coding agent's own configuration (permissions, hooks, MCP servers); \
                 an agent must not change the rules that supervise it. Tell the user which \
                 setting you need and let them edit it."
            ),
            Class::Credentials => format!(
                "`{p}` stores credentials or private keys; writing it can leak or replace secrets, \
                 so a person must confirm. Prefer reading secrets from the environment or a \
                 secrets manager."
            ),
            Class::DotEnv => format!(
                "`{p}` is an environment file that usually holds secrets, so a person must \
                 confirm changes. To document variables, write `.env.example` instead."
            ),
            Class::Ssh => format!(
                "`{p}` is in an SSH directory (keys, known hosts, client configuration); a person \
                 must confirm changes to it."
            ),
            Class::ShellStartup => format!(
                "`{p}` runs every time a shell starts, so a change there outlives this task; a \
                 person must confirm it. To set a variable for one command, pass it inline instead."
            ),
            Class::Autostart => format!(
                "`{p}` makes programs start automatically (cron, systemd, launch agents); a person \
                 must confirm it."
            ),
            Class::GitHooks => format!(
                "`{p}` is a git hook: it runs code on later git commands, so a person must confirm \
                 it. Prefer a reviewed hook committed to the repository."
            ),
            Class::GitConfig => format!(
                "`{p}` is a repository's git configuration, which can make later git commands run \
                 programs; a person must confirm. Use `git config <key> <value>` for one visible \
                 setting instead."
            ),
            Class::SystemConfig => format!(
                "`{p}` is system configuration under /etc; changing it affects every user and \
                 service, so a person must confirm."
            ),
            Class::SystemDirs => format!(
                "`{p}` is in a system software directory; installing or replacing programs there \
                 affects every user. Install into the workspace or a user directory instead."
            ),
            Class::KernelInterface => format!(
                "`{p}` is a kernel interface; writing it changes the running system, so a person \
                 must confirm."
            ),
            Class::AgentFiles => format!(
                "`{p}` belongs to a coding agent's configuration (commands, memory, editor \
                 settings that shape later sessions); a person must confirm changes to it."
            ),
            Class::GuardBinary => format!(
                "`{p}` is one of airlock's own programs, which supervise this agent; an agent must \
                 not replace, remove or break them. Tell the user what you need instead."
            ),
            Class::PathShadowing => format!(
                "`{p}` is in a directory early on the user's PATH: a program put there runs in \
                 place of the real one in every later shell, so a person must confirm. Run the \
                 program from the workspace instead."
            ),
            Class::PythonStartup => format!(
                "`{p}` runs every time Python starts (a `.pth` or customize file), so a change \
                 outlives this task; a person must confirm it."
            ),
            Class::EditorStartup => format!(
                "`{p}` is a start-up file of an editor or terminal tool, which can run commands \
                 whenever the tool starts; a person must confirm it."
            ),
            Class::ToolConfig => format!(
                "`{p}` configures a build or package tool (indexes, runners, wrappers), which can \
                 make later builds fetch or run other code; a person must confirm it."
            ),
            Class::ProjectAutomation => format!(
                "`{p}` runs automatically (git hooks via husky, editor tasks, CI workflows, dev \
                 containers), so a change runs code later, elsewhere or with other secrets; a \
                 person must confirm it."
            ),
            Class::AgentInstructions => format!(
                "`{p}` is read as instructions by the next coding-agent session; a change there \
                 steers later sessions, so a person must confirm it."
            ),
        }
    }

    /// Written for the person reviewing the action.
    fn remediation(self) -> &'static str {
        match self {
            Class::BlockDevice | Class::Boot => {
                "Only a person should write here, after checking the target twice."
            }
            Class::SystemAuth => "Make account or sudo changes yourself, with vipw or visudo.",
            Class::SshAuthorizedKeys => "Add SSH keys yourself after checking whose key it is.",
            Class::AgentConfig => {
                "Edit agent settings yourself; grant a permission deliberately if one is needed."
            }
            Class::Credentials | Class::DotEnv => {
                "Check that the change neither exposes nor replaces a real secret."
            }
            Class::Ssh => "Check host aliases, ProxyCommand lines and keys in the change.",
            Class::ShellStartup | Class::Autostart => {
                "Read what will run, when and as whom: start-up files are a common place to hide \
                 persistence."
            }
            Class::GitHooks | Class::GitConfig => {
                "Look for hooks or options that run commands (core.hooksPath, core.sshCommand, \
                 core.fsmonitor)."
            }
            Class::SystemConfig | Class::SystemDirs | Class::KernelInterface => {
                "Apply system changes through configuration management or by hand."
            }
            Class::AgentFiles | Class::AgentInstructions => {
                "Check that the change neither grants permissions nor plants \
                                  instructions for later sessions."
            }
            Class::GuardBinary => "Reinstall or upgrade airlock yourself if that is the intent.",
            Class::PathShadowing
            | Class::PythonStartup
            | Class::EditorStartup
            | Class::ToolConfig
            | Class::ProjectAutomation => {
                "Read what will run, when and as whom: these files are a common place to hide \
                 persistence."
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const HOME: Option<&str> = Some("/home/dev");

    fn rule(path: &str) -> Option<String> {
        write_target_finding(path, HOME).map(|f| f.rule_id)
    }

    #[test]
    fn must_match() {
        let cases: &[(&str, &str)] = &[
            ("/dev/sda", "paths.block_device"),
            ("/dev/nvme0n1p1", "paths.block_device"),
            ("/dev/mem", "paths.block_device"),
            ("/boot/grub/grub.cfg", "paths.boot"),
            ("/etc/passwd", "paths.system_auth"),
            ("/etc/sudoers.d/90-agent", "paths.system_auth"),
            ("/tmp/../etc/shadow", "paths.system_auth"),
            ("//etc//./passwd", "paths.system_auth"),
            ("/ETC/Passwd", "paths.system_auth"),
            ("~/.ssh/authorized_keys", "paths.ssh_authorized_keys"),
            ("$HOME/.ssh/authorized_keys2", "paths.ssh_authorized_keys"),
            ("/root/.ssh/authorized_keys", "paths.ssh_authorized_keys"),
            ("authorized_keys", "paths.ssh_authorized_keys"),
            ("/home/dev/.claude/settings.json", "paths.agent_config"),
            (
                "/work/proj/.claude/settings.local.json",
                "paths.agent_config",
            ),
            ("~/.claude/hooks/guard.sh", "paths.agent_config"),
            // a home-relative path joined to a working directory unexpanded
            ("/work/proj/$HOME/.bashrc", "paths.shell_startup"),
            (
                "/work/proj/${HOME}/.ssh/authorized_keys",
                "paths.ssh_authorized_keys",
            ),
            ("/work/proj/~/.claude/settings.json", "paths.agent_config"),
            ("/work/proj/~bob/.bashrc", "paths.shell_startup"),
            ("~bob/.ssh/authorized_keys", "paths.ssh_authorized_keys"),
            ("~root/.bashrc", "paths.shell_startup"),
            // airlock's own programs
            ("/usr/local/bin/airlock", "paths.guard_binary"),
            ("~/.cargo/bin/airlock-hook", "paths.guard_binary"),
            ("/home/dev/.local/bin/airlock-hook", "paths.guard_binary"),
            ("/work/airlock/target/release/airlock", "paths.guard_binary"),
            // persistence
            ("~/.gitconfig", "paths.git_config"),
            ("/home/dev/.config/git/config", "paths.git_config"),
            ("~/.local/bin/git", "paths.path_shadowing"),
            ("/home/dev/bin/ls", "paths.path_shadowing"),
            (
                "/usr/lib/python3/dist-packages/sitecustomize.py",
                "paths.python_startup",
            ),
            (
                "~/.local/lib/python3.12/site-packages/evil.pth",
                "paths.python_startup",
            ),
            (
                "/work/proj/.venv/lib/python3.12/site-packages/x.pth",
                "paths.python_startup",
            ),
            ("usercustomize.py", "paths.python_startup"),
            (
                "~/.config/environment.d/10-path.conf",
                "paths.shell_startup",
            ),
            ("~/.pam_environment", "paths.shell_startup"),
            ("~/.vimrc", "paths.editor_startup"),
            ("~/.config/nvim/init.lua", "paths.editor_startup"),
            ("~/.emacs.d/init.el", "paths.editor_startup"),
            ("~/.emacs", "paths.editor_startup"),
            ("~/.tmux.conf", "paths.editor_startup"),
            ("~/.cargo/config.toml", "paths.tool_config"),
            ("/work/proj/.cargo/config.toml", "paths.tool_config"),
            ("~/.cargo/config", "paths.tool_config"),
            ("~/.pip/pip.conf", "paths.tool_config"),
            ("~/.config/pip/pip.conf", "paths.tool_config"),
            ("/work/proj/pip.conf", "paths.tool_config"),
            ("/work/proj/.husky/pre-commit", "paths.project_automation"),
            ("/work/proj/.vscode/tasks.json", "paths.project_automation"),
            (
                "/work/proj/.github/workflows/ci.yml",
                "paths.project_automation",
            ),
            ("/work/proj/.gitlab-ci.yml", "paths.project_automation"),
            (
                "/work/proj/.devcontainer/devcontainer.json",
                "paths.project_automation",
            ),
            ("/work/proj/CLAUDE.md", "paths.agent_instructions"),
            ("AGENTS.md", "paths.agent_instructions"),
            ("/work/proj/sub/GEMINI.md", "paths.agent_instructions"),
            (
                "/work/proj/.github/copilot-instructions.md",
                "paths.agent_instructions",
            ),
            ("/work/proj/.cursorrules", "paths.agent_instructions"),
            ("~/.claude.json", "paths.agent_config"),
            ("~/.codex/config.toml", "paths.agent_config"),
            ("${HOME}/.codex/hooks.json", "paths.agent_config"),
            ("~/.gemini/settings.json", "paths.agent_config"),
            ("/repo/.github/hooks/airlock.json", "paths.agent_config"),
            ("/repo/.github/copilot/settings.json", "paths.agent_config"),
            ("/repo/.mcp.json", "paths.agent_config"),
            ("~/.config/airlock/policy.toml", "paths.agent_config"),
            ("~/.hermes/config.yaml", "paths.agent_config"),
            ("$HERMES_HOME/config.yaml", "paths.agent_config"),
            ("${CODEX_HOME}/config.toml", "paths.agent_config"),
            ("$CLAUDE_CONFIG_DIR/settings.json", "paths.agent_config"),
            (
                "~/.hermes/plugins/airlock/__init__.py",
                "paths.agent_config",
            ),
            ("~/.local/share/airlock/serve.json", "paths.agent_config"),
            (
                "/etc/claude-code/managed-settings.json",
                "paths.agent_config",
            ),
            ("~/.aws/credentials", "paths.credentials"),
            ("/home/dev/.kube/config", "paths.credentials"),
            ("~/.config/gh/hosts.yml", "paths.credentials"),
            ("~/.netrc", "paths.credentials"),
            ("/srv/app/.npmrc", "paths.credentials"),
            ("~/.gnupg/private-keys-v1.d/x.key", "paths.credentials"),
            ("/tmp/id_ed25519", "paths.credentials"),
            ("certs/server.pem", "paths.credentials"),
            (".env", "paths.dotenv"),
            ("/work/app/.env.production", "paths.dotenv"),
            ("/work/app/.env.local", "paths.dotenv"),
            ("~/.ssh/config", "paths.ssh"),
            ("~/.ssh/known_hosts", "paths.ssh"),
            ("~/.bashrc", "paths.shell_startup"),
            ("/home/dev/.zshrc", "paths.shell_startup"),
            ("/home/other/.profile", "paths.shell_startup"),
            ("/root/.bash_profile", "paths.shell_startup"),
            (".bashrc", "paths.shell_startup"),
            ("~/.bash_aliases", "paths.shell_startup"),
            ("~/.oh-my-zsh/custom/x.zsh", "paths.shell_startup"),
            ("~/.config/fish/config.fish", "paths.shell_startup"),
            ("/work/proj/.envrc", "paths.shell_startup"),
            ("~/.config/systemd/user/evil.service", "paths.autostart"),
            ("~/Library/LaunchAgents/com.x.plist", "paths.autostart"),
            ("/var/spool/cron/crontabs/dev", "paths.autostart"),
            ("/work/proj/.git/hooks/pre-commit", "paths.git_hooks"),
            (".git/config", "paths.git_config"),
            ("/etc/hosts", "paths.system_config"),
            ("/etc/profile.d/x.sh", "paths.system_config"),
            ("/usr/local/bin/tool", "paths.system_dirs"),
            ("/bin/ls", "paths.system_dirs"),
            ("/proc/sys/kernel/core_pattern", "paths.kernel_interface"),
            ("/sys/class/leds/x/brightness", "paths.kernel_interface"),
            ("~/.claude/CLAUDE.md", "paths.agent_files"),
            ("/work/proj/.claude/commands/deploy.md", "paths.agent_files"),
            ("/work/proj/.vscode/settings.json", "paths.agent_files"),
        ];
        for (path, want) in cases {
            assert_eq!(rule(path).as_deref(), Some(*want), "{path}");
        }
    }

    #[test]
    fn must_not_match() {
        let cases = [
            "/dev/null",
            "/dev/stderr",
            "/dev/fd/3",
            "/dev/shm/buf",
            "/proc/self/fd/1",
            "/proc/1234/fd/2",
            "/tmp/out.txt",
            "/work/proj/src/main.rs",
            "src/.bashrc",
            "/work/proj/docker/.profile",
            ".env.example",
            "/work/app/.env.sample",
            "config/.env.template",
            "/work/proj/.gitignore",
            "/work/proj/git/config",
            "/work/proj/notes/etc/passwd",
            "/work/proj/usr/bin/tool",
            "/work/proj/.github/ISSUE_TEMPLATE/bug.md",
            "/work/proj/docs/claude.md.txt",
            "/work/proj/bin/tool",
            "/work/proj/src/site.py",
            "/work/proj/.vscode/extensions.json",
            "/home/dev/.local/share/notes.txt",
            "/home/dev/.cache/pip/x",
            "/work/proj/target/debug/airlock-core.d",
            "/work/proj/airlock/README.md",
            "/work/proj/keys.md",
            "$HERMES_HOME/logs/run.log",
            "$HERMES_HOMEX/config.yaml",
            ".pem",
            "",
            "   ",
            "/",
            "~",
            "..",
        ];
        for path in cases {
            assert_eq!(rule(path), None, "{path}");
        }
    }

    #[test]
    fn home_is_optional_and_tilde_still_counts() {
        let f = write_target_finding("~/.ssh/authorized_keys", None).unwrap();
        assert_eq!(f.decision, Decision::Deny);
        assert!(write_target_finding("~/.bashrc", None).is_some());
        // An absolute path under an unknown home is not a home file...
        assert!(write_target_finding("/data/dev/.bashrc", None).is_none());
        // ...unless it is someone's home by convention.
        assert!(write_target_finding("/home/dev/.bashrc", None).is_some());
    }

    #[test]
    fn parent_components_cannot_escape_home_marker() {
        // `~/../../etc/passwd` must not be read as a home file called `passwd`.
        let f = write_target_finding("/home/dev/../../etc/passwd", HOME).unwrap();
        assert_eq!(f.rule_id, "paths.system_auth");
        assert!(write_target_finding("~/../..", None).is_none());
    }

    #[test]
    fn finding_carries_code_evidence_and_advice() {
        let f = write_target_finding("~/.ssh/authorized_keys", HOME).unwrap();
        assert_eq!(f.code, ReasonCode::SensitivePath);
        assert_eq!(f.tier, Tier::High);
        assert_eq!(f.evidence.as_deref(), Some("~/.ssh/authorized_keys"));
        assert!(f.message.contains("~/.ssh/authorized_keys"));
        assert!(!f.remediation.is_empty());
    }

    #[test]
    fn evidence_is_bounded_and_escaped() {
        let long = format!("/etc/{}\u{1b}[2J", "a".repeat(500));
        let f = write_target_finding(&long, HOME).unwrap();
        let ev = f.evidence.unwrap();
        assert!(ev.chars().count() <= 201);
        assert!(!ev.contains('\u{1b}'));
    }

    #[test]
    fn decisions_are_deny_or_ask_never_allow() {
        for p in [
            "/dev/sda",
            "~/.bashrc",
            "/etc/hosts",
            "~/.codex/config.toml",
            ".env",
        ] {
            let f = write_target_finding(p, HOME).unwrap();
            assert_ne!(f.decision, Decision::Allow, "{p}");
        }
    }
}
