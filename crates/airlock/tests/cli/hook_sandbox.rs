//! The hook and containment: with `AIRLOCK_SANDBOX=on` an allowed Claude Code `Bash` call comes
//! back with an `updatedInput` that runs it under `airlock run` (and running that command does
//! confine it); without the switch nothing is rewritten; a call asking for
//! `dangerouslyDisableSandbox` is a tier-3 ask, never silent.

use assert_cmd::Command;
use serde_json::{Value, json};

fn hook(
    env: &[(&str, &str)],
    home: &std::path::Path,
    cwd: &std::path::Path,
    input: Value,
) -> Value {
    let stdin = json!({
        "session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": input, "tool_use_id": "toolu_01"
    })
    .to_string();
    let mut c = Command::cargo_bin("airlock").unwrap();
    c.args(["hook", "--agent", "claude"])
        .env("HOME", home)
        .env_remove("AIRLOCK_URL")
        .env_remove("AIRLOCK_TOKEN")
        .env_remove("AIRLOCK_DATA_DIR")
        .env_remove("AIRLOCK_SANDBOX")
        .env_remove("AIRLOCK_SANDBOX_PROFILE")
        .env_remove("AIRLOCK_SANDBOX_GRANTS")
        .current_dir(cwd);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.write_stdin(stdin).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn allowed_bash_runs_under_airlock_run_when_enabled() {
    let d = tempfile::tempdir().unwrap();
    let (home, ws) = (d.path().join("home"), d.path().join("ws"));
    std::fs::create_dir_all(home.join("notes")).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(home.join("notes/todo.txt"), "PRIVATE NOTE\n").unwrap();
    let input = json!({"command": "echo made > out.txt && cat out.txt", "description": "d"});

    let plain = hook(&[], &home, &ws, input.clone());
    assert_eq!(
        plain["hookSpecificOutput"]["permissionDecision"], "allow",
        "{plain}"
    );
    assert!(
        plain["hookSpecificOutput"].get("updatedInput").is_none(),
        "{plain}"
    );

    let wrapped = hook(&[("AIRLOCK_SANDBOX", "on")], &home, &ws, input);
    let spec = &wrapped["hookSpecificOutput"];
    assert_eq!(spec["permissionDecision"], "allow", "{wrapped}");
    assert_eq!(spec["updatedInput"]["description"], "d");
    let cmd = spec["updatedInput"]["command"].as_str().unwrap();
    assert!(cmd.contains(" run -- bash -c "), "{cmd}");

    // The rewritten command, run as Claude Code would, works in the workspace…
    let run = |cmd: &str| {
        std::process::Command::new("bash")
            .args(["-c", cmd])
            .current_dir(&ws)
            .env("HOME", &home)
            .env("AIRLOCK_DATA_DIR", d.path().join("data"))
            .output()
            .unwrap()
    };
    let out = run(cmd);
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(125) && err.contains("SANDBOX_UNAVAILABLE") {
        eprintln!("skipping the confined run: this kernel cannot confine: {err}");
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "made\n");
    // …and is confined: a file of the user's outside it cannot be read.
    let note = home.join("notes/todo.txt");
    let input = json!({"command": format!("cat {}", note.display())});
    let v = hook(&[("AIRLOCK_SANDBOX", "on")], &home, &ws, input);
    if v["hookSpecificOutput"]["permissionDecision"] == "allow" {
        let cmd = v["hookSpecificOutput"]["updatedInput"]["command"]
            .as_str()
            .unwrap();
        let out = run(cmd);
        assert_ne!(out.status.code(), Some(0));
        assert!(!String::from_utf8_lossy(&out.stdout).contains("PRIVATE"));
    }
}

#[test]
fn asking_to_leave_the_sandbox_is_a_tier_3_ask() {
    let d = tempfile::tempdir().unwrap();
    for env in [&[][..], &[("AIRLOCK_SANDBOX", "on")][..]] {
        let v = hook(
            env,
            d.path(),
            d.path(),
            json!({"command": "ls", "dangerouslyDisableSandbox": true}),
        );
        let spec = &v["hookSpecificOutput"];
        assert_eq!(spec["permissionDecision"], "ask", "{v}");
        let reason = spec["permissionDecisionReason"].as_str().unwrap();
        assert!(
            reason.contains("SANDBOX_ESCAPE") && reason.contains("tier 3"),
            "{reason}"
        );
        assert!(spec.get("updatedInput").is_none());
    }
}
