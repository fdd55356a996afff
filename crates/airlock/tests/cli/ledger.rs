//! `airlock ledger` and `airlock check --record` as processes, on real SQLite files and the real
//! PostgreSQL server: record, verify, prove, export, replay; tampering of every kind is caught
//! and named; a writer killed with SIGKILL loses no committed receipt.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command as StdCommand, Stdio};

use assert_cmd::Command;

fn airlock(data: &Path) -> Command {
    let mut c = Command::cargo_bin("airlock").unwrap();
    c.env_remove("AIRLOCK_DATABASE_URL")
        .arg("--data-dir")
        .arg(data);
    c
}

fn stdout(c: &mut Command) -> (i32, String) {
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &*String::from_utf8_lossy(&out.stderr),
    )
}

fn load(data: &Path, count: u64, prefix: &str) -> Vec<String> {
    let out = airlock(data)
        .args([
            "ledger",
            "load",
            "--count",
            &count.to_string(),
            "--prefix",
            prefix,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn record_verify_prove_export_replay() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let out = airlock(&data)
        .env("AIRLOCK_SESSION", "sess-1")
        .env("AIRLOCK_REQUEST_ID", "req-1")
        .args(["check", "--record", "--", "ls -la"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    let id = err
        .split("recorded receipt ")
        .nth(1)
        .unwrap()
        .trim()
        .to_string();
    // The same request id yields the same receipt, never a second one.
    let again = airlock(&data)
        .env("AIRLOCK_SESSION", "sess-1")
        .env("AIRLOCK_REQUEST_ID", "req-1")
        .args(["check", "--record", "--", "ls -la"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&again.stderr).contains(&id));
    airlock(&data)
        .env("AIRLOCK_SESSION", "sess-1")
        .args(["check", "--record", "--", "rm -rf /"])
        .assert()
        .code(1);
    load(&data, 20, "a");

    let (code, text) = stdout(airlock(&data).args(["ledger", "verify"]));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("ok: 22 receipts"), "{text}");
    let (code, text) = stdout(airlock(&data).args(["ledger", "verify", "--json"]));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(v["receipts"], 22);

    // An inclusion proof verifies offline, and a doctored one does not.
    let proof = d.path().join("proof.json");
    airlock(&data)
        .args(["ledger", "prove", &id, "--out"])
        .arg(&proof)
        .assert()
        .success();
    let (code, text) = stdout(airlock(&data).arg("ledger").arg("verify").arg(&proof));
    assert_eq!(code, 0, "{text}");
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&proof).unwrap()).unwrap();
    doc["receipt"]["decision"] = "deny".into();
    std::fs::write(&proof, serde_json::to_vec(&doc).unwrap()).unwrap();
    assert_eq!(
        stdout(airlock(&data).arg("ledger").arg("verify").arg(&proof)).0,
        1
    );

    // A consistency proof between the first checkpoint and the newest.
    let cproof = d.path().join("consistency.json");
    airlock(&data)
        .args(["ledger", "consistency", "1", "--out"])
        .arg(&cproof)
        .assert()
        .success();
    assert_eq!(
        stdout(airlock(&data).arg("ledger").arg("verify").arg(&cproof)).0,
        0
    );

    // The evidence pack verifies without the database; a changed file is caught.
    let pack = d.path().join("pack");
    airlock(&data)
        .args(["ledger", "export", "--out"])
        .arg(&pack)
        .assert()
        .success();
    let (code, text) = stdout(
        airlock(&d.path().join("elsewhere"))
            .arg("ledger")
            .arg("verify")
            .arg(&pack),
    );
    assert_eq!(code, 0, "{text}");
    let receipts = pack.join("receipts.jsonl");
    let mut bytes = std::fs::read(&receipts).unwrap();
    bytes[30] ^= 1;
    std::fs::write(&receipts, bytes).unwrap();
    let (code, text) = stdout(airlock(&data).arg("ledger").arg("verify").arg(&pack));
    assert_eq!(code, 1);
    assert!(text.contains("receipts.jsonl"), "{text}");

    // Replay re-decides every recorded action with the current policy.
    let (code, text) = stdout(airlock(&data).args(["ledger", "replay", "--verify"]));
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("replayed 22 actions: 22 same, 0 differ"),
        "{text}"
    );
}

/// Runs SQL on a SQLite ledger file (the attacker's edits).
fn sql(db: &Path, statements: &[&str]) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let url = format!("sqlite://{}", db.display());
        let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
        for s in statements {
            sqlx::raw_sql(sqlx::AssertSqlSafe(s.to_string()))
                .execute(&pool)
                .await
                .unwrap();
        }
        pool.close().await;
    });
}

fn tampered(edit: &[&str]) -> (i32, String, Vec<String>) {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let ids = load(&data, 12, "t");
    assert_eq!(stdout(airlock(&data).args(["ledger", "verify"])).0, 0);
    sql(&data.join("airlock.db"), edit);
    let (code, text) = stdout(airlock(&data).args(["ledger", "verify"]));
    // Also through the file path form.
    let (code2, _) = stdout(
        airlock(&data)
            .arg("ledger")
            .arg("verify")
            .arg(data.join("airlock.db")),
    );
    assert_eq!(code, code2);
    let mut order = ids;
    order.sort();
    (code, text, order)
}

