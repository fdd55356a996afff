//! A revoked grant (or one whose ancestor was revoked), an expired grant and a used-up grant
//! never pass: random sequences of create / forward / revoke / use / clock steps run against a
//! real SQLite store and against a plain in-memory model of the rules, and must agree at every
//! step; uses never exceed the maximum anywhere in the store.

use airlock_core::Action;
use airlock_grants::{Forward, GrantKind, NewGrant, Scope, Subject};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::common::{Backend, TestClock};

#[derive(Debug, Clone)]
enum Op {
    Create { uses: u32, ttl: i64 },
    Forward { parent: usize, uses: u32, ttl: i64 },
    Revoke(usize),
    Use(usize),
    Advance(i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (1u32..4, 1i64..5_000).prop_map(|(uses, ttl)| Op::Create { uses, ttl }),
        (0usize..8, 1u32..4, 1i64..6_000).prop_map(|(parent, uses, ttl)| Op::Forward {
            parent,
            uses,
            ttl
        }),
        (0usize..8).prop_map(Op::Revoke),
        (0usize..8).prop_map(Op::Use),
        (0usize..8).prop_map(Op::Use),
        (0usize..8).prop_map(Op::Use),
        (1i64..2_000).prop_map(Op::Advance),
    ]
}

#[derive(Debug, Clone)]
struct M {
    parent: Option<usize>,
    max: u32,
    uses: u32,
    expires: i64,
    revoked: bool,
}

fn chain_ok(m: &[M], i: usize, now: i64) -> bool {
    let mut cur = Some(i);
    while let Some(c) = cur {
        let g = &m[c];
        if g.revoked || g.expires <= now || g.uses >= g.max {
            return false;
        }
        cur = g.parent;
    }
    true
}

#[test]
fn revoked_expired_and_used_up_grants_never_pass() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut runner = TestRunner::new(Config {
        cases: 24,
        ..Config::default()
    });
    runner
        .run(&prop::collection::vec(op(), 1..40), |ops| {
            rt.block_on(run_ops(ops));
            Ok(())
        })
        .unwrap();
}

async fn run_ops(ops: Vec<Op>) {
    let backend = Backend::sqlite().await;
    let clock = TestClock::new();
    let book = clock.book(backend.open().await);
    let actor = Subject::new("agent", Some("s1".into()));
    let action = Action::shell("git push origin main");
    let scope = Scope::command_prefix("git push").unwrap();
    let mut ids: Vec<String> = Vec::new();
    let mut model: Vec<M> = Vec::new();
    for op in ops {
        let now = clock.now();
        match op {
            Op::Create { uses, ttl } => {
                let mut req = NewGrant::new(actor.clone(), scope.clone(), GrantKind::Session);
                req.max_uses = Some(uses);
                req.expires_at = Some(now + ttl);
                let g = book.create(req, "alice").await.unwrap();
                ids.push(g.id);
                model.push(M {
                    parent: None,
                    max: uses,
                    uses: 0,
                    expires: now + ttl,
                    revoked: false,
                });
            }
            Op::Forward { parent, uses, ttl } => {
                if parent >= ids.len() {
                    continue;
                }
                let r = book
                    .forward(
                        &ids[parent],
                        Forward {
                            subject: actor.clone(),
                            scope: Scope::command_prefix("git push origin").unwrap(),
                            kind: GrantKind::Session,
                            max_uses: Some(uses),
                            expires_at: Some(now + ttl),
                            reason: String::new(),
                        },
                    )
                    .await;
                let p = &model[parent];
                let expect = chain_ok(&model, parent, now)
                    && uses <= p.max - p.uses
                    && now + ttl <= p.expires;
                assert_eq!(r.is_ok(), expect, "forward from {parent}: {r:?}");
                if let Ok(g) = r {
                    ids.push(g.id);
                    model.push(M {
                        parent: Some(parent),
                        max: uses,
                        uses: 0,
                        expires: now + ttl,
                        revoked: false,
                    });
                }
            }
            Op::Revoke(i) => {
                if i >= ids.len() {
                    continue;
                }
                book.revoke(&ids[i], "test").await.unwrap();
                // Cascade in the model: i and every descendant.
                let mut changed = true;
                model[i].revoked = true;
                while changed {
                    changed = false;
                    for k in 0..model.len() {
                        if let Some(p) = model[k].parent
                            && model[p].revoked
                            && !model[k].revoked
                        {
                            model[k].revoked = true;
                            changed = true;
                        }
                    }
                }
            }
            Op::Use(i) => {
                if i >= ids.len() {
                    continue;
                }
                let expect = chain_ok(&model, i, now);
                let r = book.use_grant(&ids[i], &actor, &action).await;
                assert_eq!(r.is_ok(), expect, "use of {i}: {r:?} model {model:?}");
                if expect {
                    let mut cur = Some(i);
                    while let Some(c) = cur {
                        model[c].uses += 1;
                        cur = model[c].parent;
                    }
                }
            }
            Op::Advance(ms) => clock.advance(ms),
        }
        // The store agrees with the model, and no grant is over its maximum.
        for (k, id) in ids.iter().enumerate() {
            let g = book.show(id).await.unwrap();
            assert!(g.uses <= g.max_uses);
            assert_eq!(g.uses, model[k].uses, "uses of {k}");
            assert_eq!(
                g.revoked_at.is_some(),
                model[k].revoked,
                "revocation of {k}"
            );
        }
    }
    book.db().close().await;
}
