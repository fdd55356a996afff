//! `airlock serve` end to end, as processes: the hook hands an ask to a running daemon and waits;
//! a person answers with `airlock approve` / `airlock deny` (the terminal channel); the daemon
//! survives SIGKILL with its approvals pending; two nodes on one PostgreSQL release each other's
//! waiting agents. The browser-driven inbox test lives in airlock-gateway.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A running `airlock serve`, killed (SIGKILL) when dropped.
struct Daemon {
    child: Child,
    url: String,
    dir: PathBuf,
}

impl Daemon {
    fn start(dir: &Path, config_home: &Path, database: Option<&str>) -> Daemon {
        Self::start_with(dir, config_home, database, &[])
    }

    fn start_with(
        dir: &Path,
        config_home: &Path,
        database: Option<&str>,
        extra: &[&str],
    ) -> Daemon {
        let _ = std::fs::remove_file(dir.join("serve.json"));
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("airlock"));
        cmd.args(["serve", "--listen", "127.0.0.1:0"])
            .args(extra)
            .arg("--node")
            .arg(dir.file_name().unwrap())
            .env("AIRLOCK_DATA_DIR", dir)
            .env("XDG_CONFIG_HOME", config_home)
            .env_remove("AIRLOCK_POLICY")
            .env_remove("AIRLOCK_URL")
            .env_remove("AIRLOCK_TOKEN")
            .env("AIRLOCK_TEST_CHAT_SECRET", CHAT_SECRET)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        match database {
            Some(url) => cmd.env("AIRLOCK_DATABASE_URL", url),
            None => cmd.env_remove("AIRLOCK_DATABASE_URL"),
        };
        let child = cmd.spawn().unwrap();
        let started = Instant::now();
        let info = loop {
            if let Ok(text) = std::fs::read_to_string(dir.join("serve.json"))
                && let Ok(v) = serde_json::from_str::<Value>(&text)
            {
                break v;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "airlock serve did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        Daemon {
            child,
            url: info["url"].as_str().unwrap().to_string(),
            dir: dir.to_path_buf(),
        }
    }

    fn agent_token(&self) -> String {
        std::fs::read_to_string(self.dir.join("agent.token"))
            .unwrap()
            .trim()
            .to_string()
    }

    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `airlock <args>` against a data directory (and database); returns (exit, stdout, stderr).
fn airlock(dir: &Path, database: Option<&str>, args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("airlock"));
    cmd.args(args)
        .env("AIRLOCK_DATA_DIR", dir)
        .env("XDG_CONFIG_HOME", dir.join("no-config"))
        .env_remove("AIRLOCK_POLICY")
        .env_remove("AIRLOCK_URL")
        .env_remove("AIRLOCK_TOKEN");
    match database {
        Some(url) => cmd.env("AIRLOCK_DATABASE_URL", url),
        None => cmd.env_remove("AIRLOCK_DATABASE_URL"),
    };
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn token(dir: &Path, database: Option<&str>, role: &str, name: &str) -> String {
    let (code, out, err) = airlock(
        dir,
        database,
        &["token", "create", "--role", role, "--name", name, "--quiet"],
    );
    assert_eq!(code, 0, "{err}");
    out.trim().to_string()
}

/// Plain HTTP/1.1 to the daemon (loopback), so the test depends on nothing but std.
fn http(url: &str, method: &str, path: &str, token: &str, body: Option<&Value>) -> (u16, Value) {
    let host = url.trim_start_matches("http://");
    let mut s = TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(90))).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw);
    let (head, rest) = text.split_once("\r\n\r\n").unwrap();
    let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(rest)
    } else {
        rest.to_string()
    };
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        s = &rest[n + 2..];
    }
    out
}

/// The hook, as Claude Code runs it, in the background: returns its (exit, stdout) when done.
fn hook_in_background(
    dir: &Path,
    config_home: &Path,
    env: &[(&str, &str)],
    command: &str,
) -> std::thread::JoinHandle<(i32, String)> {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("airlock"));
    cmd.arg("hook");
    run_in_background(cmd, dir, config_home, env, command)
}

/// The lean `airlock-hook` binary, as `hook install` sets it up, in the background.
fn lean_hook_in_background(
    dir: &Path,
    config_home: &Path,
    env: &[(&str, &str)],
    command: &str,
) -> std::thread::JoinHandle<(i32, String)> {
    let mut cmd = Command::new(crate::lean_hook::binary());
    cmd.args(["--agent", "claude"]);
    run_in_background(cmd, dir, config_home, env, command)
}

fn run_in_background(
    cmd: Command,
    dir: &Path,
    config_home: &Path,
    env: &[(&str, &str)],
    command: &str,
) -> std::thread::JoinHandle<(i32, String)> {
    let input = json!({
        "session_id": "sess-1", "cwd": "/tmp", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": command}
    });
    run_with_input(cmd, dir, config_home, env, input)
}

