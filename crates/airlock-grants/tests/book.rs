//! The book on both backends: flows (create, propose/confirm, forward, use, revoke, end of
//! session) and concurrency (100 consumers of a 3-use grant; a chain used from both ends).

use std::sync::Arc;

use airlock_core::{Action, ReasonCode};
use airlock_grants::{
    ArgConstraint, Constraint, Forward, GrantBook, GrantKind, ListFilter, NewGrant, Scope, Status,
    Subject,
};
use serde_json::json;

use crate::common::{Backend, TestClock};

fn agent(session: &str) -> Subject {
    Subject::new("claude", Some(session.to_string()))
}

fn prefix(line: &str) -> Scope {
    Scope::command_prefix(line).unwrap()
}

async fn flows(backend: Backend) {
    let clock = TestClock::new();
    let book = clock.book(backend.open().await);
    let s1 = agent("s1");
    let push = Action::shell("git push origin main");

    // Nothing granted: nothing used.
    assert!(book.use_for(&s1, &push).await.unwrap().is_none());

    // Broad scopes are refused with their code, unless allowed.
    for broad in ["bash -c", "python3 -c", "sudo"] {
        let req = NewGrant::new(
            s1.clone(),
            Scope::CommandPrefix {
                argv: broad.split(' ').map(String::from).collect(),
            },
            GrantKind::Session,
        );
        let e = book.create(req.clone(), "alice").await.unwrap_err();
        assert_eq!(e.code(), ReasonCode::GrantScopeTooBroad, "{broad}");
        let mut allowed = req;
        allowed.allow_broad = true;
        book.create(allowed, "admin").await.unwrap();
    }

    // A once grant: exactly one use, only for its own subject and matching actions.
    let once = book
        .create(
            NewGrant::new(s1.clone(), Scope::exact(&push).unwrap(), GrantKind::Once),
            "alice",
        )
        .await
        .unwrap();
    assert!(book.use_for(&agent("s2"), &push).await.unwrap().is_none());
    assert!(
        book.use_for(&s1, &Action::shell("git push origin dev"))
            .await
            .unwrap()
            .is_none()
    );
    let used = book.use_for(&s1, &push).await.unwrap().unwrap();
    assert_eq!(used.id, once.id);
    assert_eq!(used.uses, 1);
    assert!(book.use_for(&s1, &push).await.unwrap().is_none());

    // An LLM proposal is never usable until a person confirms it.
    let proposed = book
        .propose(
            NewGrant::new(s1.clone(), prefix("git push"), GrantKind::Session),
            "reviewer-llm",
        )
        .await
        .unwrap();
    assert_eq!(proposed.status, Status::Proposed);
    assert!(book.use_for(&s1, &push).await.unwrap().is_none());
    let e = book.use_grant(&proposed.id, &s1, &push).await.unwrap_err();
    assert_eq!(e.code(), ReasonCode::GrantNotUsable);
    // An LLM cannot propose a broad scope even if asked to allow it.
    let mut sneaky = NewGrant::new(s1.clone(), prefix("bash"), GrantKind::Session);
    sneaky.allow_broad = true;
    assert_eq!(
        book.propose(sneaky, "llm").await.unwrap_err().code(),
        ReasonCode::GrantScopeTooBroad
    );
    // Forwarding a proposal is refused too.
    let fwd = |scope: Scope, uses: Option<u32>, exp: Option<i64>| Forward {
        subject: agent("child"),
        scope,
        kind: GrantKind::Session,
        max_uses: uses,
        expires_at: exp,
        reason: "sub-agent".into(),
    };
    assert_eq!(
        book.forward(&proposed.id, fwd(prefix("git push origin"), None, None))
            .await
            .unwrap_err()
            .code(),
        ReasonCode::GrantNotUsable
    );
    let confirmed = book.confirm(&proposed.id, "bob").await.unwrap();
    assert_eq!(confirmed.status, Status::Active);
    assert_eq!(confirmed.confirmed_by.as_deref(), Some("bob"));
    assert!(book.confirm(&proposed.id, "bob").await.is_err());
    let used = book.use_for(&s1, &push).await.unwrap().unwrap();
    assert_eq!(used.id, proposed.id);
    // A prefix grant never covers a compound line.
    assert!(
        book.use_for(&s1, &Action::shell("git push; rm -rf /"))
            .await
            .unwrap()
            .is_none()
    );

    // Forwarding: a child session starts with nothing, gets only what is forwarded.
    let child = agent("child");
    assert!(book.use_for(&child, &push).await.unwrap().is_none());
    let parent = book
        .create(
            {
                let mut r = NewGrant::new(s1.clone(), prefix("git push"), GrantKind::Session);
                r.max_uses = Some(5);
                r
            },
            "alice",
        )
        .await
        .unwrap();
    for (bad, what) in [
        (fwd(prefix("git"), None, None), "wider scope"),
        (fwd(prefix("git pull"), None, None), "other scope"),
        (fwd(prefix("git push origin"), Some(6), None), "more uses"),
        (
            fwd(prefix("git push origin"), None, Some(parent.expires_at + 1)),
            "later expiry",
        ),
    ] {
        let e = book.forward(&parent.id, bad).await.unwrap_err();
        assert_eq!(
            e.code(),
            ReasonCode::DelegationScopeViolation,
            "{what}: {e}"
        );
    }
    let kid = book
        .forward(&parent.id, fwd(prefix("git push origin"), Some(2), None))
        .await
        .unwrap();
    assert_eq!(kid.parent.as_deref(), Some(parent.id.as_str()));
    let grandkid = book
        .forward(
            &kid.id,
            Forward {
                subject: agent("grandchild"),
                ..fwd(Scope::exact(&push).unwrap(), Some(1), None)
            },
        )
        .await
        .unwrap();
    // A child's use counts on the parent as well.
    let u = book.use_for(&child, &push).await.unwrap().unwrap();
    assert_eq!(u.id, kid.id);
    assert_eq!(book.show(&parent.id).await.unwrap().uses, 1);
    // Revoking the parent cascades to every descendant; none of them passes any more.
    let n = book.revoke(&parent.id, "done").await.unwrap();
    assert_eq!(n, 3);
    for id in [&parent.id, &kid.id, &grandkid.id] {
        let g = book.show(id).await.unwrap();
        assert!(g.revoked_at.is_some(), "{id}");
        assert_eq!(g.revoke_reason.as_deref(), Some("done"));
    }
    assert!(book.use_for(&child, &push).await.unwrap().is_none());
    assert!(
        book.use_for(&agent("grandchild"), &push)
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(
        book.revoke("gr_00000000000000000000000000000000", "x")
            .await
            .unwrap_err()
            .code(),
        ReasonCode::GrantNotFound
    );

    // Tool scopes with constraints.
    let tool_scope = Scope::Tool {
        tool: "write_file".into(),
        constraints: vec![ArgConstraint {
            pointer: "/path".into(),
            rule: Constraint::PathGlob("/work/**".into()),
        }],
        exact_fields: false,
    };
    let t = book
        .create(
            NewGrant::new(s1.clone(), tool_scope, GrantKind::Session),
            "alice",
        )
        .await
        .unwrap();
    let w = |p: &str| Action::Tool {
        tool: "write_file".into(),
        arguments: json!({"path": p, "content": "x"}),
    };
    assert_eq!(
        book.use_for(&s1, &w("/work/a.rs"))
            .await
            .unwrap()
            .unwrap()
            .id,
        t.id
    );
    assert!(
        book.use_for(&s1, &w("/work/../etc/x"))
            .await
            .unwrap()
            .is_none()
    );
    assert!(book.use_for(&s1, &w("/etc/x")).await.unwrap().is_none());
    let mut bare = NewGrant::new(
        s1.clone(),
        Scope::Tool {
            tool: "shell".into(),
            constraints: vec![],
            exact_fields: false,
        },
        GrantKind::Session,
    );
    bare.dangerous_tool = true;
    assert_eq!(
        book.create(bare, "alice").await.unwrap_err().code(),
        ReasonCode::GrantScopeTooBroad
    );

    // Expiry: a grant stops passing when its time is up.
    let mut short = NewGrant::new(agent("s3"), prefix("cargo test"), GrantKind::Session);
    short.expires_at = Some(clock.now() + 1_000);
    book.create(short, "alice").await.unwrap();
    let test = Action::shell("cargo test -p x");
    assert!(book.use_for(&agent("s3"), &test).await.unwrap().is_some());
    clock.advance(1_000);
    assert!(book.use_for(&agent("s3"), &test).await.unwrap().is_none());

    // Every grant expires: nothing beyond the permanent lifetime.
    let mut forever = NewGrant::new(s1.clone(), prefix("ls"), GrantKind::Permanent);
    forever.expires_at = Some(clock.now() + book.config().permanent_ttl_ms + 1);
    assert_eq!(
        book.create(forever, "alice").await.unwrap_err().code(),
        ReasonCode::GrantInvalid
    );

    // End of session: its session grants (and what was forwarded from them) go; a permanent
    // grant of the agent stays.
    let s4 = agent("s4");
    let sess = book
        .create(
            NewGrant::new(s4.clone(), prefix("make"), GrantKind::Session),
            "alice",
        )
        .await
        .unwrap();
    let perm = book
        .create(
            NewGrant::new(
                Subject::new("claude", None),
                prefix("make test"),
                GrantKind::Permanent,
            ),
            "alice",
        )
        .await
        .unwrap();
    let fwd_sess = book
        .forward(
            &sess.id,
            Forward {
                subject: agent("s4-child"),
                ..fwd(prefix("make build"), Some(1), None)
            },
        )
        .await
        .unwrap();
    assert!(book.end_session("s4").await.unwrap() >= 2);
    assert!(book.show(&sess.id).await.unwrap().revoked_at.is_some());
    assert!(book.show(&fwd_sess.id).await.unwrap().revoked_at.is_some());
    assert!(book.show(&perm.id).await.unwrap().revoked_at.is_none());
    let u = book
        .use_for(&s4, &Action::shell("make test"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(u.id, perm.id);

    // Listing: active only by default, everything with `all`.
    let active = book
        .list(&ListFilter {
            agent: Some("claude".into()),
            session: Some("s1".into()),
            all: false,
        })
        .await
        .unwrap();
    assert!(active.iter().all(|g| g.is_usable_at(clock.now())));
    assert!(!active.iter().any(|g| g.id == once.id));
    let all = book
        .list(&ListFilter {
            all: true,
            ..ListFilter::default()
        })
        .await
        .unwrap();
    assert!(all.iter().any(|g| g.id == once.id));
    book.db().close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_flows() {
    flows(Backend::sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_flows() {
    let Some(b) = Backend::pg().await else {
        return;
    };
    flows(b).await;
}

/// 100 consumers of a 3-use grant over two pools (two nodes): exactly 3 succeed. Then a chain
/// parent (3 uses) -> child (3 uses): consumers of both together succeed at most 3 times in all.
async fn concurrency(backend: Backend) {
    let clock = TestClock::new();
    let a = Arc::new(clock.book(backend.open().await));
    let b = Arc::new(clock.book(backend.open().await));
    let s = agent("c1");
    let push = Action::shell("git push origin main");
    let mut req = NewGrant::new(s.clone(), prefix("git push"), GrantKind::Session);
    req.max_uses = Some(3);
    let g = a.create(req, "alice").await.unwrap();
    let ok = race(&a, &b, 100, |_| (s.clone(), push.clone())).await;
    assert_eq!(ok, 3);
    assert_eq!(a.show(&g.id).await.unwrap().uses, 3);

    let s2 = agent("c2");
    let mut req = NewGrant::new(s2.clone(), prefix("git push"), GrantKind::Session);
    req.max_uses = Some(3);
    let parent = a.create(req, "alice").await.unwrap();
    let child_subject = agent("c2-child");
    let child = a
        .forward(
            &parent.id,
            Forward {
                subject: child_subject.clone(),
                scope: prefix("git push origin"),
                kind: GrantKind::Session,
                max_uses: Some(3),
                expires_at: None,
                reason: String::new(),
            },
        )
        .await
        .unwrap();
    let ok = race(&a, &b, 100, |i| {
        if i % 2 == 0 {
            (s2.clone(), push.clone())
        } else {
            (child_subject.clone(), push.clone())
        }
    })
    .await;
    assert_eq!(ok, 3);
    let p = a.show(&parent.id).await.unwrap();
    let c = a.show(&child.id).await.unwrap();
    assert_eq!(p.uses, 3);
    assert!(c.uses <= 3);
    a.db().close().await;
    b.db().close().await;
}

async fn race(
    a: &Arc<GrantBook>,
    b: &Arc<GrantBook>,
    n: usize,
    who: impl Fn(usize) -> (Subject, Action),
) -> usize {
    let start = Arc::new(tokio::sync::Barrier::new(n));
    let mut tasks = Vec::new();
    for i in 0..n {
        let book = if i % 2 == 0 { a.clone() } else { b.clone() };
        let (subject, action) = who(i);
        let start = start.clone();
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            book.use_for(&subject, &action).await.unwrap().is_some()
        }));
    }
    let mut ok = 0;
    for t in tasks {
        if t.await.unwrap() {
            ok += 1;
        }
    }
    ok
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_concurrent_consumers() {
    concurrency(Backend::sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_concurrent_consumers() {
    let Some(b) = Backend::pg().await else {
        return;
    };
    concurrency(b).await;
}
