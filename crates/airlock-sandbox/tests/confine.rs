//! The confinement on the real kernel: the test binary re-executes itself as the launcher (the
//! `launcher` test below, which confines itself by the plan in its environment and execs), as
//! `airlock run` re-executes `airlock`. Each test is skipped, saying why, only where the kernel
//! lacks Landlock.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use airlock_sandbox::egress::{Decision, EgressVerdict, Gate, Proxy};
use airlock_sandbox::supervise::{RunOutcome, run};
use airlock_sandbox::{EXIT_REFUSED, Limits, Plan, Profile};

const PLAN_VAR: &str = "AIRLOCK_SANDBOX_TEST_PLAN";

/// The launcher half: only does anything when started by `confined` with a plan.
#[test]
fn launcher() {
    let Ok(plan) = std::env::var(PLAN_VAR) else {
        return;
    };
    let plan: Plan = serde_json::from_str(&plan).unwrap();
    let e = airlock_sandbox::launch::confine_and_exec(&plan);
    eprintln!("refused: {e}");
    std::process::exit(i32::from(EXIT_REFUSED));
}

struct Env {
    _dir: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
}

fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(
        home.join(".ssh/id_rsa"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\n",
    )
    .unwrap();
    Env {
        _dir: dir,
        home,
        ws,
    }
}

fn plan(e: &Env, script: &str) -> Plan {
    let p = Profile::load("default", &e.home).unwrap();
    let mut write = vec![e.ws.clone()];
    write.extend(p.write);
    Plan {
        argv: vec!["sh".into(), "-c".into(), script.into()],
        read: p.read,
        write,
        write_files: p.write_files,
        proxy_port: None,
        limits: Limits {
            cpu_secs: Some(60),
            address_space: Some(4 << 30),
            file_size: Some(64 << 20),
            processes: Some(256),
        },
        cgroup_procs: None,
        assume_no_landlock: false,
    }
}

/// Runs `plan` confined; (outcome, stdout, stderr).
fn confined(
    plan: &Plan,
    timeout: Option<Duration>,
    extra_env: &[(&str, String)],
) -> (RunOutcome, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", "launcher", "--nocapture", "--test-threads=1"])
        .env(PLAN_VAR, serde_json::to_string(plan).unwrap())
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    for (k, v) in extra_env {
        c.env(k, v);
    }
    let o = run(c, timeout, true, None).unwrap();
    (
        o,
        std::fs::read_to_string(out).unwrap(),
        std::fs::read_to_string(err).unwrap(),
    )
}

/// Whether the kernel confines at all; prints why a test is skipped when it does not.
fn landlock_or_skip(name: &str) -> bool {
    let e = env();
    let (o, _, err) = confined(&plan(&e, "true"), None, &[]);
    if o.code == i32::from(EXIT_REFUSED) && err.contains("SANDBOX_UNAVAILABLE") {
        eprintln!("skipping {name}: this kernel cannot confine: {err}");
        return false;
    }
    assert_eq!(o.code, 0, "{err}");
    true
}

#[test]
fn secrets_outside_the_workspace_are_unreadable() {
    if !landlock_or_skip("secrets_outside_the_workspace_are_unreadable") {
        return;
    }
    let e = env();
    let key = e.home.join(".ssh/id_rsa");
    // Readable unconfined: the test would prove nothing otherwise.
    assert!(std::fs::read_to_string(&key).is_ok());
    let script = format!(
        "cat {} && echo LEAKED; ls {} && echo LISTED; cat /etc/shadow && echo SHADOW; echo ok",
        key.display(),
        e.home.display()
    );
    let (o, out, err) = confined(&plan(&e, &script), None, &[]);
    assert_eq!(o.code, 0, "{err}");
    assert!(
        !out.contains("LEAKED") && !out.contains("LISTED") && !out.contains("SHADOW"),
        "{out}"
    );
    assert!(out.contains("ok"));
    assert!(err.contains("Permission denied"), "{err}");
}

#[test]
fn writes_stay_in_the_workspace() {
    if !landlock_or_skip("writes_stay_in_the_workspace") {
        return;
    }
    let e = env();
    let outside = e.home.join("planted");
    let script = format!(
        "echo in > {ws}/inside && echo WROTE_IN; echo out > {o} && echo WROTE_OUT; rm -f {ws}/inside && echo REMOVED",
        ws = e.ws.display(),
        o = outside.display()
    );
    let (_, out, err) = confined(&plan(&e, &script), None, &[]);
    assert!(
        out.contains("WROTE_IN") && out.contains("REMOVED"),
        "{out} {err}"
    );
    assert!(!out.contains("WROTE_OUT"), "{out}");
    assert!(!outside.exists());
}