fn id_at(text: &str) -> String {
    text.split("receipt ")
        .nth(1)
        .unwrap_or("")
        .split(':')
        .next()
        .unwrap_or("")
        .to_string()
}

#[test]
fn tampering_is_caught_and_named() {
    // Flip one byte of a stored receipt.
    let (code, text, ids) = tampered(&[
        "UPDATE receipts SET body = replace(body, '\"decision\":\"allow\"', '\"decision\":\"deny\"') WHERE leaf = 4",
    ]);
    assert_eq!(code, 1, "{text}");
    assert!(ids.contains(&id_at(&text)), "{text}");
    // Flip one bit of one byte, wherever it lands.
    for at in [41, 120, 300] {
        let flip = format!(
            "UPDATE receipts SET body = substr(body, 1, {b}) || char((unicode(substr(body, {at}, 1)) | 1) - (unicode(substr(body, {at}, 1)) & 1)) || substr(body, {a}) WHERE leaf = 6",
            b = at - 1,
            a = at + 1
        );
        let (code, text, ids) = tampered(&[&flip]);
        assert_eq!(code, 1, "{text}");
        assert!(
            ids.contains(&id_at(&text)) || text.contains("receipt at leaf 6"),
            "{text}"
        );
    }
    // Drop one.
    let (code, text, ids) = tampered(&["DELETE FROM receipts WHERE leaf = 5"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        ids.contains(&id_at(&text)) && text.contains("dropped"),
        "{text}"
    );
    // Reorder two.
    let (code, text, ids) = tampered(&[
        "UPDATE receipts SET leaf = -1 WHERE leaf = 3",
        "UPDATE receipts SET leaf = 3 WHERE leaf = 8",
        "UPDATE receipts SET leaf = 8 WHERE leaf = -1",
    ]);
    assert_eq!(code, 1, "{text}");
    assert!(ids.contains(&id_at(&text)), "{text}");
    // Replace a key: the ledger key in the registry swapped for the attacker's.
    let (code, text, _) = tampered(&[
        "UPDATE registry_events SET body = replace(body, substr(body, instr(body, '\"public_key\":\"') + 14, 64), \
         'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a') WHERE seq = 1",
    ]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("registry event 1"), "{text}");
}

/// A ledger of 30 receipts whose tree head at 20 was witnessed (an export forces a checkpoint);
/// returns the data directory's holder and path.
fn witnessed_ledger() -> (tempfile::TempDir, std::path::PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    load(&data, 20, "w");
    let pack = d.path().join("pack");
    let (code, text) = stdout(
        airlock(&data)
            .args(["ledger", "export", "--out"])
            .arg(&pack),
    );
    assert_eq!(code, 0, "{text}");
    load(&data, 10, "x");
    let (code, text) = stdout(airlock(&data).args(["ledger", "verify"]));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("ok: 30 receipts"), "{text}");
    assert!(
        text.contains("extends the tree head witnessed for 20 receipts"),
        "{text}"
    );
    assert!(text.contains("30 stored payloads match"), "{text}");
    (d, data)
}

/// What an attacker with write access to the database does to hide the newest receipts: delete
/// them and the checkpoints covering them, and make `ledger_state` and `ledger_heads` match what
/// is left, so the log is consistent in itself.
fn cut_to(n: u64) -> Vec<String> {
    vec![
        format!("DELETE FROM receipts WHERE leaf >= {n}"),
        format!("DELETE FROM checkpoints WHERE size > {n}"),
        "DELETE FROM ledger_heads".into(),
        "INSERT INTO ledger_heads (session, lamport, head) SELECT session, lamport, hash FROM receipts r \
         WHERE lamport = (SELECT MAX(lamport) FROM receipts WHERE session = r.session)"
            .into(),
        format!(
            "UPDATE ledger_state SET next_leaf = {n}, checkpoint_size = (SELECT COALESCE(MAX(size), 0) FROM checkpoints)"
        ),
    ]
}

