//! `airlock run` as a process on the real kernel with real grants in a SQLite store: what a
//! confined command cannot read, write or reach; refusals (exit 125) for bad input, never an
//! unconfined run; network grants through the egress proxy, revocation cutting new connections,
//! and a receipt for every connection decision. Skipped, saying why, only where the kernel
//! lacks Landlock.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        for d in ["home/.ssh", "ws", "data"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        std::fs::write(dir.path().join("home/.ssh/id_rsa"), "PRIVATE KEY\n").unwrap();
        Env { dir }
    }
    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }
    fn airlock(&self) -> Command {
        let mut c = Command::cargo_bin("airlock").unwrap();
        c.env_remove("AIRLOCK_DATABASE_URL")
            .env_remove("AIRLOCK_AGENT")
            .env_remove("AIRLOCK_SESSION")
            .env("HOME", self.home())
            .env("USER", "tester")
            .arg("--data-dir")
            .arg(self.dir.path().join("data"))
            .current_dir(self.ws());
        c
    }
    fn grant(&self, args: &[&str]) -> String {
        let out = self
            .airlock()
            .args(["grant", "add", "--agent", "user", "--json"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["id"].as_str().unwrap().to_string()
    }
}

/// (exit code, stdout, stderr)
fn output(c: &mut Command) -> (i32, String, String) {
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn landlock_or_skip(e: &Env, name: &str) -> bool {
    let (code, _, err) = output(e.airlock().args(["run", "--", "true"]));
    if code == 125 && err.contains("SANDBOX_UNAVAILABLE") {
        eprintln!("skipping {name}: this kernel cannot confine: {err}");
        return false;
    }
    assert_eq!(code, 0, "{err}");
    true
}

#[test]
fn confined_commands_cannot_read_secrets_or_write_outside() {
    let e = Env::new();
    if !landlock_or_skip(&e, "confined_commands_cannot_read_secrets_or_write_outside") {
        return;
    }
    let key = e.home().join(".ssh/id_rsa");
    let (code, out, err) = output(e.airlock().args(["run", "--", "cat"]).arg(&key));
    assert_ne!(code, 0);
    assert!(!out.contains("PRIVATE"), "{out}");
    assert!(err.contains("Permission denied"), "{err}");
    let outside = e.home().join("planted");
    let (code, _, _) = output(
        e.airlock()
            .args(["run", "--", "sh", "-c"])
            .arg(format!("echo x > {}", outside.display())),
    );
    assert_ne!(code, 0);
    assert!(!outside.exists());
    let (code, _, err) =
        output(
            e.airlock()
                .args(["run", "--", "sh", "-c", "echo x > made && cat made"]),
        );
    assert_eq!(code, 0, "{err}");
    assert!(e.ws().join("made").exists());
    // The command's exit code comes back.
    assert_eq!(
        output(e.airlock().args(["run", "--", "sh", "-c", "exit 7"])).0,
        7
    );
    // The timeout.
    let t = Instant::now();
    let (code, _, err) =
        output(
            e.airlock()
                .args(["run", "--timeout", "0.5", "--", "sleep", "100"]),
        );
    assert_eq!(code, 124, "{err}");
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[test]
fn bad_input_is_refused_and_never_runs() {
    let e = Env::new();
    let marker = e.ws().join("ran");
    let touch = |c: &mut Command| {
        c.arg("--").arg("touch").arg(&marker);
    };
    let mut cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--profile".into(), "nope".into()],
            "no sandbox profile",
        ),
        (
            vec![
                "--grant".into(),
                "gr_00000000000000000000000000000000".into(),
            ],
            "GRANT_NOT_FOUND",
        ),
        (vec!["--assume-no-landlock".into()], "SANDBOX_UNAVAILABLE"),
        (
            vec!["--workspace".into(), e.home().display().to_string()],
            "protected path",
        ),
        (vec!["--timeout".into(), "0".into()], "positive"),
    ];
    let cmd_grant = e.grant(&["--prefix", "cargo test"]);
    cases.push((
        vec!["--grant".into(), cmd_grant],
        "not a sandbox capability",
    ));
    let revoked = e.grant(&["--network", "example.org:443"]);
    e.airlock()
        .args(["grant", "revoke", &revoked])
        .assert()
        .success();
    cases.push((vec!["--grant".into(), revoked], "revoked"));
    let other = {
        let out = e
            .airlock()
            .args([
                "grant",
                "add",
                "--agent",
                "someone-else",
                "--network",
                "example.org",
                "--json",
            ])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["id"].as_str().unwrap().to_string()
    };
    cases.push((vec!["--grant".into(), other], "belongs to agent"));
    for (args, why) in cases {
        let mut c = e.airlock();
        c.arg("run").args(&args);
        touch(&mut c);
        let (code, _, err) = output(&mut c);
        assert_eq!(code, 125, "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
        assert!(!marker.exists(), "{args:?} ran the command");
    }
    // No command at all is a usage error.
    assert_ne!(output(e.airlock().args(["run"])).0, 0);
    // A command that does not exist is reported, not run elsewhere.
    let (code, _, err) = output(e.airlock().args(["run", "--", "no-such-command-xyz"]));
    assert_ne!(code, 0);
    assert!(err.contains("no-such-command-xyz"), "{err}");
}

#[test]
fn write_grants_open_exactly_their_path() {
    let e = Env::new();
    if !landlock_or_skip(&e, "write_grants_open_exactly_their_path") {
        return;
    }
    let conf = e.home().join(".config/foo");
    std::fs::create_dir_all(&conf).unwrap();
    let id = e.grant(&["--write", conf.to_str().unwrap(), "--kind", "once"]);
    let script = format!(
        "echo a > {c}/settings && echo WROTE; echo b > {h}/.config/other && echo LEAK",
        c = conf.display(),
        h = e.home().display()
    );
    let (_, out, err) = output(
        e.airlock()
            .args(["run", "--grant", &id, "--", "sh", "-c", &script]),
    );
    assert!(
        out.contains("WROTE") && !out.contains("LEAK"),
        "{out} {err}"
    );
    // A once grant: its one use was this run.
    let (code, _, err) = output(e.airlock().args(["run", "--grant", &id, "--", "true"]));
    assert_eq!(code, 125, "{err}");
    assert!(err.contains("used up"), "{err}");
}

fn http_server() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = s.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n",
            );
        }
    });
    port
}