#[test]
fn no_network_without_a_grant() {
    if !landlock_or_skip("no_network_without_a_grant") {
        return;
    }
    let server = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    let e = env();
    // bash's /dev/tcp opens a plain TCP socket; curl when present.
    let script =
        format!("(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo CONNECTED; echo done");
    let mut p = plan(&e, &script);
    p.argv[0] = "bash".into();
    let (_, out, err) = confined(&p, None, &[]);
    assert!(
        out.contains("done") && !out.contains("CONNECTED"),
        "{out} {err}"
    );
}

#[test]
fn the_refusal_path_never_runs_the_command() {
    let e = env();
    let marker = e.ws.join("ran");
    let mut p = plan(&e, &format!("touch {}", marker.display()));
    p.assume_no_landlock = true;
    let (o, _, err) = confined(&p, None, &[]);
    assert_eq!(o.code, i32::from(EXIT_REFUSED));
    assert!(err.contains("SANDBOX_UNAVAILABLE"), "{err}");
    assert!(!marker.exists());
}

#[test]
fn the_timeout_kills_the_group() {
    if !landlock_or_skip("the_timeout_kills_the_group") {
        return;
    }
    let e = env();
    let marker = e.ws.join("late");
    let script = format!("(sleep 3; touch {}) & sleep 100", marker.display());
    let t = Instant::now();
    let (o, _, _) = confined(&plan(&e, &script), Some(Duration::from_millis(500)), &[]);
    assert!(o.timed_out);
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    // The background child died with the group.
    std::thread::sleep(Duration::from_secs(4));
    assert!(!marker.exists());
}

#[test]
fn a_fork_bomb_is_capped() {
    if !landlock_or_skip("a_fork_bomb_is_capped") {
        return;
    }
    let e = env();
    let cg = airlock_sandbox::cgroup::Cgroup::create(32);
    let mut p = plan(
        &e,
        "n=0; for i in $(seq 1 200); do sleep 5 & n=$((n+1)); done; echo started; wait",
    );
    p.limits.processes = Some(32);
    p.cgroup_procs = cg.as_ref().map(|c| c.procs());
    let root = rustix::process::geteuid().is_root();
    if root && cg.is_none() {
        eprintln!(
            "skipping a_fork_bomb_is_capped: root ignores RLIMIT_NPROC and no pids cgroup can be made here"
        );
        return;
    }
    let (_, _, err) = confined(&p, Some(Duration::from_secs(20)), &[]);
    if let Some(c) = cg {
        c.remove();
    }
    assert!(
        err.contains("fork") || err.contains("Resource temporarily unavailable"),
        "200 background processes were started under a cap of 32: {err}"
    );
}

/// A gate over a set of allowed `host:port` that the test can change while the proxy runs, as
/// revoking a grant does; every decision is kept.
#[derive(Default)]
struct SetGate {
    allowed: Mutex<HashSet<String>>,
    log: Mutex<Vec<Decision>>,
}

impl Gate for SetGate {
    fn check(&self, host: &str, port: u16) -> EgressVerdict {
        if self
            .allowed
            .lock()
            .unwrap()
            .contains(&format!("{host}:{port}"))
        {
            EgressVerdict::Allow {
                grant: "g1".into(),
                private: host.parse::<std::net::IpAddr>().is_ok(),
            }
        } else {
            EgressVerdict::Deny {
                reason: "not granted".into(),
            }
        }
    }
    fn record(&self, d: &Decision) {
        self.log.lock().unwrap().push(d.clone());
    }
}

/// A one-line HTTP server on loopback answering every request with `hello`.
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

fn curl_or_skip(name: &str) -> bool {
    let ok = Command::new("curl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipping {name}: curl is not installed");
    }
    ok
}

