//! The agent switching off its own guard: any change to the agent's hook and settings files,
//! airlock's configuration, data directory or programs, through any program, is denied;
//! reading them, and copying them elsewhere, is not.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_core::{Decision, ReasonCode};
use airlock_shell::analyse;

#[test]
fn changing_the_guard_through_any_program_denies() {
    for cmd in [
        "rm ~/.claude/settings.json",
        "rm -f .claude/settings.local.json",
        "\\rm -- \"$HOME/.claude/settings.json\"",
        "unlink ~/.gemini/settings.json",
        "shred -u ~/.codex/config.toml",
        "rm -rf ~/.codex",
        "rm -r .claude",
        "rm -rf ~/.claude/hooks",
        "jq '.hooks={}' ~/.claude/settings.json | sponge ~/.claude/settings.json",
        "sed -i 's/airlock//' ~/.claude/settings.json",
        "perl -pi -e 's/airlock-hook/true/' .claude/settings.json",
        "awk -i inplace '{print}' ~/.claude/settings.json",
        "chmod -x ~/.cargo/bin/airlock-hook",
        "chmod 000 /usr/local/bin/airlock",
        "chattr +i ~/.claude/settings.json",
        "truncate -s0 ~/.claude/settings.json",
        "cp /dev/null ~/.claude/settings.json",
        "cp /bin/true ~/.cargo/bin/airlock-hook",
        "ln -sf /dev/null ~/.claude/settings.json",
        "mv ~/.claude/settings.json /tmp/x",
        "echo '{}' > ~/.claude/settings.json",
        "tee ~/.codex/hooks.json < /dev/null",
        "rm -rf ~/.local/share/airlock",
        "rm ~/.config/airlock/policy.toml",
        "rm ~/.cargo/bin/airlock",
        "sudo rm /usr/local/bin/airlock-hook",
        "find ~/.claude -name settings.json -exec rm {} \\;",
        "dd if=/dev/null of=/home/dev/.claude/settings.json",
        "vim ~/.claude/settings.json",
    ] {
        let a = analyse(cmd);
        assert_eq!(a.decision, Decision::Deny, "{cmd}: {a:?}");
        assert!(
            a.reasons
                .iter()
                .any(|r| r.code == ReasonCode::SensitivePath),
            "{cmd}: {a:?}"
        );
    }
}

#[test]
fn reading_the_guard_files_and_look_alikes_stay_allowed() {
    for cmd in [
        "cat ~/.claude/settings.json",
        "jq . ~/.claude/settings.json",
        "ls ~/.codex",
        "cp ~/.claude/settings.json /tmp/backup.json",
        "rm -rf target/debug/deps/airlock_core-1234",
        "rm notes/airlock.md",
        "chmod +x scripts/airlock-dev.sh",
        "sed -i 's/airlock/guard/' README.md",
        "touch src/claude.rs",
        "airlock --version",
    ] {
        let a = analyse(cmd);
        assert_ne!(a.decision, Decision::Deny, "{cmd}: {a:?}");
        assert!(
            !a.reasons
                .iter()
                .any(|r| r.code == ReasonCode::SensitivePath),
            "{cmd}: {a:?}"
        );
    }
}
