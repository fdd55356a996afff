//! `airlock policy` and the policy inside `airlock check`, as processes with real files: the
//! documented example policy, layer discovery, explanations, examples, Claude import and the
//! fail-safe for a policy that does not load.

use std::path::Path;

use assert_cmd::Command;

/// The binary in a clean environment: its own config dir and working directory, no managed
/// policy, so the developer's files never leak in.
fn airlock(home: &Path) -> Command {
    let mut c = Command::cargo_bin("airlock").unwrap();
    c.env("XDG_CONFIG_HOME", home.join("config"))
        .env("HOME", home)
        .env_remove("AIRLOCK_POLICY")
        .env_remove("AIRLOCK_MANAGED_POLICY")
        .current_dir(home);
    c
}

fn run(c: &mut Command) -> (i32, String) {
    let out = c.output().unwrap();
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

/// The complete example in docs/policy.md.
fn doc_example() -> String {
    let doc = include_str!("../../../../docs/policy.md");
    let start = doc.find("# ~/.config/airlock/policy.toml").unwrap();
    let end = doc[start..].find("```").unwrap();
    doc[start..start + end].to_string()
}

#[test]
fn docs_policy_example_checks() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("policy.toml");
    std::fs::write(&f, doc_example()).unwrap();
    let (code, text) = run(airlock(d.path()).args(["policy", "check"]).arg(&f));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("policy sha256: "), "{text}");
    let (code, text) = run(airlock(d.path())
        .args(["policy", "test", "--policy"])
        .arg(&f));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("0 failed"), "{text}");
}

#[test]
fn user_and_project_layers_are_discovered_and_decide() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("config/airlock")).unwrap();
    std::fs::write(d.path().join("config/airlock/policy.toml"), doc_example()).unwrap();
    let repo = d.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join(".airlock")).unwrap();
    std::fs::create_dir_all(repo.join("src/deep")).unwrap();
    std::fs::write(
        repo.join(".airlock/policy.toml"),
        "[[rules]]\nid = \"no-cargo-publish\"\nwhen = \"Bash(cargo publish *)\"\ndecision = \"deny\"\n\n[[rules]]\nid = \"tests-ask-here\"\nshell = \"cargo test *\"\ndecision = \"ask\"\n",
    )
    .unwrap();
    // from the user's home: the user layer allows cargo test
    let (code, _) = run(airlock(d.path()).args(["check", "--", "cargo test --workspace"]));
    assert_eq!(code, 0);
    // inside the project (from a subdirectory), its rule tightens it
    let (code, text) = run(airlock(d.path()).current_dir(repo.join("src/deep")).args([
        "policy",
        "explain",
        "--",
        "cargo test --workspace",
    ]));
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("decided by: project:tests-ask-here"),
        "{text}"
    );
    assert!(text.contains("user:tests-and-builds"), "{text}");
    let (code, text) = run(airlock(d.path()).current_dir(&repo).args([
        "check",
        "--explain",
        "--",
        "sudo cargo publish --allow-dirty",
    ]));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("project:no-cargo-publish"), "{text}");
    // the explanation as JSON carries the hash and the trace
    let out = airlock(d.path())
        .current_dir(&repo)
        .args([
            "policy",
            "explain",
            "--json",
            "--",
            "git push --force origin main",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["decided_by"], "user:no-force-push");
    assert_eq!(v["policy_hash"].as_str().unwrap().len(), 64);
}