/// Runs a hook command in the background with `input` (a Claude Code `PreToolUse` object) on
/// its stdin.
fn run_with_input(
    mut cmd: Command,
    dir: &Path,
    config_home: &Path,
    env: &[(&str, &str)],
    input: Value,
) -> std::thread::JoinHandle<(i32, String)> {
    let input = input.to_string();
    cmd.env("AIRLOCK_DATA_DIR", dir)
        .env("XDG_CONFIG_HOME", config_home)
        .env("HOME", config_home)
        .env_remove("AIRLOCK_URL")
        .env_remove("AIRLOCK_TOKEN")
        .env_remove("AIRLOCK_SESSION")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    std::thread::spawn(move || {
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    })
}

/// Polls `airlock pending --json` until `n` approvals wait; returns them.
fn wait_pending(dir: &Path, url: &str, approver: &str, n: usize) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let (code, out, err) = airlock(
            dir,
            None,
            &["pending", "--json", "--url", url, "--token", approver],
        );
        assert_eq!(code, 0, "{err}");
        let list: Vec<Value> = serde_json::from_str(&out).unwrap();
        if list.len() >= n {
            return list;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no pending approval appeared: {out}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

const ASKS: &str = "git push --force origin main";

#[test]
fn the_hook_waits_for_a_person_and_is_released_by_approve() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, home) = (tmp.path().join("data"), tmp.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    let d = Daemon::start(&dir, &home, None);
    let approver = token(&dir, None, "approver", "alice");

    let hook = hook_in_background(&dir, &home, &[], ASKS);
    let pending = wait_pending(&dir, &d.url, &approver, 1);
    let ap = &pending[0];
    assert_eq!(ap["action"]["command"], ASKS, "{ap}");
    assert_eq!(ap["session"], "sess-1", "{ap}");
    let id = ap["id"].as_str().unwrap();

    // An agent token can never approve, not even through the CLI's own path.
    let agent = d.agent_token();
    let (code, _, err) = airlock(
        &dir,
        None,
        &["approve", id, "--url", &d.url, "--token", &agent],
    );
    assert_ne!(code, 0);
    assert!(err.contains("403"), "{err}");

    let (code, out, err) = airlock(
        &dir,
        None,
        &["approve", id, "--url", &d.url, "--token", &approver],
    );
    assert_eq!(code, 0, "{out}{err}");
    let (code, stdout) = hook.join().unwrap();
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains(r#""permissionDecision":"allow""#),
        "{stdout}"
    );

    // A second answer to the same approval is refused.
    let (code, _, err) = airlock(
        &dir,
        None,
        &[
            "deny", id, "--reason", "late", "--url", &d.url, "--token", &approver,
        ],
    );
    assert_ne!(code, 0);
    assert!(err.contains("409"), "{err}");

    drop(d);
    let (code, out, err) = airlock(&dir, None, &["ledger", "verify"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("ok: 1 receipts"),
        "one decision, one receipt: {out}"
    );
    // Re-deciding the log: the person's approval answered the policy's ask, which still holds.
    let (code, out, err) = airlock(&dir, None, &["ledger", "replay"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 same, 0 differ"), "{out}");
}

#[test]
fn a_denial_reaches_the_agent_with_its_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, home) = (tmp.path().join("data"), tmp.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    let d = Daemon::start(&dir, &home, None);
    let approver = token(&dir, None, "approver", "bob");
    let hook = hook_in_background(&dir, &home, &[], ASKS);
    let id = wait_pending(&dir, &d.url, &approver, 1)[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (code, _, err) = airlock(
        &dir,
        None,
        &[
            "deny",
            &id,
            "--reason",
            "force-push to main is not allowed today",
            "--url",
            &d.url,
            "--token",
            &approver,
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (_, stdout) = hook.join().unwrap();
    assert!(
        stdout.contains(r#""permissionDecision":"deny""#),
        "{stdout}"
    );
    assert!(stdout.contains("not allowed today"), "{stdout}");
}

/// The lean binary hands an ask to the daemon over loopback with its own HTTP client, and the
/// person's answer (allow, then a deny with its reason) reaches the agent.
#[test]
fn the_lean_hook_hands_its_ask_to_the_daemon() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, home) = (tmp.path().join("data"), tmp.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    let d = Daemon::start(&dir, &home, None);
    let approver = token(&dir, None, "approver", "erin");

    let hook = lean_hook_in_background(&dir, &home, &[], ASKS);
    let pending = wait_pending(&dir, &d.url, &approver, 1);
    assert_eq!(pending[0]["action"]["command"], ASKS, "{}", pending[0]);
    assert_eq!(pending[0]["session"], "sess-1", "{}", pending[0]);
    let id = pending[0]["id"].as_str().unwrap();
    let (code, out, err) = airlock(
        &dir,
        None,
        &["approve", id, "--url", &d.url, "--token", &approver],
    );
    assert_eq!(code, 0, "{out}{err}");
    let (code, stdout) = hook.join().unwrap();
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains(r#""permissionDecision":"allow""#),
        "{stdout}"
    );

    let hook = lean_hook_in_background(&dir, &home, &[], ASKS);
    let id = wait_pending(&dir, &d.url, &approver, 1)[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (code, _, err) = airlock(
        &dir,
        None,
        &[
            "deny",
            &id,
            "--reason",
            "not on a Monday",
            "--url",
            &d.url,
            "--token",
            &approver,
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (_, stdout) = hook.join().unwrap();
    assert!(
        stdout.contains(r#""permissionDecision":"deny""#),
        "{stdout}"
    );
    assert!(stdout.contains("not on a Monday"), "{stdout}");

    // Two asks, two receipts: the lean hook's approvals are the daemon's like any other.
    drop(d);
    let (code, out, err) = airlock(&dir, None, &["ledger", "verify"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("ok: 2 receipts"), "{out}");
}

/// A daemon the lean client does not take (here: an address it does not count as loopback) is
/// reached by re-running the call through `airlock hook` beside it.
#[test]
fn the_lean_hook_delegates_a_daemon_it_cannot_reach_to_airlock() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, home) = (tmp.path().join("data"), tmp.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    let d = Daemon::start(&dir, &home, None);
    let approver = token(&dir, None, "approver", "frank");
    let port = d.url.rsplit(':').next().unwrap();
    // The IPv4-mapped IPv6 form of 127.0.0.1: the same listener, not a loopback address to
    // the lean client's strict check.
    let mapped = format!("http://[::ffff:127.0.0.1]:{port}");
    TcpStream::connect(format!("[::ffff:127.0.0.1]:{port}"))
        .expect("this test needs IPv6 sockets that reach IPv4-mapped addresses");
    let agent = d.agent_token();
    let env = [
        ("AIRLOCK_URL", mapped.as_str()),
        ("AIRLOCK_TOKEN", agent.as_str()),
    ];
    let hook = lean_hook_in_background(&dir, &home, &env, ASKS);
    let id = wait_pending(&dir, &d.url, &approver, 1)[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (code, out, err) = airlock(
        &dir,
        None,
        &["approve", &id, "--url", &d.url, "--token", &approver],
    );
    assert_eq!(code, 0, "{out}{err}");
    let (code, stdout) = hook.join().unwrap();
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains(r#""permissionDecision":"allow""#),
        "{stdout}"
    );
}

#[test]
fn pending_approvals_survive_sigkill_and_are_decided_once() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, home) = (tmp.path().join("data"), tmp.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    let d = Daemon::start(&dir, &home, None);
    let approver = token(&dir, None, "approver", "carol");
    let agent = d.agent_token();
    let (status, out) = http(
        &d.url,
        "POST",
        "/v1/actions",
        &agent,
        Some(&json!({"kind": "shell", "command": ASKS, "session": "s-restart"})),
    );
    assert_eq!(status, 200, "{out}");
    assert_eq!(out["status"], "pending", "{out}");
    let id = out["id"].as_str().unwrap().to_string();
    d.kill();

    let d = Daemon::start(&dir, &home, None);
    let pending = wait_pending(&dir, &d.url, &approver, 1);
    assert_eq!(pending.len(), 1);
    let approval = pending[0]["id"].as_str().unwrap().to_string();
    let (code, _, err) = airlock(
        &dir,
        None,
        &["approve", &approval, "--url", &d.url, "--token", &approver],
    );
    assert_eq!(code, 0, "{err}");
    let (status, out) = http(
        &d.url,
        "GET",
        &format!("/v1/actions/{id}/wait?timeout=5"),
        &agent,
        None,
    );
    assert_eq!(status, 200, "{out}");
    assert_eq!(out["status"], "allowed", "{out}");
    // Answering again after another restart is refused: the decision was applied once.
    d.kill();
    let d = Daemon::start(&dir, &home, None);
    let (code, _, err) = airlock(
        &dir,
        None,
        &["approve", &approval, "--url", &d.url, "--token", &approver],
    );
    assert_ne!(code, 0);
    assert!(err.contains("409"), "{err}");
    drop(d);
    let (code, out, err) = airlock(&dir, None, &["ledger", "verify"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("ok: 1 receipts"),
        "one decision, one receipt: {out}"
    );
}

fn copy_admin_key(from: &Path, to: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(to.join("keys")).unwrap();
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(to.join("keys"), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::copy(from.join("keys/admin.key"), to.join("keys/admin.key")).unwrap();
}

/// A fresh PostgreSQL database for one test, dropped afterwards.
struct PgDb {
    name: String,
}

impl PgDb {
    fn new() -> Option<PgDb> {
        let name = format!(
            "airlock_cli_{}_{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        );
        let ok = Command::new("psql")
            .args(["-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-c"])
            .arg(format!("CREATE DATABASE {name}"))
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        ok.then_some(PgDb { name })
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:5432/{}", self.name)
    }
}

impl Drop for PgDb {
    fn drop(&mut self) {
        let _ = Command::new("psql")
            .args(["-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-c"])
            .arg(format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ))
            .output();
    }
}

#[test]
fn two_nodes_on_one_postgres_release_each_others_agents() {
    let Some(pg) = PgDb::new() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "PostgreSQL is required in CI"
        );
        eprintln!("skipping: no PostgreSQL at 127.0.0.1:5432");
        return;
    };
    let url = pg.url();
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let (dir_a, dir_b) = (tmp.path().join("node-a"), tmp.path().join("node-b"));
    let a = Daemon::start(&dir_a, &home, Some(&url));
    // A second node joins the ledger with the admin key, which registers its own ledger key.
    copy_admin_key(&dir_a, &dir_b);
    let b = Daemon::start(&dir_b, &home, Some(&url));
    let approver = token(&dir_b, Some(&url), "approver", "dana");

    // The agent talks to node A; the person answers on node B.
    let agent = a.agent_token();
    let hook = hook_in_background(
        &dir_a,
        &home,
        &[
            ("AIRLOCK_URL", a.url.as_str()),
            ("AIRLOCK_TOKEN", agent.as_str()),
        ],
        ASKS,
    );
    let pending = wait_pending(&dir_b, &b.url, &approver, 1);
    let id = pending[0]["id"].as_str().unwrap().to_string();
    let (code, _, err) = airlock(
        &dir_b,
        Some(&url),
        &["approve", &id, "--url", &b.url, "--token", &approver],
    );
    assert_eq!(code, 0, "{err}");
    let (code, stdout) = hook.join().unwrap();
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains(r#""permissionDecision":"allow""#),
        "{stdout}"
    );
    drop(a);
    drop(b);
    let (code, out, err) = airlock(&dir_a, Some(&url), &["ledger", "verify"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("ok: 1 receipts"),
        "one decision, one receipt: {out}"
    );
}

#[test]
fn watch_batches_approvals_and_denies_with_a_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, home) = (tmp.path().join("data"), tmp.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    let d = Daemon::start(&dir, &home, None);
    let approver = token(&dir, None, "approver", "erin");
    let agent = d.agent_token();
    let submit = |session: &str| {
        let (status, out) = http(
            &d.url,
            "POST",
            "/v1/actions",
            &agent,
            Some(&json!({"kind": "shell", "command": ASKS, "session": session})),
        );
        assert_eq!(
            (status, out["status"].as_str()),
            (200, Some("pending")),
            "{out}"
        );
        out["id"].as_str().unwrap().to_string()
    };
    let (one, two) = (submit("w1"), submit("w2"));

    // Two pending below tier 4: one "y" approves both.
    let run_watch = |stdin: &str| {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("airlock"))
            .args(["watch", "--once", "--url", &d.url, "--token", &approver])
            .env("AIRLOCK_DATA_DIR", &dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = run_watch("y\n");
    assert!(shown.contains("approve all 2 pending"), "{shown}");
    for id in [&one, &two] {
        let (_, out) = http(&d.url, "GET", &format!("/v1/actions/{id}"), &agent, None);
        assert_eq!(out["status"], "allowed", "{out}");
    }

    // One pending: deny it with a reason typed at the prompt.
    let three = submit("w3");
    let shown = run_watch("d\nnot during the freeze\n");
    assert!(shown.contains(ASKS), "{shown}");
    let (_, out) = http(&d.url, "GET", &format!("/v1/actions/{three}"), &agent, None);
    assert_eq!(out["status"], "denied", "{out}");
    assert!(out.to_string().contains("not during the freeze"), "{out}");

    // `airlock stats` reads from the store what people were asked and answered
    let (code, out, err) = airlock(&dir, None, &["stats", "--json"]);
    assert_eq!(code, 0, "{err}");
    let s: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(s["prompts"], 3, "{s}");
    assert_eq!(s["answered"], 3, "{s}");
    assert_eq!(s["llm_answered"], 0, "{s}");
    assert_eq!(s["days"].as_array().unwrap().len(), 1, "{s}");
    assert!(s["median_answer_ms"].as_i64().is_some(), "{s}");
    let (code, out, err) = airlock(&dir, None, &["stats"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("prompts") && out.contains("learned grants accepted: 0"),
        "{out}"
    );
}

/// A chat-completions endpoint on loopback that answers every request with `content` as the
/// assistant message, and hands each request body to the test.
fn llm_server(content: &'static str) -> (String, std::sync::mpsc::Receiver<String>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            let body = loop {
                let n = s.read(&mut chunk).unwrap_or(0);
                if n == 0 {
                    break String::new();
                }
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf).into_owned();
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let len = head
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse::<usize>().ok())?
                        })
                        .unwrap_or(0);
                    if body.len() >= len {
                        break body.to_string();
                    }
                }
            };
            let _ = tx.send(body);
            let answer = json!({
                "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "reviewer-1",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
            })
            .to_string();
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (url, rx)
}

/// A user policy that asks at tier 1 (the LLM reviewer's tier) for one command.
fn tier1_policy(home: &Path) {
    std::fs::create_dir_all(home.join("airlock")).unwrap();
    std::fs::write(
        home.join("airlock/policy.toml"),
        "[[rules]]\nid = \"docs-deploy\"\nshell = \"make deploy-docs *\"\ndecision = \"ask\"\ntier = 1\nmessage = \"Deploying the docs site needs a review.\"\n",
    )
    .unwrap();
}

fn llm_config(tmp: &Path, url: &str) -> PathBuf {
    let path = tmp.join("serve.toml");
    std::fs::write(
        &path,
        format!("[llm]\nbase_url = \"{url}\"\nmodel = \"reviewer-1\"\ntimeout = \"5s\"\n"),
    )
    .unwrap();
    path
}

#[test]
fn the_llm_reviewer_decides_tier_1_alone_and_escalates_what_it_cannot_read() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, home) = (tmp.path().join("data"), tmp.path().join("home"));
    tier1_policy(&home);

    let (url, bodies) =
        llm_server(r#"{"decision": "approve", "risk": 0.1, "rationale": "publishes docs only"}"#);
    let config = llm_config(tmp.path(), &url);
    let d = Daemon::start_with(&dir, &home, None, &["--config", config.to_str().unwrap()]);
    let agent = d.agent_token();
    let (status, out) = http(
        &d.url,
        "POST",
        "/v1/actions",
        &agent,
        Some(&json!({"kind": "shell", "command": "make deploy-docs", "session": "llm-1"})),
    );
    assert_eq!(status, 200, "{out}");
    let id = out["id"].as_str().unwrap();
    let (_, out) = http(
        &d.url,
        "GET",
        &format!("/v1/actions/{id}/wait?timeout=20"),
        &agent,
        None,
    );
    assert_eq!(out["status"], "allowed", "{out}");
    let prompt = bodies.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(prompt.contains("make deploy-docs"), "{prompt}");
    assert!(prompt.contains("reviewer-1"), "{prompt}");
    drop(d);

    // Output that is not the required JSON escalates to a person: the action stays pending.
    let (url, _bodies) = llm_server("sure, looks fine to me!");
    let config = llm_config(tmp.path(), &url);
    let d = Daemon::start_with(&dir, &home, None, &["--config", config.to_str().unwrap()]);
    let approver = token(&dir, None, "approver", "finn");
    let (_, out) = http(
        &d.url,
        "POST",
        "/v1/actions",
        &d.agent_token(),
        Some(&json!({"kind": "shell", "command": "make deploy-docs now", "session": "llm-2"})),
    );
    let id = out["id"].as_str().unwrap().to_string();
    let (_, out) = http(
        &d.url,
        "GET",
        &format!("/v1/actions/{id}/wait?timeout=2"),
        &d.agent_token(),
        None,
    );
    assert_eq!(out["status"], "pending", "{out}");
    let pending = wait_pending(&dir, &d.url, &approver, 1);
    assert_eq!(pending[0]["llm"]["result"], "error", "{}", pending[0]);
}

#[test]
fn watch_moves_on_when_an_approval_times_out_and_the_agent_is_denied() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, home) = (tmp.path().join("data"), tmp.path().join("home"));
    std::fs::create_dir_all(home.join("airlock")).unwrap();
    // A short tier-3 timeout, so the test does not wait 30 s.
    std::fs::write(
        home.join("airlock/policy.toml"),
        "[tiers.3]\nconfirm = \"human\"\ntimeout = \"2s\"\n",
    )
    .unwrap();
    let d = Daemon::start(&dir, &home, None);
    let approver = token(&dir, None, "approver", "gale");
    let agent = d.agent_token();
    let (_, out) = http(
        &d.url,
        "POST",
        "/v1/actions",
        &agent,
        Some(&json!({"kind": "shell", "command": ASKS, "session": "t1"})),
    );
    assert_eq!(out["status"], "pending", "{out}");
    let id = out["id"].as_str().unwrap().to_string();
    // The person is at the prompt but types nothing (stdin stays open).
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("airlock"))
        .args(["watch", "--once", "--url", &d.url, "--token", &approver])
        .env("AIRLOCK_DATA_DIR", &dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let _keep_open = child.stdin.take();
    let mut shown = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut shown)
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert!(shown.contains("no answer in time"), "{shown}");
    let (_, out) = http(
        &d.url,
        "GET",
        &format!("/v1/actions/{id}/wait?timeout=10"),
        &agent,
        None,
    );
    assert_eq!(out["status"], "denied", "{out}");
    assert!(out.to_string().contains("APPROVAL_TIMEOUT"), "{out}");
}

/// A stranger on the port `serve.json` names, answering "allowed" to everything; returns its
/// URL-less port holder and a handle yielding every request it saw once dropped.
fn impostor(
    port: &str,
) -> (
    std::thread::JoinHandle<Vec<String>>,
    std::sync::mpsc::Sender<()>,
) {
    let listener = std::net::TcpListener::bind(format!("127.0.0.1:{port}"))
        .expect("the dead daemon's port could not be taken");
    listener.set_nonblocking(true).unwrap();
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let h = std::thread::spawn(move || {
        let mut seen = Vec::new();
        loop {
            if stopped.try_recv().is_ok() {
                return seen;
            }
            let Ok((mut s, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            };
            s.set_nonblocking(false).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            // Every request on the connection, answered at once; whatever arrives is kept.
            let mut buf = [0u8; 65536];
            loop {
                let n = s.read(&mut buf).unwrap_or(0);
                if n == 0 {
                    break;
                }
                seen.push(String::from_utf8_lossy(&buf[..n]).into_owned());
                let answer = r#"{"status":"allowed","id":"act_1","message":"approved"}"#;
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}",
                    answer.len()
                );
                if s.write_all(reply.as_bytes()).is_err() {
                    break;
                }
            }
        }
    });
    (h, stop)
}

