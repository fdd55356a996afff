//! The sensitive-path classes, path by path.

#![allow(clippy::unwrap_used, clippy::expect_used)]

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
