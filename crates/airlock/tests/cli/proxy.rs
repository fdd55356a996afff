//! The proxy as processes: `airlock serve --config` with a `[proxy]` section serves
//! `/v1/chat/completions` beside the REST API, and `airlock proxy --upstream` runs it on its own
//! port over the same store; both in front of a loopback HTTP/1.1 upstream (std only) whose
//! answer carries an allowed and a destructive tool call.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const ANSWER: &str = r#"{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}},{"id":"b","type":"function","function":{"name":"bash","arguments":"{\"command\":\"rm -rf /\"}"}}]},"finish_reason":"tool_calls"}],"x_extra":true}"#;

/// A one-request-per-connection HTTP/1.1 upstream answering every POST with `ANSWER`.
fn upstream() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            std::thread::spawn(move || {
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut len = 0;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    if let Some((k, v)) = line.split_once(':')
                        && k.eq_ignore_ascii_case("content-length")
                    {
                        len = v.trim().parse().unwrap();
                    }
                    if line == "\r\n" {
                        break;
                    }
                }
                let mut body = vec![0; len];
                r.read_exact(&mut body).unwrap();
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{ANSWER}",
                    ANSWER.len()
                );
                let _ = s.write_all(reply.as_bytes());
            });
        }
    });
    format!("http://{addr}/v1")
}

fn post(base: &str, path: &str, token: &str, body: &Value) -> (u16, Value) {
    let host = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let body = body.to_string();
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw);
    let (head, rest) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, serde_json::from_str(rest).unwrap_or(Value::Null))
}

/// Starts `airlock <args>` and returns it with the URL it printed.
fn start(dir: &Path, args: &[&str]) -> (Child, String) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("airlock"))
        .args(args)
        .env("AIRLOCK_DATA_DIR", dir)
        .env("XDG_CONFIG_HOME", dir.join("no-config"))
        .env_remove("AIRLOCK_POLICY")
        .env_remove("AIRLOCK_DATABASE_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let started = Instant::now();
    let url = loop {
        let line = lines.next().expect("airlock exited").unwrap();
        if let Some(i) = line.find(" on http://") {
            let rest = &line[i + 4..];
            break rest.split_whitespace().next().unwrap().to_string();
        }
        assert!(started.elapsed() < Duration::from_secs(60));
    };
    // Keep draining stderr so the child never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, url)
}

fn token(dir: &Path) -> String {
    let out = Command::new(assert_cmd::cargo::cargo_bin("airlock"))
        .args([
            "token", "create", "--role", "agent", "--name", "proxied", "--quiet",
        ])
        .env("AIRLOCK_DATA_DIR", dir)
        .env_remove("AIRLOCK_DATABASE_URL")
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn check_answer(url: &str, token: &str) {
    let req = json!({"model": "m", "messages": [{"role": "user", "content": "tidy up"}]});
    let (status, doc) = post(url, "/v1/chat/completions", token, &req);
    assert_eq!(status, 200, "{doc}");
    let msg = &doc["choices"][0]["message"];
    assert_eq!(msg["tool_calls"].as_array().unwrap().len(), 1);
    assert_eq!(msg["tool_calls"][0]["id"], "a");
    assert!(
        msg["content"]
            .as_str()
            .unwrap()
            .contains("`bash` was blocked")
    );
    assert_eq!(doc["x_extra"], true);
}

#[test]
fn serve_with_a_proxy_section_and_airlock_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream();
    let agent = token(dir.path());
    let cfg = dir.path().join("serve.toml");
    std::fs::write(&cfg, format!("[proxy]\nupstream = \"{up}\"\n")).unwrap();
    let cfg = cfg.to_str().unwrap();

    let (mut serve, url) = start(
        dir.path(),
        &["serve", "--listen", "127.0.0.1:0", "--config", cfg],
    );
    check_answer(&url, &agent);
    let _ = serve.kill();
    let _ = serve.wait();
    // Killed, so it could not remove its serve.json.
    std::fs::remove_file(dir.path().join("serve.json")).unwrap();

    let (mut proxy, url) = start(
        dir.path(),
        &["proxy", "--listen", "127.0.0.1:0", "--upstream", &up],
    );
    check_answer(&url, &agent);
    assert!(
        !dir.path().join("serve.json").exists(),
        "a standalone proxy does not announce"
    );
    let _ = proxy.kill();
    let _ = proxy.wait();

    // Without an upstream the command refuses to start.
    let out = Command::new(assert_cmd::cargo::cargo_bin("airlock"))
        .args(["proxy", "--listen", "127.0.0.1:0"])
        .env("AIRLOCK_DATA_DIR", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--upstream"));
}

/// Receipts in the store whose body names `tool`.
fn receipts_naming(db: &Path, tool: &str) -> usize {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let url = format!("sqlite://{}?mode=ro", db.display());
        let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
        let rows: Vec<(String,)> = sqlx::query_as("SELECT body FROM receipts")
            .fetch_all(&pool)
            .await
            .unwrap();
        pool.close().await;
        rows.iter()
            .filter(|(b,)| b.contains(&format!("\"tool\":\"{tool}\"")))
            .count()
    })
}

