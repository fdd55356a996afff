//! The broker on a real SQLite file: routing by tier, receipts, answers and what is refused,
//! tier-4 codes and time locks, timeouts, session grants, denial streaks, suggested rules,
//! idempotent submissions and metrics.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use airlock_confirm::{
    ApprovalStatus, BrokerConfig, ConfirmError, Principal, Role, SILENCE, Status,
};
use airlock_core::{Decision, Tier};
use airlock_policy::Confirmers;

use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_and_deny_are_receipts_at_once() {
    let (b, _d) = sqlite_broker(BrokerConfig::default()).await;
    let o = b.submit(sub("claude", "s1", "ls -la")).await.unwrap();
    assert_eq!(o.status, Status::Allowed, "{o:?}");
    assert_eq!(o.decision, Decision::Allow);
    assert!(o.receipt.is_some());
    assert_eq!(receipts_for(&b, &o.id).await, 1);

    let o = b
        .submit(sub("claude", "s1", "forbidden thing"))
        .await
        .unwrap();
    assert_eq!(o.status, Status::Denied, "{o:?}");
    assert!(o.message.contains("forbidden in tests"), "{}", o.message);
    assert_eq!(receipts_for(&b, &o.id).await, 1);
    // Read back by its request id.
    let again = b.outcome(&o.id).await.unwrap();
    assert_eq!(again.status, Status::Denied);
    assert_eq!(again.receipt, o.receipt);

    let m = b.metrics();
    assert_eq!((m.submitted, m.allowed, m.denied), (2, 1, 1));
    assert!(matches!(
        b.outcome("req-unknown").await,
        Err(ConfirmError::NotFound(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_approves_and_the_waiter_is_released_with_one_receipt() {
    let (b, _d) = sqlite_broker(BrokerConfig::default()).await;
    let o = b.submit(sub("claude", "s1", "tier3 deploy")).await.unwrap();
    assert_eq!(o.status, Status::Pending, "{o:?}");
    assert_eq!(o.tier, Tier::High);
    let id = o.approval.clone().unwrap();
    assert!(o.message.contains("a person"), "{}", o.message);
    let a = b.approval(&id).await.unwrap();
    assert_eq!(a.confirm, Confirmers::Human);
    assert_eq!(b.pending().await.unwrap().len(), 1);

    let waiter = {
        let b = b.clone();
        let id = id.clone();
        tokio::spawn(async move { b.wait(&id, Duration::from_secs(10)).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = std::time::Instant::now();
    let a = b.answer(&id, approve("alice")).await.unwrap();
    assert_eq!(a.status, ApprovalStatus::Approved);
    let out = waiter.await.unwrap().unwrap();
    // Woken by the event, not by the 1 s periodic re-read.
    assert!(
        started.elapsed() < Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.status, Status::Allowed);
    assert!(out.message.contains("alice"), "{}", out.message);
    let r = approval_receipt(&b, &id).await;
    assert_eq!(r.decision, Decision::Allow);
    assert_eq!(r.approvers, ["alice"]);
    assert_eq!(out.receipt.as_deref(), Some(r.id.as_str()));
    assert!(r.reasons.iter().any(|x| x.rule == "approval.approved"));

    // A second answer is refused, and records nothing.
    let err = b.answer(&id, deny("bob", "late")).await.unwrap_err();
    assert!(matches!(err, ConfirmError::AlreadyDecided { .. }), "{err}");
    assert!(b.pending().await.unwrap().is_empty());
    assert_eq!(b.history(10).await.unwrap().len(), 1);
    assert_eq!(b.metrics().approved, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn who_may_answer() {
    let (b, _d) = sqlite_broker(BrokerConfig::default()).await;
    let id = b
        .submit(sub("claude", "s1", "tier3 x"))
        .await
        .unwrap()
        .approval
        .unwrap();
    let a = b.approval(&id).await.unwrap();

    // An agent token can never approve, even another agent's action.
    let mut as_agent = approve("codex");
    as_agent.by = Principal::new("codex", Role::Agent);
    assert!(matches!(
        b.answer(&id, as_agent).await,
        Err(ConfirmError::Forbidden(_))
    ));
    // The approval's own agent, even with an approver role.
    assert!(matches!(
        b.answer(&id, approve("claude")).await,
        Err(ConfirmError::Forbidden(_))
    ));
    // Bound to the action's hash.
    let mut other = approve("alice");
    other.action_sha256 = Some("00".repeat(32));
    assert!(matches!(
        b.answer(&id, other).await,
        Err(ConfirmError::ActionMismatch { .. })
    ));
    assert!(matches!(
        b.answer("apr-missing", approve("alice")).await,
        Err(ConfirmError::NotFound(_))
    ));
    // None of that decided anything.
    assert_eq!(
        b.approval(&id).await.unwrap().status,
        ApprovalStatus::Pending
    );
    let mut right = deny("alice", "not today");
    right.action_sha256 = Some(a.action_sha256.clone());
    let done = b.answer(&id, right).await.unwrap();
    assert_eq!(done.status, ApprovalStatus::Denied);
    let out = b.outcome(&id).await.unwrap();
    assert_eq!(out.status, Status::Denied);
    assert!(out.message.contains("not today"), "{}", out.message);
    let r = approval_receipt(&b, &id).await;
    assert_eq!(r.decision, Decision::Deny);
    assert_eq!(r.approvers, ["alice"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silence_is_not_consent() {
    let (b, _d) = sqlite_broker(BrokerConfig::default()).await;
    let o = b.submit(sub("claude", "s1", "tier3 slow")).await.unwrap();
    let id = o.approval.unwrap();
    let deadline = o.deadline_ms.unwrap();
    // A wait shorter than the deadline returns still pending.
    let early = b.wait(&id, Duration::from_millis(200)).await.unwrap();
    assert_eq!(early.status, Status::Pending);
    // The waiter expires it at the deadline (2 s in the test policy).
    let out = b.wait(&id, Duration::from_secs(10)).await.unwrap();
    assert_eq!(out.status, Status::Denied);
    assert!(out.message.contains(SILENCE), "{}", out.message);
    let a = b.approval(&id).await.unwrap();
    assert_eq!(a.status, ApprovalStatus::Expired);
    assert!(a.decided_ms.unwrap() >= deadline);
    let r = approval_receipt(&b, &id).await;
    assert_eq!(r.decision, Decision::Deny);
    assert!(r.reasons.iter().any(|x| x.code == "APPROVAL_TIMEOUT"));
    assert!(r.approvers.is_empty(), "{:?}", r.approvers);
    assert_eq!(b.metrics().expired, 1);
    // Answering after the deadline is too late.
    assert!(matches!(
        b.answer(&id, approve("alice")).await,
        Err(ConfirmError::AlreadyDecided { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweeper_expires_without_a_waiter() {
    let (b, _d) = sqlite_broker(BrokerConfig::default()).await;
    let id = b
        .submit(sub("claude", "s1", "tier3 nobody waits"))
        .await
        .unwrap()
        .approval
        .unwrap();
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let a = b.approval(&id).await.unwrap();
    assert_eq!(a.status, ApprovalStatus::Expired);
    assert!(a.receipt.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tier_four_needs_the_code() {
    let (b, _d) = sqlite_broker(BrokerConfig::default()).await;
    let o = b.submit(sub("claude", "s1", "tier4 wipe")).await.unwrap();
    let id = o.approval.clone().unwrap();
    let a = b.approval(&id).await.unwrap();
    assert!(a.code_required);
    let code = b.deliberate_code(&a.action_sha256);
    assert!(!o.message.contains(&code), "the agent never sees the code");
    assert!(!serde_json::to_string(&o).unwrap().contains(&code));
    assert!(matches!(
        b.answer(&id, approve("alice")).await,
        Err(ConfirmError::BadCode(_))
    ));
    let mut wrong = approve("alice");
    wrong.code = Some("AAAAAA".into());
    assert!(matches!(
        b.answer(&id, wrong).await,
        Err(ConfirmError::BadCode(_))
    ));
    let mut session = approve("alice");
    session.code = Some(code.clone());
    session.scope = airlock_confirm::AnswerScope::Session;
    assert!(matches!(
        b.answer(&id, session).await,
        Err(ConfirmError::Invalid(_))
    ));
    let mut right = approve("alice");
    right.code = Some(code.to_lowercase());
    let done = b.answer(&id, right).await.unwrap();
    assert_eq!(done.status, ApprovalStatus::Approved);
}

/// The code an agent could compute from what it sees (its action's hash) before codes were
/// keyed: an unkeyed SHA-256.
fn unkeyed_code(action_sha256: &str) -> String {
    use sha2::Digest;
    const ALPHABET: &[u8] = b"ACDEFGHJKMNPQRTWXY34679";
    sha2::Sha256::new()
        .chain_update(b"airlock.deliberate-code.v1\0")
        .chain_update(action_sha256.as_bytes())
        .finalize()
        .iter()
        .take(6)
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_codes_lock_the_approval_out_and_the_agent_cannot_compute_the_code() {
    let (b, _d) = sqlite_broker(BrokerConfig::default()).await;
    let o = b.submit(sub("claude", "s1", "tier4 wipe")).await.unwrap();
    let id = o.approval.clone().unwrap();
    let a = b.approval(&id).await.unwrap();
    let code = b.deliberate_code(&a.action_sha256);
    let guess = unkeyed_code(&a.action_sha256);
    assert_ne!(guess, code, "the agent's own computation is not the code");

    // A missing code is refused without counting; each wrong one counts.
    assert!(matches!(
        b.answer(&id, approve("alice")).await,
        Err(ConfirmError::BadCode(_))
    ));
    let wrong = |c: &str| {
        let mut w = approve("alice");
        w.code = Some(c.to_string());
        w
    };
    assert!(matches!(
        b.answer(&id, wrong(&guess)).await,
        Err(ConfirmError::BadCode(_))
    ));
    assert!(matches!(
        b.answer(&id, wrong("AAAAAA")).await,
        Err(ConfirmError::BadCode(_))
    ));
    assert_eq!(
        b.approval(&id).await.unwrap().status,
        ApprovalStatus::Pending
    );
    assert_eq!(airlock_confirm::MAX_CODE_ATTEMPTS, 3);
    let third = b.answer(&id, wrong("CCCCCC")).await;
    assert!(
        matches!(third, Err(ConfirmError::CodeLockout(_))),
        "{third:?}"
    );

    // Locked out: denied, the agent is told why, the receipt says so, the right code is refused.
    let locked = b.approval(&id).await.unwrap();
    assert_eq!(locked.status, ApprovalStatus::Denied);
    let out = b.wait(&id, Duration::from_secs(5)).await.unwrap();
    assert_eq!(out.status, Status::Denied);
    assert_eq!(out.reasons[0].code, airlock_core::ReasonCode::CodeLockout);
    let r = approval_receipt(&b, &id).await;
    assert_eq!(r.decision, Decision::Deny);
    assert!(
        r.reasons.iter().any(|x| x.code == "CODE_LOCKOUT"),
        "{:?}",
        r.reasons
    );
    assert!(matches!(
        b.answer(&id, wrong(&code)).await,
        Err(ConfirmError::AlreadyDecided { .. })
    ));
    assert_eq!(
        b.approval(&id).await.unwrap().status,
        ApprovalStatus::Denied
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_time_lock_holds_the_waiter_and_can_be_cancelled() {
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(
        d.path(),
        None,
        policy_text(&POLICY.replace("deliberate = true", "deliberate = true\ntime_lock = \"1s\"")),
        BrokerConfig::default(),
    )
    .await;
    // Approved: locked for 1 s, then effective; the waiter is released only then.
    let id = b
        .submit(sub("claude", "s1", "tier4 one"))
        .await
        .unwrap()
        .approval
        .unwrap();
    let a = b.approval(&id).await.unwrap();
    assert_eq!(a.time_lock_ms, 1000);
    let mut ans = approve("alice");
    ans.code = Some(b.deliberate_code(&a.action_sha256));
    let started = std::time::Instant::now();
    let locked = b.answer(&id, ans).await.unwrap();
    assert_eq!(locked.status, ApprovalStatus::Locked);
    assert_eq!(
        b.outcome(&id).await.unwrap().status,
        Status::Pending,
        "not effective yet"
    );
    assert!(approval_receipt_missing(&b, &id).await);
    let out = b.wait(&id, Duration::from_secs(5)).await.unwrap();
    assert_eq!(out.status, Status::Allowed);
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert_eq!(approval_receipt(&b, &id).await.approvers, ["alice"]);

    // Cancelled during the lock: denied.
    let id = b
        .submit(sub("claude", "s1", "tier4 two"))
        .await
        .unwrap()
        .approval
        .unwrap();
    let a = b.approval(&id).await.unwrap();
    let mut ans = approve("alice");
    ans.code = Some(b.deliberate_code(&a.action_sha256));
    b.answer(&id, ans).await.unwrap();
    let c = b.cancel(&id, &person("bob"), "wrong server").await.unwrap();
    assert_eq!(c.status, ApprovalStatus::Cancelled);
    let out = b.wait(&id, Duration::from_secs(5)).await.unwrap();
    assert_eq!(out.status, Status::Denied);
    assert!(out.message.contains("wrong server"), "{}", out.message);
    assert_eq!(approval_receipt(&b, &id).await.decision, Decision::Deny);
    // Nothing left to cancel.
    assert!(matches!(
        b.cancel(&id, &person("bob"), "again").await,
        Err(ConfirmError::AlreadyDecided { .. })
    ));
}

async fn approval_receipt_missing(b: &airlock_confirm::Broker, id: &str) -> bool {
    receipts_for(b, &format!("approval:{id}")).await == 0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_scope_grants_the_exact_action_for_the_session() {
    let (b, _d) = sqlite_broker(BrokerConfig::default()).await;
    let id = b
        .submit(sub("claude", "s1", "tier3 build"))
        .await
        .unwrap()
        .approval
        .unwrap();
    let mut ans = approve("alice");
    ans.scope = airlock_confirm::AnswerScope::Session;
    b.answer(&id, ans).await.unwrap();
    let a = b.approval(&id).await.unwrap();
    let grant = a.grant.clone().expect("a session grant");
    assert_eq!(
        approval_receipt(&b, &id).await.grant.as_deref(),
        Some(grant.as_str())
    );
    let g = b.book().show(&grant).await.unwrap();
    assert_eq!(g.creator.to_string(), "person:alice");
    assert_eq!(g.subject.session.as_deref(), Some("s1"));

    // The same action in the same session is allowed by the grant; another session asks.
    let again = b.submit(sub("claude", "s1", "tier3 build")).await.unwrap();
    assert_eq!(again.status, Status::Allowed, "{again:?}");
    let mut r = approval_receipt(&b, &id).await;
    r.grant = None;
    let other = b.submit(sub("claude", "s2", "tier3 build")).await.unwrap();
    assert_eq!(other.status, Status::Pending);
    let different = b
        .submit(sub("claude", "s1", "tier3 build --all"))
        .await
        .unwrap();
    assert_eq!(different.status, Status::Pending);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_three_denials_the_agent_is_told_to_stop() {
    let (b, _d) = sqlite_broker(BrokerConfig::default()).await;
    let first = b.submit(sub("claude", "s1", "forbidden a")).await.unwrap();
    assert!(!first.message.contains("stop trying"), "{}", first.message);
    b.submit(sub("claude", "s1", "forbidden b")).await.unwrap();
    // A person's denial counts too.
    let id = b
        .submit(sub("claude", "s1", "tier3 c"))
        .await
        .unwrap()
        .approval
        .unwrap();
    b.answer(&id, deny("alice", "no")).await.unwrap();
    let out = b.outcome(&id).await.unwrap();
    assert!(
        out.message.contains("stop trying variations"),
        "{}",
        out.message
    );
    // the outcome leads with how it ended, and names the streak
    assert_eq!(
        out.reasons[0].code,
        airlock_core::ReasonCode::ApprovalDenied
    );
    assert!(
        out.reasons
            .iter()
            .any(|f| f.code == airlock_core::ReasonCode::DenialStreak)
    );
    let fourth = b.submit(sub("claude", "s1", "forbidden d")).await.unwrap();
    assert!(
        fourth.message.contains("denial 4 in a row"),
        "{}",
        fourth.message
    );
    // Another session is unaffected; an allow ends the streak.
    let other = b.submit(sub("claude", "s2", "forbidden a")).await.unwrap();
    assert!(!other.message.contains("stop trying"));
    b.submit(sub("claude", "s1", "ls")).await.unwrap();
    let fresh = b.submit(sub("claude", "s1", "forbidden e")).await.unwrap();
    assert!(!fresh.message.contains("stop trying"), "{}", fresh.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_approvals_suggest_a_rule_never_applied() {
    let (b, _d) = sqlite_broker(BrokerConfig::default()).await;
    let mut last = None;
    for i in 0..3 {
        let id = b
            .submit(sub("claude", &format!("s{i}"), "tier3 make test"))
            .await
            .unwrap()
            .approval
            .unwrap();
        let a = b.answer(&id, approve("alice")).await.unwrap();
        if i < 2 {
            assert_eq!(a.suggestion, None);
        }
        last = Some(a);
    }
    let s = last
        .unwrap()
        .suggestion
        .expect("a suggestion after 3 approvals");
    assert!(s.contains("shell = \"tier3 make test\""), "{s}");
    assert!(s.contains("decision = \"allow\""), "{s}");
    // Never applied: the next one still asks.
    let o = b
        .submit(sub("claude", "s9", "tier3 make test"))
        .await
        .unwrap();
    assert_eq!(o.status, Status::Pending);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_request_id_is_one_approval_and_one_receipt() {
    let (b, _d) = sqlite_broker(BrokerConfig::default()).await;
    let mut s = sub("claude", "s1", "tier3 once");
    s.request_id = Some("req-fixed".into());
    let a = b.submit(s.clone()).await.unwrap();
    let again = b.submit(s.clone()).await.unwrap();
    assert_eq!(a.approval, again.approval);
    assert_eq!(b.pending().await.unwrap().len(), 1);
    let mut allowed = sub("claude", "s1", "ls");
    allowed.request_id = Some("req-ls".into());
    let x = b.submit(allowed.clone()).await.unwrap();
    let y = b.submit(allowed).await.unwrap();
    assert_eq!(x.receipt, y.receipt);
    assert_eq!(y.status, Status::Allowed);
    // Waiting on an action decided at once returns its outcome.
    let w = b.wait("req-ls", Duration::from_secs(1)).await.unwrap();
    assert_eq!(w.receipt, x.receipt);
    // A request id never hands one action's outcome to another agent, session or action.
    for (agent, session, command, id) in [
        ("codex", "s1", "tier3 once", "req-fixed"),
        ("claude", "s2", "tier3 once", "req-fixed"),
        ("claude", "s1", "tier3 other", "req-fixed"),
        ("codex", "s1", "ls", "req-ls"),
        ("claude", "s1", "ls -la", "req-ls"),
    ] {
        let mut s = sub(agent, session, command);
        s.request_id = Some(id.into());
        assert!(
            matches!(b.submit(s).await, Err(ConfirmError::Invalid(_))),
            "{agent} {session} {command} {id}"
        );
    }
    let mut reserved = sub("claude", "s1", "ls");
    reserved.request_id = Some("approval:apr-x".into());
    assert!(matches!(
        b.submit(reserved).await,
        Err(ConfirmError::Invalid(_))
    ));
    assert!(matches!(
        b.submit(sub("", "s1", "ls")).await,
        Err(ConfirmError::Invalid(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_are_counted_per_session() {
    let (b, _d) = sqlite_broker(BrokerConfig::default()).await;
    for c in ["tier3 a", "tier3 b", "ls"] {
        b.submit(sub("claude", "s1", c)).await.unwrap();
    }
    b.submit(sub("claude", "s2", "tier3 a")).await.unwrap();
    let m = b.metrics();
    assert_eq!(m.prompts_per_session.get("s1"), Some(&2));
    assert_eq!(m.prompts_per_session.get("s2"), Some(&1));
    assert_eq!(m.pending_opened, 3);
    let text = m.to_prometheus();
    assert!(
        text.contains("airlock_prompts_total{node=\"local\",session=\"s1\"} 2"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_that_does_not_load_denies() {
    let d = tempfile::tempdir().unwrap();
    let broken: airlock_confirm::PolicyProvider = std::sync::Arc::new(|_| {
        Err(airlock_policy::PolicyError::Invalid {
            layer: "user",
            origin: "test".into(),
            message: "broken".into(),
        })
    });
    let b = broker_at(d.path(), None, broken, BrokerConfig::default()).await;
    let o = b.submit(sub("claude", "s1", "ls")).await.unwrap();
    assert_eq!(o.status, Status::Denied);
    assert!(o.reasons.iter().any(|f| f.code.as_str() == "POLICY_ERROR"));
    assert_eq!(receipts_for(&b, &o.id).await, 1);
}
