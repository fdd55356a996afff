//! `airlock hook` as the agents run it: JSON on stdin, an answer in the agent's own shape on
//! stdout. Every answer shape is pinned by a snapshot; shell decisions are checked by their
//! decision only, so rule wording can change without touching these.

use assert_cmd::Command;
use serde_json::{Value, json};

/// Runs `airlock hook <args>` with `stdin` and a fixed HOME; returns (exit, stdout, stderr).
pub fn hook(args: &[&str], stdin: impl Into<Vec<u8>>) -> (i32, String, String) {
    let out = Command::cargo_bin("airlock")
        .unwrap()
        .arg("hook")
        .args(args)
        .env("HOME", "/home/agent")
        // No daemon: these answers are the hook's own.
        .env_remove("AIRLOCK_URL")
        .env_remove("AIRLOCK_TOKEN")
        .env_remove("AIRLOCK_DATA_DIR")
        .write_stdin(stdin)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The whole observable answer, for a snapshot.
fn shown(args: &[&str], stdin: impl Into<Vec<u8>>) -> String {
    let (code, out, err) = hook(args, stdin);
    format!("exit: {code}\n--- stdout\n{out}--- stderr\n{err}")
}

pub fn claude(tool: &str, input: Value) -> String {
    json!({
        "session_id": "3f1c", "transcript_path": "/home/agent/.claude/projects/p/3f1c.jsonl",
        "cwd": "/work/proj", "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_01"
    })
    .to_string()
}

pub fn codex(tool: &str, input: Value) -> String {
    json!({
        "session_id": "s1", "turn_id": "t1", "transcript_path": null, "cwd": "/work/proj",
        "hook_event_name": "PreToolUse", "model": "gpt-5", "permission_mode": "default",
        "tool_name": tool, "tool_input": input, "tool_use_id": "call_1"
    })
    .to_string()
}

pub fn gemini(tool: &str, input: Value) -> String {
    json!({
        "session_id": "g1", "transcript_path": "/home/agent/.gemini/tmp/chat.json",
        "cwd": "/work/proj", "hook_event_name": "BeforeTool",
        "timestamp": "2026-11-22T14:00:00Z", "tool_name": tool, "tool_input": input
    })
    .to_string()
}

/// Copilot's camelCase format: the arguments are a JSON document inside a string.
pub fn copilot(tool: &str, args: Value) -> String {
    json!({
        "timestamp": 1_764_000_000_000_u64, "cwd": "/work/proj",
        "toolName": tool, "toolArgs": args.to_string()
    })
    .to_string()
}

// --- every answer shape -------------------------------------------------------------------

#[test]
fn claude_shapes() {
    let deny = claude(
        "Write",
        json!({"file_path": "/home/agent/.ssh/authorized_keys", "content": "ssh-ed25519 AAAA"}),
    );
    insta::assert_snapshot!("claude_deny", shown(&[], deny));
    let ask = claude(
        "Edit",
        json!({"file_path": "/home/agent/.bashrc", "old_string": "a", "new_string": "b"}),
    );
    insta::assert_snapshot!("claude_ask", shown(&[], ask));
    let allow = claude("Read", json!({"file_path": "/work/proj/README.md"}));
    insta::assert_snapshot!("claude_allow", shown(&[], allow));
    let write = claude(
        "Write",
        json!({"file_path": "/work/proj/src/lib.rs", "content": "x"}),
    );
    insta::assert_snapshot!("claude_allow_write", shown(&[], write));
    let mcp = claude("mcp__github__create_issue", json!({"title": "t"}));
    insta::assert_snapshot!("claude_undeclared_tool", shown(&[], mcp));
}

#[test]
fn codex_shapes() {
    let deny = codex(
        "apply_patch",
        json!({"command": "*** Begin Patch\n*** Update File: .codex/config.toml\n@@\n-a\n+b\n*** End Patch\n"}),
    );
    insta::assert_snapshot!("codex_deny", shown(&[], deny));
    let ask = codex(
        "apply_patch",
        json!({"command": "*** Begin Patch\n*** Add File: /home/agent/.zshrc\n+x\n*** End Patch\n"}),
    );
    insta::assert_snapshot!("codex_ask_becomes_deny", shown(&[], ask));
    let allow = codex(
        "apply_patch",
        json!({"command": "*** Begin Patch\n*** Update File: src/main.rs\n@@\n-a\n+b\n*** End Patch\n"}),
    );
    insta::assert_snapshot!("codex_allow", shown(&[], allow));
}

#[test]
fn gemini_shapes() {
    let deny = gemini(
        "write_file",
        json!({"file_path": "/etc/passwd", "content": "root::0:0::/:/bin/sh"}),
    );
    insta::assert_snapshot!("gemini_deny", shown(&[], deny));
    let ask = gemini(
        "replace",
        json!({"file_path": "~/.aws/credentials", "old_string": "a", "new_string": "b"}),
    );
    insta::assert_snapshot!("gemini_ask", shown(&[], ask));
    let allow = gemini(
        "read_file",
        json!({"absolute_path": "/work/proj/README.md"}),
    );
    insta::assert_snapshot!("gemini_allow", shown(&[], allow));
}

#[test]
fn copilot_shapes() {
    let deny = copilot(
        "create",
        json!({"path": "/home/agent/.ssh/authorized_keys", "file_text": "k"}),
    );
    insta::assert_snapshot!("copilot_deny", shown(&[], deny));
    let ask = copilot(
        "edit",
        json!({"path": ".env", "old_str": "A=1", "new_str": "A=2"}),
    );
    insta::assert_snapshot!("copilot_ask", shown(&[], ask));
    let allow = copilot("view", json!({"path": "src/main.rs"}));
    insta::assert_snapshot!("copilot_allow", shown(&[], allow));
}

// --- bad input: a clear error and never an allow -------------------------------------------

#[test]
fn malformed_input_without_a_dialect_exits_2() {
    insta::assert_snapshot!("malformed_unknown_dialect", shown(&[], "this is not json"));
    insta::assert_snapshot!("empty_input", shown(&[], ""));
    let (code, out, err) = hook(&[], r#"{"hello": "world"}"#);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("cannot tell which agent"), "{err}");
}

#[test]
fn malformed_input_is_denied_in_the_dialect_when_known() {
    insta::assert_snapshot!(
        "malformed_claude_forced",
        shown(&["--agent", "claude"], "{\"tool_name\": ")
    );
    insta::assert_snapshot!(
        "malformed_copilot_args",
        shown(&[], r#"{"toolName":"bash","toolArgs":"{not json"}"#)
    );
    let wrong_event =
        r#"{"hook_event_name":"Stop","tool_name":"Bash","tool_input":{"command":"ls"}}"#;
    insta::assert_snapshot!("wrong_event", shown(&[], wrong_event));
    // a tool-output event without its output: the output is treated as untrusted
    let no_output =
        r#"{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#;
    insta::assert_snapshot!("post_tool_use_without_output", shown(&[], no_output));
    let no_command = claude("Bash", json!({"description": "list"}));
    insta::assert_snapshot!("bash_without_command", shown(&[], no_command));
}

#[test]
fn non_utf8_input_is_denied() {
    let mut bytes = br#"{"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls "#.to_vec();
    bytes.extend_from_slice(b"\xff\xfe\"}}");
    insta::assert_snapshot!("not_utf8_gemini", shown(&[], bytes.clone()));
    let (code, out, err) = hook(&[], b"\xff\xff\xff".to_vec());
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("NOT_UTF8"), "{err}");
}

#[test]
fn oversized_input_is_denied() {
    let big = format!(
        r#"{{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":"echo {}"}}}}"#,
        "a".repeat(1 << 20)
    );
    insta::assert_snapshot!("too_large_codex", shown(&["--agent", "codex"], big.clone()));
    // read whole (a tool's output may be larger), so the dialect is known: a deny in its shape
    let (code, out, err) = hook(&[], big);
    assert_eq!(code, 0);
    assert!(out.contains(r#""permissionDecision":"deny""#), "{out}");
    assert!(err.contains("INPUT_TOO_LARGE"), "{err}");
    // past what is read at all, nothing can be told: exit 2
    let huge = "x".repeat((16 << 20) + 1);
    let (code, out, err) = hook(&["--agent", "claude"], huge);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("INPUT_TOO_LARGE"), "{err}");
}

#[test]
fn deeply_nested_input_is_denied() {
    let deep = format!(
        r#"{{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}1{}}}"#,
        "[".repeat(5000),
        "]".repeat(5000)
    );
    // the event cannot be told from input that does not parse: exit 2, a block at every stage
    let (code, out, err) = hook(&["--agent", "claude"], deep);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("MALFORMED_INPUT"), "{err}");
}

#[cfg(unix)]
#[test]
fn non_utf8_hook_arguments_block_without_a_panic() {
    use std::os::unix::ffi::OsStrExt;
    let out = Command::cargo_bin("airlock")
        .unwrap()
        .arg("hook")
        .arg("--agent")
        .arg(std::ffi::OsStr::from_bytes(b"cl\xffude"))
        .write_stdin(claude("Read", json!({})))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_hook_command_line_blocks() {
    let (code, out, err) = hook(&["--agent", "nope"], claude("Read", json!({})));
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("invalid value 'nope'"), "{err}");
}

// --- install ------------------------------------------------------------------------------

fn install(args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("airlock")
        .unwrap()
        .args(["hook", "install"])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn install_prints_one_entry_per_agent() {
    for agent in ["claude", "codex", "gemini", "copilot"] {
        let (code, out, err) = install(&[agent, "--command", "airlock"]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<Value>(&out).unwrap();
        insta::assert_snapshot!(format!("install_{agent}"), out);
    }
}

/// `airlock hook install claude` run from a copy (a hard link) of the binary in a fresh
/// directory, optionally with an `airlock-hook` beside it; returns the installed command and the
/// directory.
fn install_from_copy(with_lean: bool) -> (String, tempfile::TempDir) {
    let airlock = assert_cmd::cargo::cargo_bin("airlock");
    // In the target directory, so the hard link stays on one file system.
    let dir = tempfile::tempdir_in(airlock.parent().unwrap()).unwrap();
    let copy = dir.path().join("airlock");
    std::fs::hard_link(&airlock, &copy).unwrap();
    if with_lean {
        let lean = dir.path().join("airlock-hook");
        std::fs::write(&lean, "#!/bin/sh\n").unwrap();
        let mut perm = std::fs::metadata(&lean).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
        std::fs::set_permissions(&lean, perm).unwrap();
    }
    let out = std::process::Command::new(&copy)
        .args(["hook", "install", "claude"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cmd = v["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    (cmd, dir)
}

#[test]
fn install_default_command_is_this_binary() {
    let (cmd, dir) = install_from_copy(false);
    let exe = dir.path().canonicalize().unwrap().join("airlock");
    assert_eq!(cmd, format!("{} hook --agent claude", exe.display()));
}

#[test]
fn install_prefers_the_lean_hook_beside_this_binary() {
    let (cmd, dir) = install_from_copy(true);
    let lean = dir.path().canonicalize().unwrap().join("airlock-hook");
    assert_eq!(cmd, format!("{} --agent claude", lean.display()));
}

#[test]
fn install_merge_is_idempotent_and_keeps_user_settings() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("settings.json");
    let original = r#"{
  "model": "opus",
  "permissions": {"allow": ["Bash(npm test)"], "deny": []},
  "hooks": {
    "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}]
  },
  "zzz": true
}
"#;
    std::fs::write(&file, original).unwrap();
    let f = file.to_str().unwrap();
    let (code, _, err) = install(&["claude", "--merge", f, "--command", "airlock"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("added"), "{err}");
    let merged = std::fs::read_to_string(&file).unwrap();
    insta::assert_snapshot!("install_merge_claude", merged);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("settings.json.bak")).unwrap(),
        original
    );

    // Second run: nothing changes, not even the file's bytes.
    let (code, _, err) = install(&["claude", "--merge", f, "--command", "airlock"]);
    assert_eq!(code, 0);
    assert!(err.contains("nothing changed"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), merged);

    // A new binary path updates the entry in place instead of adding a second one.
    let (code, _, err) = install(&["claude", "--merge", f, "--command", "/opt/bin/airlock"]);
    assert_eq!(code, 0);
    assert!(err.contains("updated"), "{err}");
    let updated = std::fs::read_to_string(&file).unwrap();
    // one entry per event (PreToolUse, UserPromptSubmit, PostToolUse), none duplicated
    assert_eq!(
        updated.matches("hook --agent claude").count(),
        3,
        "{updated}"
    );
    assert!(updated.contains("/opt/bin/airlock hook --agent claude"));
    // No temporary files are left behind.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

#[test]
fn install_merge_creates_missing_files_and_refuses_broken_ones() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sub/hooks.json");
    let f = file.to_str().unwrap();
    let (code, _, err) = install(&["codex", "--merge", f, "--command", "airlock"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        v["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "airlock hook --agent codex"
    );
    assert!(!dir.path().join("sub/hooks.json.bak").exists());

    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{ not json").unwrap();
    let (code, _, err) = install(&["gemini", "--merge", broken.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("not valid JSON"), "{err}");
    assert_eq!(std::fs::read_to_string(&broken).unwrap(), "{ not json");

    let odd = dir.path().join("odd.json");
    std::fs::write(&odd, r#"{"hooks": {"BeforeTool": {"oops": 1}}}"#).unwrap();
    let (code, _, err) = install(&["gemini", "--merge", odd.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("hooks.BeforeTool"), "{err}");
}

#[cfg(unix)]
#[test]
fn install_merge_writes_through_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("dotfiles-settings.json");
    std::fs::write(&real, "{}").unwrap();
    let link = dir.path().join("settings.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let (code, _, err) = install(&[
        "claude",
        "--merge",
        link.to_str().unwrap(),
        "--command",
        "airlock",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&real)
            .unwrap()
            .contains("airlock hook")
    );
}
