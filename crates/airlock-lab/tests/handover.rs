//! `airlock eval …` runs `airlock-lab eval …` beside it: the same output and exit code as the
//! lab binary run directly, the global options passed on, `--help` answered by the lab.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

fn both(args: &[&str]) -> (std::process::Output, std::process::Output) {
    let via = Command::new(support::airlock())
        .args(args)
        .output()
        .unwrap();
    let direct = Command::new(support::lab()).args(args).output().unwrap();
    (via, direct)
}

#[test]
fn airlock_eval_is_airlock_lab_eval() {
    let (via, direct) = both(&["eval", "text", "--corpora", "/nonexistent/corpora"]);
    assert_eq!(via.status.code(), Some(3));
    assert_eq!(via.status.code(), direct.status.code());
    assert_eq!(via.stdout, direct.stdout);
    assert_eq!(via.stderr, direct.stderr);
    assert!(String::from_utf8_lossy(&via.stderr).contains("corpora not found"));

    let (via, direct) = both(&[
        "eval",
        "text",
        "--corpora",
        "/nonexistent/corpora",
        "--allow-missing",
    ]);
    assert_eq!(via.status.code(), Some(0));
    assert_eq!(via.stdout, direct.stdout);
}

#[test]
fn help_after_eval_or_bench_is_the_labs() {
    for cmd in ["eval", "bench"] {
        let (via, direct) = both(&[cmd, "--help"]);
        assert_eq!(via.status.code(), Some(0));
        assert_eq!(via.stdout, direct.stdout);
        assert!(String::from_utf8_lossy(&via.stdout).contains("airlock-lab"));
    }
}

#[test]
fn the_global_options_reach_the_lab() {
    // `bench approvals --nodes 2` needs a PostgreSQL URL: given to `airlock`, the lab sees it
    // and starts its nodes on it (which stop at once on this malformed URL), rather than
    // refusing for want of the option.
    let out = Command::new(support::airlock())
        .args(["--database", "postgres://nobody@[::1"])
        .args(["bench", "approvals", "--nodes", "2", "--count", "1"])
        .env_remove("AIRLOCK_DATABASE_URL")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("airlock serve exited at start"), "{err}");
    let out = Command::new(support::airlock())
        .args(["bench", "approvals", "--nodes", "2", "--count", "1"])
        .env_remove("AIRLOCK_DATABASE_URL")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("pass --database"), "{err}");
}
