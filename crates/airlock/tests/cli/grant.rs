//! `airlock grant` as a process on real SQLite files and the real PostgreSQL server: add, list,
//! show, confirm an LLM proposal, revoke (cascading to forwarded grants), end a session, and
//! refusals (broad scopes, unknown ids) with their reason codes and exit code 1.

use std::path::Path;

use airlock_grants::{Forward, GrantBook, GrantConfig, GrantKind, NewGrant, Scope, Subject};
use airlock_store::{Db, StoreOptions};
use assert_cmd::Command;

fn airlock(data: &Path, database: Option<&str>) -> Command {
    let mut c = Command::cargo_bin("airlock").unwrap();
    c.env_remove("AIRLOCK_DATABASE_URL")
        .env("USER", "tester")
        .arg("--data-dir")
        .arg(data);
    if let Some(url) = database {
        c.arg("--database").arg(url);
    }
    c
}

/// (exit code, stdout, stderr)
fn run(c: &mut Command) -> (i32, String, String) {
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn with_book<T>(data: &Path, database: Option<&str>, f: impl AsyncFnOnce(&GrantBook) -> T) -> T {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let db = Db::open(&StoreOptions::new(data).with_database(database.map(String::from)))
            .await
            .unwrap();
        let book = GrantBook::new(db.clone(), GrantConfig::default());
        let out = f(&book).await;
        db.close().await;
        out
    })
}

