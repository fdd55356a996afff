//! Sensitive write targets: is writing to this path something an agent should never do alone?
//!
//! Used by the hook for file-writing tools (Write, Edit, `write_file`, `apply_patch`, …) and by
//! the shell analyser for redirection targets (`> path`, `tee path`). Pure string work: no
//! file-system access, no regex, no allocation beyond one normalised copy of the path, so the
//! hook can call it without compiling any rules. Paths are normalised lexically (`~`, `$HOME`,
//! `//`, `/./`, `..`) and compared without ASCII case, so `/tmp/../ETC/passwd` is `/etc/passwd`.

use airlock_core::{Decision, Finding, ReasonCode, Severity, Tier};

mod kinds;
mod target;
#[cfg(test)]
mod tests;
mod verdicts;

use kinds::{
    AGENT_DIRS, AUTH_FILES, SYSTEM_DIRS, guard_binary, is_agent_config, is_autostart,
    is_credentials, is_dotenv, is_harmless_device, is_proc_fd, is_shell_startup,
    is_user_git_config, persistence,
};
use target::{Target, display};

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
