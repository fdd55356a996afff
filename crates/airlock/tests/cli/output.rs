//! Standard output closed early (`airlock grant list | head -1`): a one-line error and the error
//! exit code, never a panic's backtrace and never exit 0 (for `check` that would read as allow).

use std::io::Read;
use std::process::{Command, Stdio};

#[test]
fn a_closed_stdout_is_an_error_exit_not_a_panic() {
    let data = tempfile::tempdir().unwrap();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("airlock"))
        .args(["grant", "list"])
        .env("AIRLOCK_DATA_DIR", data.path())
        .env_remove("AIRLOCK_DATABASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(3), "{err}");
    assert!(
        err.contains("standard output was closed"),
        "one line says why: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}