#[test]
fn a_cut_log_fails_verify_against_the_witnessed_head() {
    for n in [12, 0] {
        let (_d, data) = witnessed_ledger();
        let edits = cut_to(n);
        let edits: Vec<&str> = edits.iter().map(String::as_str).collect();
        sql(&data.join("airlock.db"), &edits);
        // The log alone is consistent: only the witness shows what is missing.
        let (code, text) = stdout(airlock(&data).args(["ledger", "verify"]));
        assert_eq!(code, 1, "cut to {n}: {text}");
        assert!(
            text.contains("witnessed for 20 receipts") && text.contains("it was cut"),
            "cut to {n}: {text}"
        );
        let (code, text) = stdout(
            airlock(&data)
                .args(["ledger", "verify", "--json"])
                .arg(data.join("airlock.db")),
        );
        assert_eq!(code, 1, "the file form, cut to {n}: {text}");
        assert!(text.contains(r#""ok":false"#), "{text}");
        // The writer goes on appending to the cut log; still caught.
        load(&data, 3, "after");
        let (code, text) = stdout(airlock(&data).args(["ledger", "verify"]));
        assert_eq!(code, 1, "cut to {n}, then appended: {text}");
    }
}

#[test]
fn an_edited_payload_fails_verify() {
    let (_d, data) = witnessed_ledger();
    sql(
        &data.join("airlock.db"),
        &["UPDATE receipts SET payload = replace(payload, 'echo w', 'rm -rf /') WHERE leaf = 3"],
    );
    let (code, text) = stdout(airlock(&data).args(["ledger", "verify"]));
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("the stored payload is not what the receipt signed"),
        "{text}"
    );
}

#[test]
fn sigkill_mid_append_loses_no_committed_receipt() {
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("airlock"))
        .arg("--data-dir")
        .arg(&data)
        .args([
            "ledger",
            "load",
            "--count",
            "1000000",
            "--concurrency",
            "16",
            "--prefix",
            "k",
        ])
        .env_remove("AIRLOCK_DATABASE_URL")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut committed = Vec::new();
    while committed.len() < 300 {
        committed.push(lines.next().unwrap().unwrap());
    }
    child.kill().unwrap(); // SIGKILL
    for l in lines {
        match l {
            Ok(l) => committed.push(l),
            Err(_) => break,
        }
    }
    child.wait().unwrap();
    let (code, text) = stdout(airlock(&data).args(["ledger", "verify"]));
    assert_eq!(code, 0, "{text}");
    let pack = d.path().join("pack");
    airlock(&data)
        .args(["ledger", "export", "--out"])
        .arg(&pack)
        .assert()
        .success();
    let all = std::fs::read_to_string(pack.join("receipts.jsonl")).unwrap();
    let stored: std::collections::HashSet<String> = all
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    for id in &committed {
        assert!(
            stored.contains(id),
            "committed receipt {id} is missing after the crash"
        );
    }
    // The restarted writer continues the chains.
    load(&data, 10, "after");
    assert_eq!(stdout(airlock(&data).args(["ledger", "verify"])).0, 0);
}

/// A fresh schema on the test PostgreSQL server, or `None` when it may be skipped.
fn pg_schema() -> Option<(String, String, String)> {
    let explicit = std::env::var("AIRLOCK_TEST_DATABASE_URL").ok();
    let required = explicit.is_some() || std::env::var_os("CI").is_some();
    let base = explicit.unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/test".into());
    let name = format!(
        "t_cli_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos()
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ok = rt.block_on(async {
        match sqlx::PgPool::connect(&base).await {
            Ok(p) => {
                sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {name}")))
                    .execute(&p)
                    .await
                    .unwrap();
                p.close().await;
                Ok(())
            }
            Err(e) => Err(e),
        }
    });
    match ok {
        Ok(()) => Some((
            format!("{base}?options=-c%20search_path%3D{name}"),
            base,
            name,
        )),
        Err(e) if !required => {
            eprintln!("skipping PostgreSQL test: {base} unreachable ({e})");
            None
        }
        Err(e) => {
            panic!("PostgreSQL at {base} is required (CI or AIRLOCK_TEST_DATABASE_URL set): {e}")
        }
    }
}

fn drop_schema(base: &str, name: &str) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let p = sqlx::PgPool::connect(base).await.unwrap();
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("DROP SCHEMA {name} CASCADE")))
            .execute(&p)
            .await
            .unwrap();
        p.close().await;
    });
}

#[test]
fn two_processes_on_one_postgres_keep_one_log() {
    let Some((url, base, name)) = pg_schema() else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    // The first open creates the registry and keys; both processes then share the data dir.
    load_pg(&data, &url, 1, "init");
    let spawn = |prefix: &str| {
        StdCommand::new(assert_cmd::cargo::cargo_bin("airlock"))
            .arg("--data-dir")
            .arg(&data)
            .args([
                "--database",
                &url,
                "ledger",
                "load",
                "--count",
                "300",
                "--concurrency",
                "8",
                "--prefix",
                prefix,
            ])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn("p1"), spawn("p2"));
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success() && b.status.success());
    assert_eq!(
        String::from_utf8_lossy(&a.stdout).lines().count()
            + String::from_utf8_lossy(&b.stdout).lines().count(),
        600
    );
    let (code, text) = stdout(airlock(&data).args(["--database", &url, "ledger", "verify"]));
    drop_schema(&base, &name);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("ok: 601 receipts in 4 sessions"), "{text}");
}

fn load_pg(data: &Path, url: &str, count: u64, prefix: &str) {
    airlock(data)
        .args([
            "--database",
            url,
            "ledger",
            "load",
            "--count",
            &count.to_string(),
            "--prefix",
            prefix,
        ])
        .assert()
        .success();
}