/// The daemon dies (SIGKILL: its `serve.json`, agent token and key stay behind) and another
/// program takes its port and says "allowed" to everything. Neither hook nor the person's
/// commands may send it a token or believe it: the hook asks locally.
#[test]
fn a_stranger_on_a_dead_daemons_port_gets_no_token_and_approves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, home) = (tmp.path().join("data"), tmp.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    let d = Daemon::start(&dir, &home, None);
    let approver = token(&dir, None, "approver", "gina");
    let agent = d.agent_token();
    let port = d.url.rsplit(':').next().unwrap().to_string();
    let url = d.url.clone();
    d.kill();
    assert!(
        dir.join("serve.json").is_file(),
        "SIGKILL leaves serve.json"
    );
    let (seen, stop) = impostor(&port);

    for lean in [true, false] {
        let hook = if lean {
            lean_hook_in_background(&dir, &home, &[], ASKS)
        } else {
            hook_in_background(&dir, &home, &[], ASKS)
        };
        let (code, stdout) = hook.join().unwrap();
        assert_eq!(code, 0, "{stdout}");
        assert!(
            stdout.contains(r#""permissionDecision":"ask""#),
            "lean={lean}: the local ask stays: {stdout}"
        );
    }
    let (code, out, err) = airlock(
        &dir,
        None,
        &["approve", "act_1", "--url", &url, "--token", &approver],
    );
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("is not the airlock daemon"), "{err}");
    let (code, _, err) = airlock(&dir, None, &["pending", "--token", &approver]);
    assert_ne!(code, 0);
    assert!(err.contains("is not the airlock daemon"), "{err}");

    stop.send(()).unwrap();
    let seen = seen.join().unwrap();
    assert!(
        !seen.is_empty(),
        "the clients did knock at the stranger's port"
    );
    for req in &seen {
        assert!(
            !req.contains(&agent) && !req.contains(&approver) && !req.contains("Authorization"),
            "a token reached the stranger: {req}"
        );
    }
}

