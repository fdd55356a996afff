//! `airlock eval` and `airlock bench` without the lab binary beside `airlock`: a clear error
//! naming the command that builds it (the hand-over itself is tested in airlock-lab's tests,
//! where both binaries are built).

use std::process::Command;

#[test]
fn without_airlock_lab_beside_it_eval_and_bench_name_the_build_command() {
    let dir = tempfile::tempdir().unwrap();
    let alone = dir.path().join("airlock");
    std::fs::copy(assert_cmd::cargo::cargo_bin("airlock"), &alone).unwrap();
    for args in [
        &["eval", "text", "--corpora", "/nonexistent"][..],
        &["bench", "hook", "--runs", "2"][..],
    ] {
        let out = Command::new(&alone).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(out.stdout.is_empty());
        assert!(
            err.contains(&format!(
                "`airlock {}` runs the lab binary airlock-lab",
                args[0]
            )) && err.contains("cargo build --release -p airlock-lab"),
            "{err}"
        );
    }
}
