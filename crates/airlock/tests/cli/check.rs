//! `airlock check` as a process.

use assert_cmd::Command;

#[test]
fn help_exits_zero() {
    Command::cargo_bin("airlock").unwrap().arg("--help").assert().success();
}
