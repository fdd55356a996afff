//! airlock-wasm on real modules (WAT under `tests/modules/`, compiled by the `wat` crate) run
//! by the real interpreter against the real filesystem: what a module can do, what it is
//! refused, and how each limit stops it with its reason code.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod loader;
mod mcp;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use airlock_core::ReasonCode;
use airlock_wasm::{Ending, Entry, Invocation, Limits, Outcome, Output, Preopen, WasmError};

pub fn module(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/modules")
        .join(format!("{name}.wat"));
    wat::parse_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn invocation(args: &[&str]) -> Invocation {
    Invocation {
        args: args.iter().map(|s| s.to_string()).collect(),
        env: Vec::new(),
        stdin: Vec::new(),
        preopens: Vec::new(),
        entry: Entry::Start,
        stdout: Output::Capture,
        stderr: Output::Capture,
    }
}

fn run(name: &str, inv: Invocation, limits: &Limits) -> Outcome {
    airlock_wasm::run(&module(name), inv, limits).unwrap()
}

fn stopped(o: &Outcome) -> ReasonCode {
    match &o.ending {
        Ending::Stopped { reason, .. } => *reason,
        other => panic!("expected a stop, got {other:?}"),
    }
}

#[test]
fn hello_world_writes_its_line_and_exits_zero() {
    let o = run("hello", invocation(&["hello"]), &Limits::default());
    assert_eq!(o.ending, Ending::Exited(0));
    assert_eq!(o.stdout, b"hello, world\n");
    assert!(o.fuel_used > 0 && o.fuel_used < 1_000, "{}", o.fuel_used);
}

#[test]
fn standard_input_is_the_given_buffer() {
    let mut inv = invocation(&["echo"]);
    inv.stdin = br#"{"text":"hi"}"#.to_vec();
    let o = run("echo", inv, &Limits::default());
    assert_eq!(o.ending, Ending::Exited(0));
    assert_eq!(o.stdout, br#"{"text":"hi"}"#);
}

/// A directory with `data/file.txt`, a secret beside `data`, and symbolic links inside
/// `data` pointing in and out.
struct Tree {
    _tmp: tempfile::TempDir,
    data: PathBuf,
    outside: PathBuf,
}

fn tree() -> Tree {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("file.txt"), "inside\n").unwrap();
    std::fs::create_dir(data.join("sub")).unwrap();
    std::fs::write(data.join("sub/deeper.txt"), "deeper\n").unwrap();
    let outside = tmp.path().join("secret.txt");
    std::fs::write(&outside, "SECRET\n").unwrap();
    std::os::unix::fs::symlink(&outside, data.join("abs-link")).unwrap();
    std::os::unix::fs::symlink("../secret.txt", data.join("rel-link")).unwrap();
    std::os::unix::fs::symlink("file.txt", data.join("inner-link")).unwrap();
    std::os::unix::fs::symlink("..", data.join("up")).unwrap();
    Tree {
        _tmp: tmp,
        data,
        outside,
    }
}

fn probe(t: &Tree, writable: bool, args: &[&str]) -> Outcome {
    let mut all = vec!["fsprobe"];
    all.extend(args);
    let mut inv = invocation(&all);
    inv.preopens = vec![Preopen {
        host: t.data.clone(),
        guest: "data".into(),
        writable,
    }];
    run("fsprobe", inv, &Limits::default())
}

const ENOTCAPABLE: i32 = 76;

#[test]
fn a_granted_directory_is_readable_inside() {
    let t = tree();
    for path in [
        "file.txt",
        "inner-link",
        "sub/deeper.txt",
        "sub/../file.txt",
        "./file.txt",
    ] {
        let o = probe(&t, false, &["r", path]);
        assert_eq!(o.ending, Ending::Exited(0), "{path}: {o:?}");
        assert!(o.stdout.ends_with(b"\n") && !o.stdout.is_empty(), "{path}");
        assert_eq!(o.denial_count, 0);
    }
}

#[test]
fn paths_leaving_the_directory_are_refused_however_spelt() {
    let t = tree();
    let abs = t.outside.to_str().unwrap().to_string();
    for path in [
        "../secret.txt",
        "sub/../../secret.txt",
        abs.as_str(),
        "abs-link",
        "rel-link",
        "up/secret.txt",
        "/etc/passwd",
    ] {
        let o = probe(&t, false, &["r", path]);
        assert_eq!(o.ending, Ending::Exited(ENOTCAPABLE), "{path}: {o:?}");
        assert!(
            !String::from_utf8_lossy(&o.stdout).contains("SECRET"),
            "{path}"
        );
        assert_eq!(o.denial_count, 1, "{path}: {:?}", o.denials);
    }
}

#[test]
fn writing_needs_a_writable_directory() {
    let t = tree();
    let o = probe(&t, false, &["w", "new.txt", "written"]);
    assert_eq!(o.ending, Ending::Exited(ENOTCAPABLE), "{o:?}");
    assert!(o.denials[0].contains("read-only"), "{:?}", o.denials);
    assert!(!t.data.join("new.txt").exists());
    // overwriting an existing file is a write too
    let o = probe(&t, false, &["w", "file.txt", "clobbered"]);
    assert_eq!(o.ending, Ending::Exited(ENOTCAPABLE));
    assert_eq!(
        std::fs::read_to_string(t.data.join("file.txt")).unwrap(),
        "inside\n"
    );

    let o = probe(&t, true, &["w", "new.txt", "written"]);
    assert_eq!(o.ending, Ending::Exited(0), "{o:?}");
    assert_eq!(
        std::fs::read_to_string(t.data.join("new.txt")).unwrap(),
        "written"
    );
    // a writable directory does not make the outside writable
    let o = probe(&t, true, &["w", "../escaped.txt", "x"]);
    assert_eq!(o.ending, Ending::Exited(ENOTCAPABLE));
    assert!(!t.data.parent().unwrap().join("escaped.txt").exists());
    let o = probe(&t, true, &["w", "rel-link", "x"]);
    assert_eq!(o.ending, Ending::Exited(ENOTCAPABLE));
    assert_eq!(std::fs::read_to_string(&t.outside).unwrap(), "SECRET\n");
}

#[test]
fn devices_and_pipes_are_not_opened() {
    let t = tree();
    let fifo = t.data.join("fifo");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let started = Instant::now();
    let o = probe(&t, false, &["r", "fifo"]);
    // ENOTSUP, at once: opening a FIFO for reading would otherwise wait for a writer
    assert_eq!(o.ending, Ending::Exited(58), "{o:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn an_endless_loop_runs_out_of_fuel() {
    let limits = Limits {
        fuel: 1_000_000,
        ..Limits::default()
    };
    let o = run("spin", invocation(&["spin"]), &limits);
    assert_eq!(stopped(&o), ReasonCode::WasmOutOfFuel);
    assert!(
        o.fuel_used <= 1_000_000 && o.fuel_used > 900_000,
        "{}",
        o.fuel_used
    );
}

#[test]
fn a_loop_with_plenty_of_fuel_stops_at_the_wall_clock() {
    let limits = Limits {
        fuel: u64::MAX,
        timeout: Duration::from_millis(500),
        ..Limits::default()
    };
    let started = Instant::now();
    let o = run("spin", invocation(&["spin"]), &limits);
    assert_eq!(stopped(&o), ReasonCode::WasmTimeout);
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(500), "{took:?}");
    // a slice is milliseconds; the bound leaves room for a loaded machine
    assert!(took < Duration::from_secs(3), "{took:?}");
}

#[test]
fn growing_memory_past_the_cap_is_stopped() {
    let limits = Limits {
        memory_bytes: 1024 * 1024,
        ..Limits::default()
    };
    let o = run("grow", invocation(&["grow"]), &limits);
    assert_eq!(stopped(&o), ReasonCode::WasmMemoryLimit);
    // a module that starts above the cap does not start
    let big = wat::parse_str(r#"(module (memory (export "memory") 100) (func (export "_start")))"#)
        .unwrap();
    let o = airlock_wasm::run(&big, invocation(&["big"]), &limits).unwrap();
    assert_eq!(stopped(&o), ReasonCode::WasmMemoryLimit, "{o:?}");
}

#[test]
fn unreachable_traps() {
    let o = run("unreachable", invocation(&["u"]), &Limits::default());
    assert_eq!(stopped(&o), ReasonCode::WasmTrap);
    let Ending::Stopped { message, .. } = &o.ending else {
        unreachable!()
    };
    assert!(message.contains("unreachable"), "{message}");
}

#[test]
fn output_past_the_cap_is_stopped() {
    let limits = Limits {
        output_bytes: 10_000,
        ..Limits::default()
    };
    let o = run("chatty", invocation(&["chatty"]), &limits);
    assert_eq!(stopped(&o), ReasonCode::WasmOutputLimit);
    assert_eq!(o.stdout.len(), 10_000);
}

fn load_err(bytes: &[u8]) -> WasmError {
    match airlock_wasm::load(bytes, &Limits::default()) {
        Err(e) => e,
        Ok(_) => panic!("loaded"),
    }
}

#[test]
fn malformed_and_invalid_modules_are_refused_clearly() {
    let e = load_err(b"#!/bin/sh\necho hi\n");
    assert_eq!(e.reason(), Some(ReasonCode::WasmInvalidModule));
    assert!(e.to_string().contains("magic number"), "{e}");
    let e = load_err(b"\0asm\x01\0\0\0\x01\xff\xff");
    assert_eq!(e.reason(), Some(ReasonCode::WasmInvalidModule), "{e}");
    // well-formed but fails validation: an i64 where an i32 is returned
    let bad = wat::parse_str("(module (func (result i32) (i64.const 1)))").unwrap();
    let e = load_err(&bad);
    assert_eq!(e.reason(), Some(ReasonCode::WasmInvalidModule), "{e}");
    assert!(e.to_string().contains("type mismatch"), "{e}");
    // a start section would run before any fuel slice
    let start = wat::parse_str("(module (func $s) (start $s))").unwrap();
    let e = load_err(&start);
    assert!(e.to_string().contains("start"), "{e}");
    // over the size cap
    let limits = Limits {
        module_bytes: 8,
        ..Limits::default()
    };
    let e = airlock_wasm::load(&module("hello"), &limits).err().unwrap();
    assert!(e.to_string().contains("over the limit"), "{e}");
}

#[test]
fn unknown_imports_are_refused_before_anything_runs() {
    let env =
        wat::parse_str(r#"(module (import "env" "foo" (func)) (func (export "_start") call 0))"#)
            .unwrap();
    let e = load_err(&env);
    assert_eq!(e.reason(), Some(ReasonCode::WasmUnknownImport));
    assert!(e.to_string().contains("env.foo"), "{e}");
    let not_wasi =
        wat::parse_str(r#"(module (import "wasi_snapshot_preview1" "launch_missiles" (func)))"#)
            .unwrap();
    assert!(
        load_err(&not_wasi)
            .to_string()
            .contains("not a WASI preview 1 function")
    );
    let memory = wat::parse_str(r#"(module (import "env" "memory" (memory 1)))"#).unwrap();
    assert_eq!(
        load_err(&memory).reason(),
        Some(ReasonCode::WasmUnknownImport)
    );
    // a WASI name with another signature fails at linking, still before the module runs
    let sig = wat::parse_str(
        r#"(module (import "wasi_snapshot_preview1" "fd_write" (func (param i32)))
                   (memory (export "memory") 1) (func (export "_start")))"#,
    )
    .unwrap();
    let e = airlock_wasm::run(&sig, invocation(&["x"]), &Limits::default())
        .err()
        .unwrap();
    assert_eq!(e.reason(), Some(ReasonCode::WasmUnknownImport), "{e}");
}

#[test]
fn unimplemented_wasi_functions_answer_enosys() {
    let m = wat::parse_str(
        r#"(module
             (import "wasi_snapshot_preview1" "path_unlink_file" (func $u (param i32 i32 i32) (result i32)))
             (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
             (memory (export "memory") 1)
             (func (export "_start") (call $exit (call $u (i32.const 3) (i32.const 0) (i32.const 1)))))"#,
    )
    .unwrap();
    let o = airlock_wasm::run(&m, invocation(&["x"]), &Limits::default()).unwrap();
    assert_eq!(o.ending, Ending::Exited(52));
}

#[test]
fn a_named_export_is_invoked_with_typed_parameters() {
    let mut inv = invocation(&["count"]);
    inv.entry = Entry::Export {
        name: "count".into(),
        params: vec!["1000".into()],
    };
    let o = run("count", inv.clone(), &Limits::default());
    assert_eq!(o.ending, Ending::Exited(0));
    assert_eq!(o.results, ["1000"]);
    inv.entry = Entry::Export {
        name: "count".into(),
        params: vec!["many".into()],
    };
    let e = airlock_wasm::run(&module("count"), inv.clone(), &Limits::default())
        .err()
        .unwrap();
    assert!(e.to_string().contains("not a value of type i64"), "{e}");
    inv.entry = Entry::Start;
    let e = airlock_wasm::run(&module("count"), inv, &Limits::default())
        .err()
        .unwrap();
    assert!(e.to_string().contains("_start"), "{e}");
}

#[test]
fn a_missing_directory_is_an_error_before_the_run() {
    let mut inv = invocation(&["fsprobe", "r", "x"]);
    inv.preopens = vec![Preopen {
        host: PathBuf::from("/nonexistent/airlock-wasm-test"),
        guest: "x".into(),
        writable: false,
    }];
    let e = airlock_wasm::run(&module("fsprobe"), inv, &Limits::default())
        .err()
        .unwrap();
    assert_eq!(e.reason(), Some(ReasonCode::WasmCapabilityDenied), "{e}");
}

#[test]
fn endless_recursion_traps_instead_of_exhausting_the_host() {
    let m = wat::parse_str(
        r#"(module (memory (export "memory") 1)
             (func $down (param i64) (result i64) (call $down (i64.add (local.get 0) (i64.const 1))))
             (func (export "_start") (drop (call $down (i64.const 0)))))"#,
    )
    .unwrap();
    let o = airlock_wasm::run(&m, invocation(&["x"]), &Limits::default()).unwrap();
    assert_eq!(stopped(&o), ReasonCode::WasmTrap, "{o:?}");
    let Ending::Stopped { message, .. } = &o.ending else {
        unreachable!()
    };
    assert!(message.contains("stack"), "{message}");
}
