//! The binaries the lab's tests run: `airlock-lab` (built for these tests) and the `airlock`
//! beside it in the same target directory, which hands `eval` and `bench` over to it.

use std::path::PathBuf;

/// The lab binary under test.
pub fn lab() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_airlock-lab"))
}

/// The `airlock` binary beside the lab's. Cargo builds it for `cargo test --workspace` (the
/// README's test command); alone, `cargo test -p airlock -p airlock-lab`.
pub fn airlock() -> PathBuf {
    let p = lab().with_file_name(format!("airlock{}", std::env::consts::EXE_SUFFIX));
    assert!(
        p.is_file(),
        "{} is missing: run `cargo test -p airlock -p airlock-lab` (or `cargo test --workspace`)",
        p.display()
    );
    p
}
