//! `airlock tool` as a process: `run` on real modules (WAT from airlock-wasm's tests, compiled
//! here) with its exit codes and reason codes, directories, protected paths and write grants in
//! a real SQLite store; `serve` behind the MCP gateway (`airlock mcp wrap`) with `airlock serve`
//! deciding, over real JSON-RPC: a call that answers and one that runs out of fuel.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn wasm(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../airlock-wasm/tests/modules")
        .join(format!("{name}.wat"));
    wat::parse_file(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        for d in ["home/.ssh", "data", "mods", "out"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        std::fs::write(dir.path().join("data/file.txt"), "inside\n").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "SECRET\n").unwrap();
        for m in ["hello", "spin", "unreachable", "fsprobe", "count", "grow"] {
            std::fs::write(dir.path().join(format!("mods/{m}.wasm")), wasm(m)).unwrap();
        }
        Env { dir }
    }
    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }
    fn airlock(&self) -> Command {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("airlock"));
        c.env_remove("AIRLOCK_DATABASE_URL")
            .env_remove("AIRLOCK_AGENT")
            .env_remove("AIRLOCK_SESSION")
            .env("HOME", self.path("home"))
            .env("USER", "tester")
            .arg("--data-dir")
            .arg(self.path("state"))
            .current_dir(self.dir.path());
        c
    }
    /// `airlock tool run ARGS…`: (exit code, stdout, stderr).
    fn tool(&self, args: &[&str]) -> (i32, String, String) {
        let out = self
            .airlock()
            .args(["tool", "run"])
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
    fn grant(&self, args: &[&str]) -> String {
        let out = self
            .airlock()
            .args(["grant", "add", "--agent", "user", "--json"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["id"].as_str().unwrap().to_string()
    }
}

#[test]
fn tool_run_exit_codes_and_reason_codes() {
    let e = Env::new();
    let (code, out, _) = e.tool(&["mods/hello.wasm"]);
    assert_eq!((code, out.as_str()), (0, "hello, world\n"));

    let (code, _, err) = e.tool(&["--fuel", "100000", "mods/spin.wasm"]);
    assert_eq!(code, 134, "{err}");
    assert!(err.contains("WASM_OUT_OF_FUEL"), "{err}");

    let started = Instant::now();
    let (code, _, err) = e.tool(&[
        "--fuel",
        "18000000000000000000",
        "--timeout",
        "0.5",
        "mods/spin.wasm",
    ]);
    assert_eq!(code, 124, "{err}");
    assert!(err.contains("WASM_TIMEOUT"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10));

    let (code, _, err) = e.tool(&["--memory", "1", "mods/grow.wasm"]);
    assert_eq!(code, 134, "{err}");
    assert!(err.contains("WASM_MEMORY_LIMIT"), "{err}");

    let (code, _, err) = e.tool(&["mods/unreachable.wasm"]);
    assert_eq!(code, 134, "{err}");
    assert!(
        err.contains("WASM_TRAP") && err.contains("unreachable"),
        "{err}"
    );

    std::fs::write(e.path("mods/bad.wasm"), "#!/bin/sh\n").unwrap();
    let (code, _, err) = e.tool(&["mods/bad.wasm"]);
    assert_eq!(code, 125, "{err}");
    assert!(err.contains("WASM_INVALID_MODULE"), "{err}");

    let env =
        wat::parse_str(r#"(module (import "env" "foo" (func)) (func (export "_start") call 0))"#)
            .unwrap();
    std::fs::write(e.path("mods/env.wasm"), env).unwrap();
    let (code, _, err) = e.tool(&["mods/env.wasm"]);
    assert_eq!(code, 125, "{err}");
    assert!(
        err.contains("WASM_UNKNOWN_IMPORT") && err.contains("env.foo"),
        "{err}"
    );

    let (code, out, err) = e.tool(&["--invoke", "count", "mods/count.wasm", "--", "12345"]);
    assert_eq!((code, out.as_str()), (0, "12345\n"), "{err}");

    let (code, _, err) = e.tool(&["--timeout", "0", "mods/hello.wasm"]);
    assert_eq!(code, 125, "{err}");
}

#[test]
fn tool_run_reads_its_directories_and_writes_only_with_a_grant() {
    let e = Env::new();
    let (code, out, err) = e.tool(&["--dir", "data", "mods/fsprobe.wasm", "--", "r", "file.txt"]);
    assert_eq!((code, out.as_str()), (0, "inside\n"), "{err}");

    let (code, out, err) = e.tool(&[
        "--dir",
        "data",
        "mods/fsprobe.wasm",
        "--",
        "r",
        "../secret.txt",
    ]);
    assert_eq!(code, 76, "{err}");
    assert!(!out.contains("SECRET"));
    assert!(
        err.contains("WASM_CAPABILITY_DENIED") && err.contains("leaves its directory"),
        "{err}"
    );

    let (code, _, err) = e.tool(&[
        "--dir",
        "out",
        "mods/fsprobe.wasm",
        "--",
        "w",
        "x.txt",
        "hi",
    ]);
    assert_eq!(code, 76, "{err}");
    assert!(err.contains("read-only"), "{err}");
    assert!(!e.path("out/x.txt").exists());

    let out_dir = e.path("out");
    let id = e.grant(&["--write", out_dir.to_str().unwrap(), "--kind", "once"]);
    let (code, _, err) = e.tool(&[
        "--grant",
        &id,
        "mods/fsprobe.wasm",
        "--",
        "w",
        "x.txt",
        "hi",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(e.path("out/x.txt")).unwrap(), "hi");
    // its one use was that run
    let (code, _, err) = e.tool(&[
        "--grant",
        &id,
        "mods/fsprobe.wasm",
        "--",
        "w",
        "y.txt",
        "hi",
    ]);
    assert_eq!(code, 125, "{err}");
    assert!(err.contains("used up"), "{err}");
    assert!(!e.path("out/y.txt").exists());

    let net = e.grant(&["--network", "example.org:443"]);
    let (code, _, err) = e.tool(&["--grant", &net, "mods/hello.wasm"]);
    assert_eq!(code, 125, "{err}");
    assert!(err.contains("no network"), "{err}");

    // protected paths are never handed to a module, to read or to write
    for dir in ["home", "home/.ssh", "state"] {
        std::fs::create_dir_all(e.path(dir)).unwrap();
        let (code, _, err) = e.tool(&["--dir", dir, "mods/hello.wasm"]);
        assert_eq!(code, 125, "{dir}: {err}");
        assert!(err.contains("protected"), "{dir}: {err}");
    }
    let ssh = e.path("home/.ssh");
    let id = e.grant(&["--write", ssh.to_str().unwrap()]);
    let (code, _, err) = e.tool(&["--grant", &id, "mods/hello.wasm"]);
    assert_eq!(code, 125, "{err}");
}

struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

const POLICY: &str = r#"
[[tools]]
name = "mcp__wasm__echo"
side_effects = "read"
tier = 0

[[tools]]
name = "mcp__wasm__spin"
side_effects = "read"
tier = 0
"#;

#[test]
fn tool_serve_behind_the_gateway_answers_and_reports_fuel() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let home = tmp.path().join("config");
    let tools = tmp.path().join("tools");
    std::fs::create_dir_all(home.join("airlock")).unwrap();
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::write(home.join("airlock/policy.toml"), POLICY).unwrap();
    std::fs::write(home.join("airlock/mcp.toml"), "[mcp]\n[mcp.servers.wasm]\n").unwrap();
    std::fs::write(tools.join("echo.wasm"), wasm("echo")).unwrap();
    std::fs::write(
        tools.join("echo.toml"),
        "description = \"Answers with its arguments.\"\n[input_schema]\ntype = \"object\"\nproperties.text = { type = \"string\" }\n",
    )
    .unwrap();
    std::fs::write(tools.join("spin.wasm"), wasm("spin")).unwrap();
    std::fs::write(
        tools.join("spin.toml"),
        "description = \"Counts for ever.\"\n[limits]\nfuel = 200000\n",
    )
    .unwrap();
    let airlock = || {
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("airlock"));
        c.env("AIRLOCK_DATA_DIR", &data)
            .env("XDG_CONFIG_HOME", &home)
            .env("HOME", tmp.path())
            .env_remove("AIRLOCK_POLICY")
            .env_remove("AIRLOCK_URL")
            .env_remove("AIRLOCK_TOKEN")
            .env_remove("AIRLOCK_DATABASE_URL")
            .env_remove("AIRLOCK_MCP_CONFIG")
            .env_remove("AIRLOCK_SESSION");
        c
    };
    let _daemon = Daemon(
        airlock()
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let started = Instant::now();
    while !data.join("serve.json").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "airlock serve did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let bin = assert_cmd::cargo::cargo_bin("airlock");
    let mut wrap = airlock()
        .args(["mcp", "wrap", "--server", "wasm", "--"])
        .arg(&bin)
        .args(["tool", "serve", "--dir"])
        .arg(&tools)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = wrap.stdin.take().unwrap();
    let mut output = BufReader::new(wrap.stdout.take().unwrap());
    let mut ask = |m: Value| -> Value {
        input.write_all(format!("{m}\n").as_bytes()).unwrap();
        input.flush().unwrap();
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    };
    let init = ask(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    assert_eq!(
        init["result"]["serverInfo"]["name"], "airlock-tool",
        "{init}"
    );
    let list = ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let mut names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["echo", "spin"], "{list}");
    let ok = ask(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "through the gateway"}}}),
    );
    assert_eq!(ok["result"]["isError"], false, "{ok}");
    assert!(
        ok["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("through the gateway"),
        "{ok}"
    );
    let fuel = ask(
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "spin", "arguments": {}}}),
    );
    assert_eq!(fuel["result"]["isError"], true, "{fuel}");
    assert!(
        fuel["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("WASM_OUT_OF_FUEL"),
        "{fuel}"
    );
    drop(input);
    let started = Instant::now();
    while wrap.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the wrap did not exit"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