#[test]
fn explain_tools_and_writes() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("policy.toml");
    std::fs::write(&f, doc_example()).unwrap();
    let (code, text) = run(airlock(d.path())
        .args(["policy", "explain", "--policy"])
        .arg(&f)
        .args(["--tool", "mcp__github__delete_repo", "--arguments", "{}"]));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("TOOL_UNDECLARED"), "{text}");
    let (code, text) = run(airlock(d.path())
        .args(["policy", "explain", "--policy"])
        .arg(&f)
        .args([
            "--tool",
            "mcp__github__create_issue",
            "--arguments",
            r#"{"owner":"o","repo":"r","title":"t","labels":["x"]}"#,
        ]));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("SCHEMA_VIOLATION"), "{text}");
    let (code, text) = run(airlock(d.path())
        .args(["policy", "explain", "--policy"])
        .arg(&f)
        .args([
            "--tool",
            "mcp__github__create_issue",
            "--arguments",
            r#"{"owner":"o","repo":"r","title":"t"}"#,
        ]));
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("confirm: llm+human within 120s"), "{text}");
    let (code, text) = run(airlock(d.path())
        .args(["policy", "explain", "--policy"])
        .arg(&f)
        .args(["--write", "/etc/cron.d/x"]));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("user:no-system-config"), "{text}");
    let (code, _) = run(airlock(d.path()).args([
        "policy",
        "explain",
        "--tool",
        "x",
        "--arguments",
        "{not json",
    ]));
    assert_eq!(code, 3);
}

#[test]
fn bad_policies_are_reported_and_deny() {
    let d = tempfile::tempdir().unwrap();
    let bad = d.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[[rules]]\nid = \"x\"\nshell = \"ls\"\ndecision = \"allow\"\n",
    )
    .unwrap();
    // fine for a user, refused for a project
    let (code, text) = run(airlock(d.path()).args(["policy", "check"]).arg(&bad));
    assert_eq!(code, 0, "{text}");
    let (code, text) = run(airlock(d.path())
        .args(["policy", "check", "--layer", "project"])
        .arg(&bad));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("only tighten"), "{text}");
    let pinned = d.path().join("pinned.toml");
    std::fs::write(
        &pinned,
        format!(
            "[[tools]]\nname = \"t\"\nschema = {{ type = \"object\" }}\nschema_sha256 = \"{}\"\n",
            "0".repeat(64)
        ),
    )
    .unwrap();
    let (code, text) = run(airlock(d.path()).args(["policy", "check"]).arg(&pinned));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("pinned"), "{text}");
    // a policy that does not load: every check denies with POLICY_ERROR, never allows
    let broken = d.path().join("broken.toml");
    std::fs::write(&broken, "[[rules]\n").unwrap();
    let (code, text) = run(airlock(d.path())
        .args(["check", "--json", "--policy"])
        .arg(&broken)
        .args(["--", "ls"]));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("POLICY_ERROR"), "{text}");
    // and `policy test` with it is an error, not a pass
    let (code, _) = run(airlock(d.path())
        .args(["policy", "test", "--policy"])
        .arg(&broken));
    assert_eq!(code, 3);
}

#[test]
fn failing_examples_fail_the_test_command() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("p.toml");
    std::fs::write(
        &f,
        "[[examples]]\nshell = \"rm -rf /\"\nexpect = \"allow\"\n",
    )
    .unwrap();
    let (code, text) = run(airlock(d.path())
        .args(["policy", "test", "--policy"])
        .arg(&f));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("FAIL user example 1"), "{text}");
}

#[test]
fn claude_settings_import_round_trips() {
    let d = tempfile::tempdir().unwrap();
    let proj = d.path().join("proj/.claude");
    std::fs::create_dir_all(&proj).unwrap();
    let settings = proj.join("settings.json");
    std::fs::write(
        &settings,
        r#"{"permissions": {"allow": ["Bash(npm run test:*)", "mcp__github__get_issue"], "ask": ["Bash(git push *)"], "deny": ["Bash(curl *)", "Read(./.env)", "Edit(/secrets/**)"]}}"#,
    )
    .unwrap();
    let out = d.path().join("imported.toml");
    let (code, text) = run(airlock(d.path())
        .args(["policy", "import", "claude"])
        .arg(&settings)
        .arg("--out")
        .arg(&out));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("not imported: Read(./.env)"), "{text}");
    let body = std::fs::read_to_string(&out).unwrap();
    assert!(
        body.contains(&format!("Edit({}/secrets/**)", proj.display())),
        "{body}"
    );
    // refuses to overwrite
    let (code, _) = run(airlock(d.path())
        .args(["policy", "import", "claude"])
        .arg(&settings)
        .arg("--out")
        .arg(&out));
    assert_eq!(code, 3);
    let (code, _) = run(airlock(d.path())
        .args(["check", "--policy"])
        .arg(&out)
        .args(["--", "curl -s https://example.com"]));
    assert_eq!(code, 1);
    let (code, _) = run(airlock(d.path())
        .args(["check", "--policy"])
        .arg(&out)
        .args(["--", "npm run test -- --watch"]));
    assert_eq!(code, 0);
    let (code, text) = run(airlock(d.path())
        .args(["policy", "import", "claude"])
        .arg(d.path().join("missing.json")));
    assert_eq!(code, 3, "{text}");
}

