//! Standard output closed early (`airlock bench … | head -1`): a one-line error and the error
//! exit code, never a panic's backtrace and never exit 0. Run through `airlock bench`, so the
//! hand-over to `airlock-lab` is shown to keep the output, the stderr and the exit code.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Read;
use std::process::{Command, Stdio};

#[test]
fn a_closed_stdout_is_an_error_exit_not_a_panic() {
    let mut child = Command::new(support::airlock())
        .args(["bench", "hook", "--runs", "2"])
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
