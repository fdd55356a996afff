//! `airlock mcp wrap` end to end with the official MCP Python SDK (`mcp` 2.x) on both sides: a
//! server written with the SDK runs behind the wrap, and an SDK client launches the wrap as its
//! stdio server; `airlock serve` decides and an approver answers over REST. The SDK lives in
//! the virtualenv `.ci/mcp-py.sh` makes (target/mcp-venv); without it the test says so and
//! passes, unless AIRLOCK_REQUIRE_PY=1 (CI), where a missing venv fails.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const POLICY: &str = r#"
[[tools]]
name = "mcp__py-demo__echo"
side_effects = "read"
tier = 0

[[tools]]
name = "mcp__py-demo__read_page"
side_effects = "read"
tier = 0

[[tools]]
name = "mcp__py-demo__confirm"
side_effects = "read"
tier = 0

[[tools]]
name = "mcp__py-demo__summarize"
side_effects = "read"
tier = 0

[[tools]]
name = "mcp__py-demo__deploy"
decision = "ask"
side_effects = "external"
tier = 2
"#;

fn venv_python() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let p = root.join("target/mcp-venv/bin/python");
    if p.exists() {
        return Some(p);
    }
    let required = std::env::var("AIRLOCK_REQUIRE_PY").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "AIRLOCK_REQUIRE_PY=1 but {} is missing: run .ci/mcp-py.sh",
        p.display()
    );
    eprintln!(
        "skipping: no MCP Python SDK venv at {} (run .ci/mcp-py.sh to create it)",
        p.display()
    );
    None
}

struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn airlock(data: &Path, config_home: &Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("airlock"));
    c.env("AIRLOCK_DATA_DIR", data)
        .env("XDG_CONFIG_HOME", config_home)
        .env_remove("AIRLOCK_POLICY")
        .env_remove("AIRLOCK_URL")
        .env_remove("AIRLOCK_TOKEN")
        .env_remove("AIRLOCK_DATABASE_URL")
        .env_remove("AIRLOCK_MCP_CONFIG")
        .env_remove("AIRLOCK_SESSION");
    c
}

struct Setup {
    _tmp: tempfile::TempDir,
    _daemon: Daemon,
    data: PathBuf,
    home: PathBuf,
    url: String,
    approver: String,
}

/// A daemon over a fresh data directory, the test policy and MCP configuration, and an
/// approver token.
fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let home = tmp.path().join("config");
    std::fs::create_dir_all(home.join("airlock")).unwrap();
    std::fs::write(home.join("airlock/policy.toml"), POLICY).unwrap();
    std::fs::write(
        home.join("airlock/mcp.toml"),
        "[mcp]\ncall_timeout_secs = 60\n[mcp.servers.py-demo]\n",
    )
    .unwrap();
    let child = airlock(&data, &home)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let daemon = Daemon(child);
    let started = Instant::now();
    let url = loop {
        if let Ok(text) = std::fs::read_to_string(data.join("serve.json"))
            && let Ok(v) = serde_json::from_str::<Value>(&text)
        {
            break v["url"].as_str().unwrap().to_string();
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "airlock serve did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = airlock(&data, &home)
        .args([
            "token", "create", "--role", "approver", "--name", "alice", "--quiet",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let approver = String::from_utf8(out.stdout).unwrap().trim().to_string();
    Setup {
        _tmp: tmp,
        _daemon: daemon,
        data,
        home,
        url,
        approver,
    }
}

/// Runs one of the SDK client scripts against the setup; it must print `ALL OK`.
fn run_client(python: &Path, script: &str, s: &Setup) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli/mcp")
        .join(script);
    let out = Command::new(python)
        .arg(&script)
        .env("AIRLOCK_BIN", assert_cmd::cargo::cargo_bin("airlock"))
        .env("AIRLOCK_DATA_DIR", &s.data)
        .env("XDG_CONFIG_HOME", &s.home)
        .env("AIRLOCK_URL", &s.url)
        .env("APPROVER_TOKEN", &s.approver)
        .env_remove("AIRLOCK_TOKEN")
        .env_remove("AIRLOCK_POLICY")
        .env_remove("AIRLOCK_DATABASE_URL")
        .env_remove("AIRLOCK_MCP_CONFIG")
        .env_remove("AIRLOCK_SESSION")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("ALL OK"),
        "the SDK client failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
}

#[test]
fn the_python_sdk_client_sees_hidden_denied_asked_and_quarantined_tools() {
    let Some(python) = venv_python() else {
        return;
    };
    run_client(&python, "sdk_client.py", &setup());
}

#[test]
fn the_python_sdk_client_goes_through_the_streamable_http_proxy() {
    let Some(python) = venv_python() else {
        return;
    };
    run_client(&python, "sdk_http_client.py", &setup());
}
