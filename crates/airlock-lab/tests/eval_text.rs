//! `airlock-lab eval text` without its corpora: a clear error, or nothing to do when allowed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use assert_cmd::Command;

fn lab() -> Command {
    Command::cargo_bin("airlock-lab").unwrap()
}

#[test]
fn eval_text_errs_clearly_without_corpora() {
    let out = lab()
        .args(["eval", "text", "--corpora", "/nonexistent/corpora"])
        .assert()
        .code(3);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("corpora not found"));
    lab()
        .args([
            "eval",
            "text",
            "--corpora",
            "/nonexistent/corpora",
            "--allow-missing",
        ])
        .assert()
        .code(0);
}