#[test]
fn egress_only_to_granted_hosts_and_revocation_cuts_new_connections() {
    if !landlock_or_skip("egress") || !curl_or_skip("egress") {
        return;
    }
    let port = http_server();
    let gate = Arc::new(SetGate::default());
    gate.allowed
        .lock()
        .unwrap()
        .insert(format!("127.0.0.1:{port}"));
    let proxy = Proxy::start(gate.clone()).unwrap();
    let e = env();
    let go = e.ws.join("go");
    let script = format!(
        "curl -s -m 5 http://127.0.0.1:{port}/a; \
         curl -s -m 5 -o /dev/null -w 'meta %{{http_code}}\\n' http://169.254.169.254/latest/meta-data/; \
         curl -s -m 5 -o /dev/null -w 'other %{{http_code}}\\n' http://127.0.0.1:{other}/; \
         curl -s -m 5 --noproxy '*' http://127.0.0.1:{port}/direct || echo direct-refused; \
         touch {ws}/first; while [ ! -f {go} ]; do sleep 0.05; done; \
         curl -s -m 5 -o /dev/null -w 'after %{{http_code}}\\n' http://127.0.0.1:{port}/b",
        other = port.wrapping_add(1),
        ws = e.ws.display(),
        go = go.display()
    );
    let mut p = plan(&e, &script);
    p.proxy_port = Some(proxy.port());
    let url = proxy.url();
    let gate2 = gate.clone();
    let first = e.ws.join("first");
    let revoker = std::thread::spawn(move || {
        let t = Instant::now();
        while !first.exists() && t.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        gate2.allowed.lock().unwrap().clear();
        std::fs::write(go, "").unwrap();
    });
    let (o, out, err) = confined(
        &p,
        Some(Duration::from_secs(30)),
        &[("http_proxy", url.clone()), ("HTTPS_PROXY", url)],
    );
    revoker.join().unwrap();
    assert!(!o.timed_out, "{out} {err}");
    assert!(out.contains("hello"), "the granted host: {out} {err}");
    assert!(out.contains("meta 403"), "link-local: {out}");
    assert!(out.contains("other 403"), "an ungranted port: {out}");
    assert!(
        out.contains("direct-refused") && !out.contains("hello\nhello"),
        "around the proxy: {out}"
    );
    assert!(out.contains("after 403"), "after revocation: {out}");
    let log = gate.log.lock().unwrap();
    let allowed: Vec<_> = log.iter().filter(|d| d.allowed).collect();
    assert_eq!(allowed.len(), 1, "{log:?}");
    assert!(
        log.iter()
            .any(|d| !d.allowed && d.host == "169.254.169.254")
    );
}

#[test]
fn a_granted_name_that_resolves_to_loopback_is_refused() {
    if !landlock_or_skip("resolves_to_loopback") || !curl_or_skip("resolves_to_loopback") {
        return;
    }
    let port = http_server();
    let gate = Arc::new(SetGate::default());
    gate.allowed
        .lock()
        .unwrap()
        .insert(format!("localhost:{port}"));
    let proxy = Proxy::start(gate.clone()).unwrap();
    let e = env();
    let mut p = plan(
        &e,
        &format!("curl -s -m 5 -o /dev/null -w '%{{http_code}}' http://localhost:{port}/"),
    );
    p.proxy_port = Some(proxy.port());
    let (_, out, _) = confined(
        &p,
        Some(Duration::from_secs(20)),
        &[("http_proxy", proxy.url())],
    );
    assert!(out.trim().ends_with("403"), "{out}");
    let log = gate.log.lock().unwrap();
    assert!(log.iter().all(|d| !d.allowed), "{log:?}");
    assert!(log[0].reason.contains("loopback"), "{log:?}");
}

