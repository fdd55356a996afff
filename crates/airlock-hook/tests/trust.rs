//! The real `airlock-hook` binary on trust boundaries: the project policy that judges a shell
//! command is found from where the command will run (`cd proj && …` from outside `proj`), and
//! web fetches to this machine, metadata services, private networks or with secrets in the
//! query ask. No daemon runs (an empty data directory), so every answer is the hook's own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// Runs the hook with `input` in a sandboxed environment under `root`; the Claude answer.
fn hook(root: &Path, input: &Value) -> Value {
    let mut child = Command::new(env!("CARGO_BIN_EXE_airlock-hook"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", root.join("home"))
        .env("XDG_CONFIG_HOME", root.join("config"))
        .env("AIRLOCK_DATA_DIR", root.join("data"))
        .env("AIRLOCK_MANAGED_POLICY", root.join("managed.toml"))
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).unwrap_or_else(|_| {
        panic!(
            "exit {:?}, stdout {text:?}, stderr {:?}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn claude(tool: &str, args: Value, cwd: &Path) -> Value {
    json!({"session_id": "s", "hook_event_name": "PreToolUse", "cwd": cwd, "tool_name": tool,
           "tool_input": args, "tool_use_id": "t"})
}

fn decision(a: &Value) -> &str {
    a["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or_else(|| panic!("{a}"))
}

fn sandbox() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for sub in ["home", "config", "data", "outside", "proj/.airlock"] {
        std::fs::create_dir_all(d.path().join(sub)).unwrap();
    }
    // an empty managed layer, so the machine's own does not play in
    std::fs::write(d.path().join("managed.toml"), "").unwrap();
    std::fs::write(
        d.path().join("proj/.airlock/policy.toml"),
        "[[rules]]\nid = \"no-publish\"\nshell = \"npm publish *\"\ndecision = \"deny\"\nmessage = \"This project is never published from an agent.\"\n",
    )
    .unwrap();
    d
}

#[test]
fn a_cd_into_a_project_is_judged_with_that_projects_policy() {
    let d = sandbox();
    let proj = d.path().join("proj");
    let outside = d.path().join("outside");
    // from inside, the project's rule decides
    let a = hook(
        d.path(),
        &claude("Bash", json!({"command": "npm publish"}), &proj),
    );
    assert_eq!(decision(&a), "deny", "{a}");
    // from outside, through a `cd` in the line: the same
    for line in [
        "cd ../proj && npm publish",
        "cd ../proj; npm publish --tag next",
        "(cd ../proj && npm publish)",
        "cd .. && cd proj && npm publish",
    ] {
        let a = hook(
            d.path(),
            &claude("Bash", json!({"command": line}), &outside),
        );
        assert_eq!(decision(&a), "deny", "{line}: {a}");
        let reason = a["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap_or_default();
        assert!(reason.contains("never published"), "{line}: {reason}");
    }
    // a line that does not go there is judged without it
    let a = hook(
        d.path(),
        &claude("Bash", json!({"command": "npm publish"}), &outside),
    );
    assert_ne!(decision(&a), "deny", "{a}");
    let a = hook(
        d.path(),
        &claude("Bash", json!({"command": "cd ../proj && ls"}), &outside),
    );
    assert_eq!(decision(&a), "allow", "{a}");
}

#[test]
fn web_fetches_to_internal_places_or_with_secrets_ask() {
    let d = sandbox();
    let cwd = d.path().join("outside");
    for url in [
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "http://127.0.0.1:7373/v1/approvals",
        "http://localhost./admin",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://[::ffff:169.254.169.254]/",
        "http://[fe80::1]/",
        "http://192.168.1.1/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "https://api.example.com/v1?api_key=abcdef123456",
        "https://example.com/x?d=q8Z3vN0pX7rT2mK9wB4yL6cH1jF5sD8gA0eU",
    ] {
        for tool in ["WebFetch", "web_fetch"] {
            let a = hook(
                d.path(),
                &claude(tool, json!({"url": url, "prompt": "read it"}), &cwd),
            );
            assert_eq!(decision(&a), "ask", "{tool} {url}: {a}");
        }
    }
    for url in [
        "https://docs.rs/serde/latest/serde/",
        "https://www.google.com/search?q=how+to+rotate+an+api+key",
        "https://github.com/o/r/commit/3f2a9c1e5b7d9f0a2c4e6b8d0f1a3c5e7b9d1f3a",
    ] {
        let a = hook(
            d.path(),
            &claude("WebFetch", json!({"url": url, "prompt": "read it"}), &cwd),
        );
        assert_eq!(decision(&a), "allow", "{url}: {a}");
    }
}