/// `serve.json` names a port nobody listens on: the hook asks locally, at once.
#[test]
fn a_stale_serve_json_with_nobody_listening_leaves_the_local_ask() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, home) = (tmp.path().join("data"), tmp.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    let d = Daemon::start(&dir, &home, None);
    d.kill();
    let started = Instant::now();
    let (code, stdout) = lean_hook_in_background(&dir, &home, &[], ASKS)
        .join()
        .unwrap();
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains(r#""permissionDecision":"ask""#), "{stdout}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// What `airlock serve` leaves in the data directory is its owner's only.
#[test]
fn the_daemons_files_are_the_owners_only() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let (dir, home) = (tmp.path().join("data"), tmp.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    let d = Daemon::start(&dir, &home, None);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    for f in [
        "serve.json",
        "agent.token",
        "daemon.key",
        "airlock.db",
        "airlock.db-wal",
        "airlock.db-shm",
    ] {
        assert_eq!(mode(&dir.join(f)), 0o600, "{f}");
    }
    drop(d);
    let out = tmp.path().join("pack");
    let (code, _, err) = airlock(
        &dir,
        None,
        &["ledger", "export", "--out", out.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(mode(&out), 0o700);
    for e in std::fs::read_dir(&out).unwrap() {
        let p = e.unwrap().path();
        assert_eq!(mode(&p), 0o600, "{}", p.display());
    }
}

/// The signing secret the test daemons read from `AIRLOCK_TEST_CHAT_SECRET`.
const CHAT_SECRET: &str = "test-signing-secret-0123456789abcdef";

/// A Slack Web API on loopback: answers `chat.postMessage` and `chat.update` with `ok`, and
/// hands each (path, body) to the test.
fn slack_server() -> (String, std::sync::mpsc::Receiver<(String, Value)>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/api", listener.local_addr().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            let (path, body) = loop {
                let n = s.read(&mut chunk).unwrap_or(0);
                if n == 0 {
                    break (String::new(), String::new());
                }
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf).into_owned();
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let len = head
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse::<usize>().ok())?
                        })
                        .unwrap_or(0);
                    if body.len() >= len {
                        let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
                        break (path, body.to_string());
                    }
                }
            };
            let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            let answer =
                json!({"ok": true, "channel": v["channel"], "ts": "1800000000.000100"}).to_string();
            let _ = tx.send((path, v));
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (url, rx)
}