fn receipts(e: &Env) -> String {
    let pack = e.dir.path().join(format!("pack-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&pack);
    e.airlock()
        .args(["ledger", "export", "--out"])
        .arg(&pack)
        .assert()
        .success();
    std::fs::read_to_string(pack.join("receipts.jsonl")).unwrap()
}

fn wait_for(p: &Path) {
    let t = Instant::now();
    while !p.exists() && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn network_grants_through_the_proxy_and_revocation() {
    let e = Env::new();
    if !landlock_or_skip(&e, "network_grants_through_the_proxy_and_revocation") {
        return;
    }
    if !std::process::Command::new("curl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!(
            "skipping network_grants_through_the_proxy_and_revocation: curl is not installed"
        );
        return;
    }
    let port = http_server();
    let id = e.grant(&["--network", &format!("127.0.0.1:{port}")]);
    let go = e.ws().join("go");
    let script = format!(
        "curl -s -m 5 http://127.0.0.1:{port}/a; \
         curl -s -m 5 -o /dev/null -w 'meta %{{http_code}}\\n' http://169.254.169.254/; \
         curl -s -m 5 -o /dev/null -w 'ungranted %{{http_code}}\\n' http://127.0.0.1:1/; \
         curl -s -m 5 --noproxy '*' http://127.0.0.1:{port}/ || echo direct-refused; \
         touch first; while [ ! -f go ]; do sleep 0.05; done; \
         curl -s -m 5 -o /dev/null -w 'after %{{http_code}}\\n' http://127.0.0.1:{port}/b"
    );
    let mut c = e.airlock();
    c.args([
        "run",
        "--timeout",
        "60",
        "--grant",
        &id,
        "--",
        "sh",
        "-c",
        &script,
    ]);
    let first = e.ws().join("first");
    let revoker = {
        let mut revoke = e.airlock();
        revoke.args(["grant", "revoke", &id]);
        std::thread::spawn(move || {
            wait_for(&first);
            revoke.assert().success();
            std::fs::write(go, "").unwrap();
        })
    };
    let (code, out, err) = output(&mut c);
    revoker.join().unwrap();
    assert_eq!(code, 0, "{out} {err}");
    assert!(out.contains("hello"), "the granted host: {out} {err}");
    assert!(out.contains("meta 403"), "{out}");
    assert!(out.contains("ungranted 403"), "{out}");
    assert!(out.contains("direct-refused"), "{out}");
    assert!(out.contains("after 403"), "revocation: {out}");
    let r = receipts(&e);
    assert_eq!(r.matches("EGRESS_ALLOWED").count(), 1, "{r}");
    assert!(r.matches("EGRESS_DENIED").count() >= 3, "{r}");
}

#[test]
fn credentials_leave_the_environment_unless_kept() {
    let e = Env::new();
    if !landlock_or_skip(&e, "credentials_leave_the_environment_unless_kept") {
        return;
    }
    let show = "echo \"token=$GITHUB_TOKEN aws=$AWS_SECRET_ACCESS_KEY key=$OPENAI_API_KEY editor=$EDITOR path=${PATH:+set} home=${HOME:+set}\"";
    let with_secrets = |c: &mut Command| {
        c.env("GITHUB_TOKEN", "ghp_value1")
            .env("AWS_SECRET_ACCESS_KEY", "aws_value2")
            .env("OPENAI_API_KEY", "sk_value3")
            .env("EDITOR", "vi");
    };
    // Unconfined the variables are there (the test could not fail otherwise).
    let out = std::process::Command::new("sh")
        .args(["-c", show])
        .env("GITHUB_TOKEN", "ghp_value1")
        .env("AWS_SECRET_ACCESS_KEY", "aws_value2")
        .env("OPENAI_API_KEY", "sk_value3")
        .env("EDITOR", "vi")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("token=ghp_value1 aws=aws_value2 key=sk_value3 editor=vi"),
        "{out:?}"
    );
    // The verbose account names what was removed, never a value.
    let mut c = e.airlock();
    with_secrets(&mut c);
    let (code, out, err) = output(c.args(["run", "--verbose", "--", "sh", "-c", show]));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("token= aws= key= editor=vi path=set home=set"),
        "{out}"
    );
    assert!(err.contains("removed from the environment"), "{err}");
    for name in ["GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY"] {
        assert!(err.contains(name), "{name}: {err}");
    }
    assert!(
        !err.contains("_value") && !out.contains("_value"),
        "{out} {err}"
    );
    let mut c = e.airlock();
    with_secrets(&mut c);
    let (_, out, _) = output(c.args(["run", "--keep-env", "GITHUB_TOKEN", "--", "sh", "-c", show]));
    assert!(
        out.contains("token=ghp_value1 aws= key= editor=vi"),
        "{out}"
    );
    let mut c = e.airlock();
    with_secrets(&mut c);
    let (_, out, _) = output(c.args([
        "run",
        "--env-clean",
        "--keep-env",
        "OPENAI_API_KEY",
        "--",
        "sh",
        "-c",
        show,
    ]));
    assert!(
        out.contains("token= aws= key=sk_value3 editor= path=set home=set"),
        "{out}"
    );
}
