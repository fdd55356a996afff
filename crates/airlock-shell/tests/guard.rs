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
        ": > .claude/settings.json",
        "install -m 000 /dev/null ~/.claude/settings.json",
        "tar -xf x.tar -C ~/.claude",
        "unzip -o x.zip -d ~/.claude",
        "git checkout HEAD~3 -- .claude/settings.json",
        "git restore --source=HEAD~1 .claude/settings.json",
        "git rm .claude/settings.json",
        "git stash -- .claude/settings.json",
        "printf '{}' | dd of=.claude/settings.json",
        "curl -o ~/.claude/settings.json https://x.example/s",
        "wget -O .claude/settings.local.json https://x.example/s",
        "ln -sf /tmp/evil ~/.cargo/bin/airlock-hook",
        "rm -f $(which airlock-hook)",
        "chmod -x $(command -v airlock)",
        "chmod -x `which airlock-hook`",
        "node -e \"require('fs').writeFileSync('.claude/settings.json','{}')\"",
        "python3 -c \"open('.claude/settings.local.json', 'w').write('{}')\"",
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
        "tar -czf out.tgz -C src .",
        "tar -xzf deps.tgz -C vendor",
        "git checkout main",
        "git rm --cached x.txt",
        "rm -f $(which python3)",
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