#[test]
fn a_slack_tap_at_the_daemons_request_url_releases_the_hook() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, home) = (tmp.path().join("data"), tmp.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    let (api, seen) = slack_server();
    let config = tmp.path().join("serve.toml");
    std::fs::write(
        &config,
        format!(
            "[slack.ops]\ntoken_env = \"PATH\"\nsigning_secret_env = \"AIRLOCK_TEST_CHAT_SECRET\"\nchannels = [\"C0OPS\"]\napprovers = {{ \"U0ALICE\" = \"alice\" }}\nbase_url = \"{api}\"\n"
        ),
    )
    .unwrap();
    let d = Daemon::start_with(&dir, &home, None, &["--config", config.to_str().unwrap()]);
    let hook = hook_in_background(&dir, &home, &[], ASKS);
    let (path, posted) = seen.recv_timeout(Duration::from_secs(30)).unwrap();
    assert!(path.ends_with("/chat.postMessage"), "{path}");
    assert!(posted["text"].as_str().unwrap().contains(ASKS), "{posted}");
    let value = posted["blocks"][1]["elements"][0]["value"]
        .as_str()
        .unwrap();
    let payload = json!({
        "type": "block_actions",
        "user": {"id": "U0ALICE", "username": "alice"},
        "channel": {"id": "C0OPS"},
        "message": {"ts": "1800000000.000100", "text": "airlock"},
        "actions": [{"action_id": "airlock_0", "block_id": "airlock", "value": value, "type": "button"}]
    });
    let body = format!(
        "payload={}",
        payload
            .to_string()
            .bytes()
            .map(|b| if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            })
            .collect::<String>()
    );
    let ts = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .to_string();
    let sig = airlock_chat::slack::sign(CHAT_SECRET.as_bytes(), &ts, body.as_bytes());
    let addr = d.url.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "POST /v1/chat/slack/ops HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\nX-Slack-Request-Timestamp: {ts}\r\nX-Slack-Signature: {sig}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let (code, stdout) = hook.join().unwrap();
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains(r#""permissionDecision":"allow""#),
        "{stdout}"
    );
    // the message is closed with the outcome
    let (path, update) = seen.recv_timeout(Duration::from_secs(30)).unwrap();
    assert!(path.ends_with("/chat.update"), "{path}");
    assert!(
        update["text"].as_str().unwrap().contains("alice in Slack"),
        "{update}"
    );
}