#[test]
fn grants_turn_a_covered_ask_into_an_allow_once_and_are_recorded() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let as_agent = |c: &mut Command| {
        c.env("AIRLOCK_DATA_DIR", &data)
            .env("AIRLOCK_PRINCIPAL", "agent:claude")
            .env("AIRLOCK_SESSION", "s1");
    };
    let cmd = "git push --force origin main";
    let mut c = airlock(d.path());
    as_agent(&mut c);
    let (code, text) = run(c.args(["check", "--grants", "--", cmd]));
    assert_eq!(code, 2, "no grant yet: {text}");
    let mut c = airlock(d.path());
    as_agent(&mut c);
    let (code, text) = run(c.args([
        "grant",
        "add",
        "--agent",
        "agent:claude",
        "--session",
        "s1",
        "--exact-command",
        cmd,
        "--kind",
        "once",
        "--by",
        "alice",
    ]));
    assert_eq!(code, 0, "{text}");
    // another agent, or another command, does not get it
    let mut c = airlock(d.path());
    as_agent(&mut c);
    c.env("AIRLOCK_PRINCIPAL", "agent:other");
    assert_eq!(run(c.args(["check", "--grants", "--", cmd])).0, 2);
    let mut c = airlock(d.path());
    as_agent(&mut c);
    assert_eq!(
        run(c.args(["check", "--grants", "--", "git push --force origin dev"])).0,
        2
    );
    // the agent's one use: allowed, with the grant in the receipt
    let mut c = airlock(d.path());
    as_agent(&mut c);
    let (code, text) = run(c.args(["check", "--grants", "--record", "--explain", "--", cmd]));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("GRANT_USED"), "{text}");
    let mut c = airlock(d.path());
    as_agent(&mut c);
    let (code, text) = run(c
        .args(["ledger", "export", "--out"])
        .arg(d.path().join("pack")));
    assert_eq!(code, 0, "{text}");
    let receipts = std::fs::read_to_string(d.path().join("pack/receipts.jsonl")).unwrap();
    assert!(receipts.contains("\"grant\":\"gr_"), "{receipts}");
    assert!(receipts.contains("person:alice"), "{receipts}");
    // the grant's creation is in the ledger too, and replay leaves such records alone
    let n_events = receipts
        .lines()
        .filter(|l| l.contains("GRANT_EVENT"))
        .count();
    assert_eq!(n_events, 1, "{receipts}");
    for args in [
        &["ledger", "verify"][..],
        &["ledger", "replay", "--verify"][..],
    ] {
        let mut c = airlock(d.path());
        as_agent(&mut c);
        let (code, text) = run(c.args(args));
        assert_eq!(code, 0, "{args:?}: {text}");
    }
    // used up: asked again
    let mut c = airlock(d.path());
    as_agent(&mut c);
    assert_eq!(run(c.args(["check", "--grants", "--", cmd])).0, 2);
    // no grant ever lifts a deny
    let mut c = airlock(d.path());
    as_agent(&mut c);
    let (code, text) = run(c.args([
        "grant",
        "add",
        "--agent",
        "agent:claude",
        "--exact-command",
        "rm -rf /",
        "--by",
        "alice",
    ]));
    assert_eq!(code, 0, "{text}");
    let mut c = airlock(d.path());
    as_agent(&mut c);
    assert_eq!(run(c.args(["check", "--grants", "--", "rm -rf /"])).0, 1);
}