fn flow(data: &Path, database: Option<&str>) {
    let cli = || airlock(data, database);

    // add: a prefix grant for one session.
    let (code, out, err) = run(cli().args([
        "grant",
        "add",
        "--agent",
        "claude",
        "--session",
        "s1",
        "--prefix",
        "git push",
        "--uses",
        "5",
        "--expires",
        "2h",
        "--reason",
        "release",
    ]));
    assert_eq!(code, 0, "{err}");
    let id = out.trim().to_string();
    assert!(id.starts_with("gr_") && id.len() == 35, "{out}");
    assert!(
        err.contains("granted session to claude in session s1"),
        "{err}"
    );

    // list (table and JSON) and show.
    let (code, out, _) = run(cli().args(["grant", "list", "--agent", "claude"]));
    assert_eq!(code, 0);
    assert!(
        out.contains(&id) && out.contains("prefix: git push") && out.contains("0/5"),
        "{out}"
    );
    let (_, out, _) = run(cli().args(["grant", "list", "--session", "s1", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["id"], id.as_str());
    assert_eq!(v[0]["scope"]["argv"], serde_json::json!(["git", "push"]));
    assert_eq!(v[0]["creator"]["person"]["name"], "tester");
    let (code, out, _) = run(cli().args(["grant", "show", &id]));
    assert_eq!(code, 0);
    assert!(
        out.contains("state:     active") && out.contains("person:tester"),
        "{out}"
    );

    // Over-broad scopes are refused with their code (exit 1), unless the admin allows them.
    for broad in [
        vec!["--prefix", "bash -c"],
        vec!["--prefix", "python3 -c"],
        vec!["--prefix", "sudo"],
        vec!["--tool", "shell", "--dangerous"],
    ] {
        let (code, _, err) = run(cli()
            .args(["grant", "add", "--agent", "claude"])
            .args(&broad));
        assert_eq!(code, 1, "{broad:?}: {err}");
        assert!(err.contains("GRANT_SCOPE_TOO_BROAD"), "{err}");
    }
    // --allow-broad alone is not enough: only the managed (admin) policy can allow it
    let broad = [
        "grant",
        "add",
        "--agent",
        "claude",
        "--prefix",
        "bash -c",
        "--allow-broad",
    ];
    let (code, _, err) = run(cli().env_remove("AIRLOCK_MANAGED_POLICY").args(broad));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("managed"), "{err}");
    let managed = data.join("managed.toml");
    std::fs::write(&managed, "[policy]\nallow_broad_grants = true\n").unwrap();
    let (code, _, err) = run(cli().env("AIRLOCK_MANAGED_POLICY", &managed).args(broad));
    assert_eq!(code, 0, "{err}");
    // A compound line is not a prefix at all.
    let (code, _, err) = run(cli().args([
        "grant",
        "add",
        "--agent",
        "claude",
        "--prefix",
        "git push; rm -rf /",
    ]));
    assert_eq!(code, 1);
    assert!(err.contains("GRANT_INVALID"), "{err}");
    // Usage errors exit 3.
    let (code, _, err) = run(cli().args(["grant", "add", "--agent", "claude"]));
    assert_eq!(code, 3, "{err}");
    let (code, _, _) = run(cli().args([
        "grant",
        "add",
        "--agent",
        "claude",
        "--prefix",
        "ls",
        "--expires",
        "soon",
    ]));
    assert_eq!(code, 3);

    // Tool grant with constraints.
    let (code, out, err) = run(cli().args([
        "grant",
        "add",
        "--agent",
        "claude",
        "--tool",
        "write_file",
        "--arg",
        "/path~=/work/**",
        "--exact-fields",
        "--kind",
        "once",
        "--json",
    ]));
    assert_eq!(code, 0, "{err}");
    let g: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(g["max_uses"], 1);
    assert_eq!(
        g["scope"]["constraints"][0]["rule"]["path_glob"],
        "/work/**"
    );

    // Revoke cascades to what was forwarded from the grant.
    let (child, grandchild) = with_book(data, database, async |book: &GrantBook| {
        let fwd = |s: &str, scope: &str| Forward {
            subject: Subject::new("sub-agent", Some(s.into())),
            scope: Scope::command_prefix(scope).unwrap(),
            kind: GrantKind::Session,
            max_uses: Some(2),
            expires_at: None,
            reason: String::new(),
        };
        let c = book
            .forward(&id, fwd("c1", "git push origin"))
            .await
            .unwrap();
        let gc = book
            .forward(&c.id, fwd("c2", "git push origin main"))
            .await
            .unwrap();
        (c.id, gc.id)
    });
    let (code, out, _) = run(cli().args(["grant", "show", &grandchild]));
    assert_eq!(code, 0);
    assert!(
        out.contains(&format!("derived from: {child}")) && out.contains(&id),
        "{out}"
    );
    let (code, out, err) = run(cli().args(["grant", "revoke", &id, "--reason", "incident"]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("and 2 grants derived from it"), "{out}");
    for g in [&id, &child, &grandchild] {
        let (_, out, _) = run(cli().args(["grant", "show", g, "--json"]));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(v["revoked_at"].is_i64(), "{g}: {out}");
        assert_eq!(v["revoke_reason"], "incident");
    }
    let (_, out, _) = run(cli().args(["grant", "revoke", &id]));
    assert!(out.contains("already revoked"), "{out}");
    let (_, out, _) = run(cli().args(["grant", "list", "--agent", "sub-agent"]));
    assert!(out.contains("no grants usable now"), "{out}");
    let (_, out, _) = run(cli().args(["grant", "list", "--agent", "sub-agent", "--all"]));
    assert!(out.contains("revoked"), "{out}");

    // An LLM proposal is listed as proposed until a person confirms it.
    let proposed = with_book(data, database, async |book: &GrantBook| {
        book.propose(
            NewGrant::new(
                Subject::new("claude", Some("s7".into())),
                Scope::command_prefix("cargo test").unwrap(),
                GrantKind::Session,
            ),
            "reviewer",
        )
        .await
        .unwrap()
        .id
    });
    let (_, out, _) = run(cli().args(["grant", "list", "--session", "s7", "--all"]));
    assert!(out.contains("proposed"), "{out}");
    let (code, out, err) = run(cli().args(["grant", "confirm", &proposed, "--by", "bob"]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("confirmed") && out.contains("bob"), "{out}");
    let (code, _, err) = run(cli().args(["grant", "confirm", &proposed]));
    assert_eq!(code, 1);
    assert!(err.contains("GRANT_NOT_USABLE"), "{err}");

    // End of session.
    let (code, out, _) = run(cli().args(["grant", "end-session", "s7"]));
    assert_eq!(code, 0);
    assert!(out.contains("1 grant(s) revoked"), "{out}");

    // Unknown ids.
    let (code, _, err) = run(cli().args(["grant", "show", "gr_00000000000000000000000000000000"]));
    assert_eq!(code, 1);
    assert!(err.contains("GRANT_NOT_FOUND"), "{err}");
    let (code, _, err) = run(cli().args(["grant", "revoke", "nope"]));
    assert_eq!(code, 1);
    assert!(err.contains("GRANT_NOT_FOUND"), "{err}");
}

#[test]
fn grant_commands_on_sqlite() {
    let d = tempfile::tempdir().unwrap();
    flow(&d.path().join("data"), None);
}

#[test]
fn grant_commands_on_postgres() {
    let explicit = std::env::var("AIRLOCK_TEST_DATABASE_URL").ok();
    let required = explicit.is_some() || std::env::var_os("CI").is_some();
    let base = explicit.unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/test".into());
    let name = format!("t_grant_cli_{}", &airlock_grants::new_id().unwrap()[3..15]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let pool = match rt.block_on(sqlx::PgPool::connect(&base)) {
        Ok(p) => p,
        Err(e) if !required => {
            eprintln!("skipping PostgreSQL test: {base} unreachable ({e})");
            return;
        }
        Err(e) => panic!("PostgreSQL at {base} is required: {e}"),
    };
    rt.block_on(sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {name}"))).execute(&pool))
        .unwrap();
    let url = format!("{base}?options=-c%20search_path%3D{name}");
    let d = tempfile::tempdir().unwrap();
    let result = std::panic::catch_unwind(|| flow(&d.path().join("data"), Some(&url)));
    rt.block_on(
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("DROP SCHEMA {name} CASCADE"))).execute(&pool),
    )
    .unwrap();
    rt.block_on(pool.close());
    if let Err(p) = result {
        std::panic::resume_unwind(p);
    }
}