/// A hook's ask about a file write reaches the daemon although Claude Code sends its working
/// directory with every call: only a shell action carries one on the wire (the daemon refuses
/// the field on any other kind, which used to leave such asks to the terminal).
#[test]
fn the_hook_hands_a_file_write_ask_to_the_daemon() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, home) = (tmp.path().join("data"), tmp.path().join("home"));
    std::fs::create_dir_all(&home).unwrap();
    let d = Daemon::start(&dir, &home, None);
    let approver = token(&dir, None, "approver", "frank");

    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("airlock"));
    cmd.arg("hook");
    let input = json!({
        "session_id": "sess-w", "cwd": "/tmp", "hook_event_name": "PreToolUse",
        "tool_name": "Write", "tool_input": {"file_path": "/etc/profile", "content": "x"}
    });
    let hook = run_with_input(cmd, &dir, &home, &[], input);
    let pending = wait_pending(&dir, &d.url, &approver, 1);
    let ap = &pending[0];
    assert_eq!(ap["action"]["kind"], "file_write", "{ap}");
    assert_eq!(ap["action"]["path"], "/etc/profile", "{ap}");
    assert_eq!(ap["session"], "sess-w", "{ap}");
    let id = ap["id"].as_str().unwrap();
    let (code, _, err) = airlock(
        &dir,
        None,
        &[
            "deny",
            id,
            "--reason",
            "not today",
            "--url",
            &d.url,
            "--token",
            &approver,
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (_, stdout) = hook.join().unwrap();
    assert!(
        stdout.contains(r#""permissionDecision":"deny""#),
        "{stdout}"
    );
    assert!(stdout.contains("not today"), "{stdout}");
}

/// The lean hook as Claude Code runs it, with any event `input`, in `dir`; (exit, stdout).
fn lean_hook_event(dir: &Path, home: &Path, input: &Value) -> (i32, String) {
    let mut child = Command::new(crate::lean_hook::binary())
        .args(["--agent", "claude"])
        .env("AIRLOCK_DATA_DIR", dir)
        .env("XDG_CONFIG_HOME", home)
        .env("HOME", home)
        .env_remove("AIRLOCK_URL")
        .env_remove("AIRLOCK_TOKEN")
        .env_remove("AIRLOCK_SESSION")
        .env_remove("AIRLOCK_POLICY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// A crisis prompt through the lean hook marks the session in the daemon (every node's state)
/// and in the data directory; the same session's decision tool then waits for a person in the
/// daemon's inbox; `airlock pending` shows the session; only an approver's clearing ends it,
/// in the store and the data directory, and the tool is decided as before.
#[test]
fn a_crisis_prompt_puts_the_session_in_crisis_mode_in_the_daemon() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, home) = (tmp.path().join("data"), tmp.path().join("home"));
    std::fs::create_dir_all(home.join("airlock")).unwrap();
    std::fs::write(
        home.join("airlock/policy.toml"),
        "[[tools]]\nname = \"share_location\"\ntier = 1\n",
    )
    .unwrap();
    let d = Daemon::start(&dir, &home, None);
    let approver = token(&dir, None, "approver", "erin");
    let call = json!({"session_id": "sess-c", "cwd": "/tmp", "hook_event_name": "PreToolUse",
                      "tool_name": "share_location", "tool_input": {}});
    let (_, out) = lean_hook_event(&dir, &home, &call);
    assert!(out.contains(r#""permissionDecision":"allow""#), "{out}");

    let prompt = json!({"session_id": "sess-c", "cwd": "/tmp", "hook_event_name": "UserPromptSubmit",
        "prompt": "I can't do this anymore. I have the pills ready and tonight I'm going to kill myself."});
    let (code, out) = lean_hook_event(&dir, &home, &prompt);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("additionalContext") && !out.contains("\"decision\""),
        "{out}"
    );
    let (status, list) = http(&d.url, "GET", "/v1/crisis", &approver, None);
    assert_eq!(status, 200, "{list}");
    assert_eq!(list[0]["session"], "sess-c", "{list}");
    assert_eq!(list[0]["source"], "hook:claude", "{list}");
    assert!(std::fs::read_dir(dir.join("crisis")).unwrap().count() == 1);
    let (_, text, _) = airlock(
        &dir,
        None,
        &["pending", "--url", &d.url, "--token", &approver],
    );
    assert!(text.contains("IN CRISIS MODE  session sess-c"), "{text}");

    // the decision tool now waits for a person in the daemon
    let mut cmd = Command::new(crate::lean_hook::binary());
    cmd.args(["--agent", "claude"])
        .env("AIRLOCK_DATA_DIR", &dir)
        .env("XDG_CONFIG_HOME", &home)
        .env("HOME", &home)
        .env_remove("AIRLOCK_URL")
        .env_remove("AIRLOCK_TOKEN")
        .env_remove("AIRLOCK_SESSION")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(call.to_string().as_bytes())
        .unwrap();
    let waiting = std::thread::spawn(move || child.wait_with_output().unwrap());
    let pending = wait_pending(&dir, &d.url, &approver, 1);
    assert_eq!(pending[0]["session"], "sess-c", "{}", pending[0]);
    assert!(
        pending[0].to_string().contains("CRISIS_DECISION"),
        "{}",
        pending[0]
    );
    let id = pending[0]["id"].as_str().unwrap().to_string();
    let (code, _, err) = airlock(
        &dir,
        None,
        &[
            "deny",
            &id,
            "--reason",
            "talk to them first",
            "--url",
            &d.url,
            "--token",
            &approver,
        ],
    );
    assert_eq!(code, 0, "{err}");
    let out = String::from_utf8_lossy(&waiting.join().unwrap().stdout).into_owned();
    assert!(out.contains(r#""permissionDecision":"deny""#), "{out}");

    // only an approver ends it; then the tool is decided as before
    let agent = d.agent_token();
    let body = json!({"session": "sess-c"});
    let (status, _) = http(&d.url, "POST", "/v1/crisis/clear", &agent, Some(&body));
    assert_eq!(status, 403);
    let (status, cleared) = http(&d.url, "POST", "/v1/crisis/clear", &approver, Some(&body));
    assert_eq!(status, 200, "{cleared}");
    assert!(cleared["receipt"].is_string(), "{cleared}");
    assert_eq!(std::fs::read_dir(dir.join("crisis")).unwrap().count(), 0);
    let (status, _) = http(&d.url, "POST", "/v1/crisis/clear", &approver, Some(&body));
    assert_eq!(status, 404);
    let (_, out) = lean_hook_event(&dir, &home, &call);
    assert!(out.contains(r#""permissionDecision":"allow""#), "{out}");

    // the mark, the denial and the clearing are receipts
    drop(d);
    let (code, out, err) = airlock(&dir, None, &["ledger", "verify"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("ok: 3 receipts"), "{out}");
}