#[test]
fn with_network_only_tcp_through_the_proxy_no_udp() {
    if !landlock_or_skip("no_udp") || !curl_or_skip("no_udp") {
        return;
    }
    // The system's python (a per-user one under $HOME is not in the profile).
    const PYTHON: &str = "/usr/bin/python3";
    if !std::path::Path::new(PYTHON).exists() {
        eprintln!("skipping no_udp: {PYTHON} is not installed");
        return;
    }
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    // bash's /dev/udp sends a datagram; unconfined it arrives (the test could not fail else).
    let sent = Command::new("bash")
        .args([
            "-c",
            &format!("echo unconfined > /dev/udp/127.0.0.1/{udp_port}"),
        ])
        .status()
        .unwrap();
    assert!(sent.success());
    let mut buf = [0u8; 64];
    let (n, _) = udp.recv_from(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"unconfined\n");
    let port = http_server();
    let gate = Arc::new(SetGate::default());
    gate.allowed
        .lock()
        .unwrap()
        .insert(format!("127.0.0.1:{port}"));
    let proxy = Proxy::start(gate.clone()).unwrap();
    let e = env();
    // The flags SOCK_NONBLOCK and SOCK_CLOEXEC must not hide the type from the filter.
    let py = format!(
        "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC); s.sendto(b'python', ('127.0.0.1', {udp_port}))"
    );
    let script = format!(
        "(echo confined > /dev/udp/127.0.0.1/{udp_port}) 2>/dev/null && echo UDP_SENT; \
         (python3 -c \"{py}\") 2>/dev/null && echo PY_SENT; \
         (python3 -c 'import socket; socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)') 2>/dev/null && echo UDP6_OPENED; \
         (python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)') 2>/dev/null && echo RAW_OPENED; \
         (python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132)') 2>/dev/null && echo SCTP_OPENED; \
         python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)' && echo TCP_OPENED; \
         curl -s -m 5 http://127.0.0.1:{port}/through"
    )
    .replace("python3", PYTHON);
    let mut p = plan(&e, &script);
    p.argv[0] = "bash".into();
    p.proxy_port = Some(proxy.port());
    let (o, out, err) = confined(
        &p,
        Some(Duration::from_secs(30)),
        &[("http_proxy", proxy.url())],
    );
    assert!(!o.timed_out, "{out} {err}");
    assert!(out.contains("hello"), "TCP through the proxy: {out} {err}");
    // The probes ran: python opens a TCP socket (with a flag) in the same run.
    assert!(out.contains("TCP_OPENED"), "{out} {err}");
    for marker in [
        "UDP_SENT",
        "PY_SENT",
        "UDP6_OPENED",
        "RAW_OPENED",
        "SCTP_OPENED",
    ] {
        assert!(!out.contains(marker), "{marker}: {out}");
    }
    // Nothing arrived.
    assert!(udp.recv_from(&mut buf).is_err(), "a datagram got out");
}

#[test]
fn escape_system_calls_are_refused() {
    if !landlock_or_skip("escape_system_calls_are_refused") {
        return;
    }
    let e = env();
    // Each probe prints its marker only if the kernel let it through; a missing tool prints
    // nothing either, so the probes that exist are listed and at least one must have run.
    let probes = [
        ("unshare", "unshare -U true && echo ESC_USERNS"),
        (
            "mount",
            "mkdir -p m && mount -t tmpfs none m && echo ESC_MOUNT",
        ),
        ("strace", "strace -o /dev/null true && echo ESC_PTRACE"),
        (
            "python3",
            "python3 -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)' && echo ESC_RAW",
        ),
    ];
    let present: Vec<_> = probes
        .iter()
        .filter(|(tool, _)| {
            Command::new("sh")
                .args(["-c", &format!("command -v {tool}")])
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .collect();
    assert!(
        !present.is_empty(),
        "none of unshare, mount, strace, python3 is installed"
    );
    let script = present
        .iter()
        .map(|(_, p)| format!("({p}) 2>/dev/null;"))
        .collect::<String>()
        + " echo done";
    let (_, out, err) = confined(&plan(&e, &script), Some(Duration::from_secs(30)), &[]);
    assert!(out.contains("done"), "{out} {err}");
    assert!(!out.contains("ESC_"), "an escape call went through: {out}");
}

/// The small launcher binary `airlock run` prefers: the same confinement, the same refusal.
#[test]
fn the_lean_launcher_confines_and_refuses() {
    if !landlock_or_skip("the_lean_launcher_confines_and_refuses") {
        return;
    }
    let e = env();
    let key = e.home.join(".ssh/id_rsa");
    let mut p = plan(&e, &format!("cat {} || echo denied", key.display()));
    let bin = env!("CARGO_BIN_EXE_airlock-sandbox-exec");
    let out = Command::new(bin)
        .arg(serde_json::to_string(&p).unwrap())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("denied") && !stdout.contains("BEGIN"),
        "{stdout}"
    );
    p.assume_no_landlock = true;
    let out = Command::new(bin)
        .arg(serde_json::to_string(&p).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(i32::from(EXIT_REFUSED)));
    assert!(String::from_utf8_lossy(&out.stderr).contains("SANDBOX_UNAVAILABLE"));
    let out = Command::new(bin).arg("{not json").output().unwrap();
    assert_eq!(out.status.code(), Some(i32::from(EXIT_REFUSED)));
}