/// A clean verdict still waiting for its window when the daemon is told to stop (SIGTERM) is
/// recorded before the process exits.
#[test]
fn a_stopping_daemon_records_the_clean_verdicts_still_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream();
    let agent = token(dir.path());
    let cfg = dir.path().join("serve.toml");
    std::fs::write(
        &cfg,
        format!("[proxy]\nupstream = \"{up}\"\n[proxy.scan]\nclean_window_ms = 1000\n"),
    )
    .unwrap();
    let (mut serve, url) = start(
        dir.path(),
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--config",
            cfg.to_str().unwrap(),
        ],
    );
    check_answer(&url, &agent);
    let term = Command::new("kill")
        .args(["-TERM", &serve.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let started = Instant::now();
    let status = loop {
        if let Some(s) = serve.try_wait().unwrap() {
            break s;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "serve did not stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    let db = dir.path().join("airlock.db");
    assert_eq!(receipts_naming(&db, "airlock.proxy.inbound_text"), 1);
    let out = Command::new(assert_cmd::cargo::cargo_bin("airlock"))
        .args(["ledger", "verify"])
        .env("AIRLOCK_DATA_DIR", dir.path())
        .env_remove("AIRLOCK_DATABASE_URL")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// Starts `airlock <args>` and returns its stderr lines up to the one after the crisis route.
fn start_lines(dir: &Path, args: &[&str]) -> (Child, Vec<String>) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("airlock"))
        .args(args)
        .env("AIRLOCK_DATA_DIR", dir)
        .env("XDG_CONFIG_HOME", dir.join("no-config"))
        .env_remove("AIRLOCK_POLICY")
        .env_remove("AIRLOCK_DATABASE_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    while let Some(Ok(line)) = lines.next() {
        let route = line.contains("crisis route");
        // Without a trusted model the warning follows at once; with one nothing more comes.
        let warned = line.contains("the agent's own model");
        seen.push(line);
        if route {
            if warned && let Some(Ok(next)) = lines.next() {
                seen.push(next);
            }
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    (child, seen)
}

/// `airlock serve` and `airlock proxy` say at start which crisis route is active, and warn
/// when no trusted model is set.
#[test]
fn the_crisis_route_is_printed_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream();
    let (mut proxy, lines) = start_lines(
        dir.path(),
        &["proxy", "--listen", "127.0.0.1:0", "--upstream", &up],
    );
    let _ = proxy.kill();
    let _ = proxy.wait();
    let text = lines.join("\n");
    assert!(
        text.contains("crisis route: the agent's own model answers a person in crisis"),
        "{text}"
    );
    assert!(text.contains("WARNING: no trusted model is set"), "{text}");
    assert!(text.contains("languages en, es, de, fr, pt"), "{text}");

    let cfg = dir.path().join("serve.toml");
    std::fs::write(
        &cfg,
        format!("[proxy]\nupstream = \"{up}\"\n[proxy.scan]\ncrisis_model = \"care/trusted-1\"\n"),
    )
    .unwrap();
    let (mut serve, lines) = start_lines(
        dir.path(),
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--config",
            cfg.to_str().unwrap(),
        ],
    );
    let _ = serve.kill();
    let _ = serve.wait();
    let text = lines.join("\n");
    assert!(
        text.contains("crisis route: the trusted model `care/trusted-1` answers"),
        "{text}"
    );
    assert!(!text.contains("WARNING: no trusted model"), "{text}");
}
