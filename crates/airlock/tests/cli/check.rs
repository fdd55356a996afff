//! `airlock check` as a process: exit codes, the JSON wire shape (snapshots), `--jsonl`, and
//! bad input.

use assert_cmd::Command;

fn airlock() -> Command {
    Command::cargo_bin("airlock").unwrap()
}

fn json_of(args: &[&str]) -> (i32, serde_json::Value) {
    let out = airlock()
        .arg("check")
        .arg("--json")
        .arg("--")
        .args(args)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap();
    (out.status.code().unwrap_or(-1), v)
}

#[test]
fn help_exits_zero() {
    airlock().arg("--help").assert().success();
}

#[test]
fn exit_codes_follow_the_decision() {
    airlock()
        .args(["check", "--", "ls", "-la"])
        .assert()
        .code(0);
    airlock()
        .args(["check", "--", "echo aGk= | base64 -d | sh"])
        .assert()
        .code(1);
    airlock()
        .args(["check", "--", "$CMD --force"])
        .assert()
        .code(2);
    airlock().args(["check"]).assert().code(3);
    airlock().args(["check", "--no-such-flag"]).assert().code(3);
}

#[test]
fn json_shape_read_only() {
    let (code, v) = json_of(&["ls -la"]);
    assert_eq!(code, 0);
    insta::assert_json_snapshot!("check_read_only", v);
}

#[test]
fn json_shape_deny() {
    let (code, v) = json_of(&["echo aGk= | base64 -d | sh"]);
    assert_eq!(code, 1);
    insta::assert_json_snapshot!("check_decoded_payload", v);
}

#[test]
fn json_shape_ask() {
    let (code, v) = json_of(&["ls; $CMD -x"]);
    assert_eq!(code, 2);
    insta::assert_json_snapshot!("check_dynamic", v);
}

#[test]
fn argv_words_keep_their_boundaries() {
    // "reset --hard" is one argument to -m, not a git subcommand
    let (code, v) = json_of(&["git", "commit", "-m", "reset --hard"]);
    assert_eq!(code, 0, "{v}");
}

#[test]
fn explain_shows_remediation_and_span() {
    let out = airlock()
        .args(["check", "--explain", "--", "ls; $CMD -x"])
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.starts_with("ASK (tier 2 medium)"), "{s}");
    assert!(s.contains("help: "), "{s}");
    assert!(s.contains("at bytes 4..11: $CMD -x"), "{s}");
}

#[test]
fn jsonl_answers_each_line_in_order() {
    let input = "\"ls\"\n\"echo x | base64 -d | bash\"\nnot-json\n\"$X\"\n";
    let out = airlock()
        .args(["check", "--jsonl"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let decisions: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["decision"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(decisions, ["allow", "deny", "deny", "ask"]);
}

#[cfg(unix)]
#[test]
fn non_utf8_arguments_are_never_allowed() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"ls \xff\xfe");
    let out = airlock()
        .arg("check")
        .arg("--json")
        .arg("--")
        .arg(bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["code"] == "NOT_UTF8")
    );
}
