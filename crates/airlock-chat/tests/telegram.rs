//! The Telegram channel end to end: a real broker on a real SQLite file (and PostgreSQL for the
//! store parts), a local server speaking the Bot API's JSON, real reqwest over loopback.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use airlock_chat::{Routes, Telegram};
use airlock_confirm::{ApprovalStatus, Broker, Ruling};
use airlock_store::LedgerStore;
use serde_json::Value;

use crate::common::*;

/// Submits `command` and waits for its ruling in a task.
fn ask(b: &Broker, session: &str, command: &str) -> tokio::task::JoinHandle<Ruling> {
    let b = b.clone();
    let s = sub(session, command);
    tokio::spawn(async move { b.decide_and_wait(s, Duration::from_secs(40)).await })
}

fn message_id(sent: &Value, n: usize) -> i64 {
    // The fake server numbers messages from 2 in the order they are sent.
    let _ = sent;
    i64::try_from(n).unwrap() + 2
}

async fn receipt(b: &Broker, approval: &str) -> airlock_ledger::Receipt {
    let id = airlock_ledger::receipt::receipt_id(&format!("approval:{approval}"));
    for _ in 0..100 {
        if let Some(stored) = b.ledger().receipt(&id).await.unwrap() {
            return serde_json::from_str(&stored.body).unwrap();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no receipt for {approval}");
}

/// The refused chat answers' receipts, oldest first, with their recorded arguments.
async fn refusal_receipts(b: &Broker) -> Vec<(airlock_ledger::Receipt, Value)> {
    let stored = b.ledger().receipts(0, 10_000).await.unwrap();
    stored
        .iter()
        .filter_map(|s| {
            let r: airlock_ledger::Receipt = serde_json::from_str(&s.body).ok()?;
            if r.tool.as_deref() != Some("airlock.chat.refusal") {
                return None;
            }
            let p: Value = serde_json::from_str(s.payload.as_deref()?).ok()?;
            // the payload is the event's tool-shaped action or its arguments
            let args = p.get("arguments").cloned().unwrap_or(p);
            Some((r, args))
        })
        .collect()
}

async fn only_pending(b: &Broker) -> airlock_confirm::Approval {
    for _ in 0..200 {
        let p = b.pending().await.unwrap();
        if let Some(a) = p.into_iter().next() {
            return a;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("nothing pending");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tap_approves_releases_the_waiter_and_closes_the_message() {
    let bot = Bot::start().await;
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, "n1").await;
    let tg = Telegram::start(b.clone(), config(&bot.url), Routes::new())
        .await
        .unwrap();
    let waiter = ask(&b, "s1", "tier3 deploy prod");
    let sent = bot.wait_calls("sendMessage", 1).await;
    let m = &sent[0];
    assert_eq!(m["chat_id"], CHAT.to_string());
    let text = m["text"].as_str().unwrap();
    assert!(text.contains("$ tier3 deploy prod"), "{text}");
    assert!(text.contains("tier 3"), "{text}");
    assert!(text.contains("Time left: "), "{text}");
    let approve = button(m, "Approve once").unwrap();
    assert!(approve.len() <= 64);
    assert!(button(m, "For this session").is_some());
    assert!(button(m, "Deny").is_some());
    assert!(tg.is_polling());

    bot.tap(ALICE, CHAT, message_id(m, 0), &approve);
    let ruling = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ruling, Ruling::Allow);
    let acks = bot.wait_calls("answerCallbackQuery", 1).await;
    assert!(
        acks[0]["text"]
            .as_str()
            .unwrap()
            .contains("Approved once by alice")
    );
    let edits = bot.wait_calls("editMessageText", 1).await;
    assert_eq!(edits[0]["message_id"], message_id(m, 0));
    assert_eq!(
        edits[0]["reply_markup"]["inline_keyboard"],
        serde_json::json!([])
    );
    assert!(
        edits[0]["text"]
            .as_str()
            .unwrap()
            .contains("Approved once by alice in Telegram")
    );
    let a = b.history(10).await.unwrap().remove(0);
    assert_eq!(a.decided_by.as_deref(), Some("alice"));
    let via = a.answered_via.clone().unwrap();
    assert_eq!(
        via,
        format!(
            "telegram:ops/chat={CHAT}/message={}/user={ALICE}",
            message_id(m, 0)
        )
    );
    // the receipt names the approver, the channel and the message
    let r = receipt(&b, &a.id).await;
    assert_eq!(r.approvers, vec!["alice".to_string()]);
    assert!(
        r.reasons
            .iter()
            .any(|x| x.rule == format!("approval.via.{via}")),
        "{:?}",
        r.reasons
    );
    drop(tg);
    b.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_replayed_and_strangers_taps_are_refused_and_recorded() {
    let bot = Bot::start().await;
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, "n1").await;
    let _tg = Telegram::start(b.clone(), config(&bot.url), Routes::new())
        .await
        .unwrap();
    let waiter = ask(&b, "s1", "tier3 rotate keys");
    let m = bot.wait_calls("sendMessage", 1).await.remove(0);
    let mid = message_id(&m, 0);
    let approve = button(&m, "Approve once").unwrap();
    let deny = button(&m, "Deny").unwrap();

    // a stranger in the chat taps approve
    bot.tap(MALLORY, CHAT, mid, &approve);
    // forged: deny's MAC with the approve letter; then made-up data; then the right data
    // carried into another chat
    bot.tap(ALICE, CHAT, mid, &deny.replace(".d.", ".o."));
    bot.tap(ALICE, CHAT, mid, "al1.00ff.o.AAAAAAAAAAAAAAAAAAAAAA");
    bot.tap(ALICE, 4242, mid, &approve);
    let acks = bot.wait_calls("answerCallbackQuery", 4).await;
    assert!(
        acks[0]["text"]
            .as_str()
            .unwrap()
            .contains("not an approver")
    );
    for a in &acks[1..4] {
        assert!(
            a["text"]
                .as_str()
                .unwrap()
                .contains("not a valid airlock button"),
            "{a}"
        );
    }
    assert_eq!(b.pending().await.unwrap().len(), 1, "nothing was decided");
    let refusals = b.ledger().db().chat_refusals("telegram:ops").await.unwrap();
    let whats: Vec<&str> = refusals.iter().map(|r| r.what.as_str()).collect();
    assert_eq!(whats, ["not_approver", "forged", "forged", "forged"]);
    assert_eq!(refusals[0].user_id, MALLORY.to_string());
    // and each is a receipt naming the channel, the platform user and the approval
    let id = b.pending().await.unwrap().remove(0).id;
    let refused = refusal_receipts(&b).await;
    assert_eq!(refused.len(), 4, "{refused:?}");
    let (r, payload) = &refused[0];
    assert_eq!(r.event, Some(airlock_ledger::EventKind::Refusal));
    assert_eq!(r.decision, airlock_core::Decision::Deny);
    assert_eq!(r.principal, format!("telegram:ops/user={MALLORY}"));
    assert_eq!(r.reasons[0].code, "ANSWER_REFUSED");
    assert_eq!(r.reasons[0].rule, "chat.refused.not_approver");
    assert_eq!(payload["user_id"], MALLORY.to_string());
    assert_eq!(payload["channel"], "telegram:ops");
    assert_eq!(payload["approval"], id.as_str());

    // alice denies; then the same deny replayed, and the approve tapped after it
    bot.tap(ALICE, CHAT, mid, &deny);
    let ruling = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .unwrap()
        .unwrap();
    assert!(!ruling.allowed());
    bot.tap(ALICE, CHAT, mid, &deny);
    bot.tap(ALICE, CHAT, mid, &approve);
    let acks = bot.wait_calls("answerCallbackQuery", 7).await;
    assert!(
        acks[4]["text"]
            .as_str()
            .unwrap()
            .contains("Denied by alice")
    );
    for a in &acks[5..7] {
        assert!(
            a["text"].as_str().unwrap().contains("Already decided"),
            "{a}"
        );
    }
    let a = b.history(1).await.unwrap().remove(0);
    assert_eq!(a.status, ApprovalStatus::Denied);
    assert_eq!(a.decided_by.as_deref(), Some("alice"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_tap_is_refused_and_shown_as_expired() {
    let bot = Bot::start().await;
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, "n1").await;
    let _tg = Telegram::start(b.clone(), config(&bot.url), Routes::new())
        .await
        .unwrap();
    let waiter = ask(&b, "s1", "late thing");
    let m = bot.wait_calls("sendMessage", 1).await.remove(0);
    let ruling = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .unwrap()
        .unwrap();
    assert!(!ruling.allowed(), "silence denies");
    // the expiry closes the message by itself
    let edits = bot.wait_calls("editMessageText", 1).await;
    assert!(edits[0]["text"].as_str().unwrap().contains("Expired"));
    bot.tap(
        ALICE,
        CHAT,
        message_id(&m, 0),
        &button(&m, "Approve once").unwrap(),
    );
    let acks = bot.wait_calls("answerCallbackQuery", 1).await;
    assert!(
        acks[0]["text"].as_str().unwrap().contains("Too late"),
        "{}",
        acks[0]
    );
    let a = b.history(1).await.unwrap().remove(0);
    assert_eq!(a.status, ApprovalStatus::Expired);
    let refusals = b.ledger().db().chat_refusals("telegram:ops").await.unwrap();
    assert_eq!(refusals.last().unwrap().what, "late");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tier_four_has_no_approve_button_and_needs_the_code_typed() {
    let bot = Bot::start().await;
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, "n1").await;
    let _tg = Telegram::start(b.clone(), config(&bot.url), Routes::new())
        .await
        .unwrap();
    let waiter = ask(&b, "s1", "tier4 drop database");
    let m = bot.wait_calls("sendMessage", 1).await.remove(0);
    assert!(button(&m, "Approve").is_none(), "{m}");
    let deny = button(&m, "Deny").unwrap();
    let a = only_pending(&b).await;
    let code = b.deliberate_code(&a.action_sha256);
    let text = m["text"].as_str().unwrap();
    assert!(text.contains(&format!("/approve {code}")), "{text}");
    // an approve tap made with the deny button's nonce does not verify; a stranger's typed
    // code is refused
    bot.tap(ALICE, CHAT, message_id(&m, 0), &deny.replace(".d.", ".o."));
    bot.say(MALLORY, CHAT, &format!("/approve {code}"));
    let replies = bot.wait_calls("sendMessage", 2).await;
    assert!(
        replies[1]["text"]
            .as_str()
            .unwrap()
            .contains("not an approver")
    );
    assert_eq!(b.pending().await.unwrap().len(), 1);
    // alice types it (lower case, addressed to the bot)
    bot.say(
        ALICE,
        CHAT,
        &format!("/approve@airlock_bot {}", code.to_lowercase()),
    );
    let ruling = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ruling, Ruling::Allow);
    let edits = bot.wait_calls("editMessageText", 1).await;
    assert!(
        edits[0]["text"]
            .as_str()
            .unwrap()
            .contains("Approved once by alice in Telegram")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_deny_with_a_reason() {
    let bot = Bot::start().await;
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, "n1").await;
    let _tg = Telegram::start(b.clone(), config(&bot.url), Routes::new())
        .await
        .unwrap();
    let waiter = ask(&b, "s1", "tier3 push --force");
    let m = bot.wait_calls("sendMessage", 1).await.remove(0);
    let text = m["text"].as_str().unwrap();
    let code = text
        .rsplit("/deny ")
        .next()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    bot.say(ALICE, CHAT, &format!("/deny {code} not on a Friday"));
    let ruling = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .unwrap()
        .unwrap();
    assert!(!ruling.allowed());
    let a = b.history(1).await.unwrap().remove(0);
    assert_eq!(a.reason.as_deref(), Some("not on a Friday"));
    assert_eq!(a.decided_by.as_deref(), Some("alice"));
    // an unknown code is answered, not guessed
    bot.say(ALICE, CHAT, "/approve ZZZZZZ");
    let replies = bot.wait_calls("sendMessage", 3).await;
    assert!(
        replies[2]["text"]
            .as_str()
            .unwrap()
            .contains("No request with code ZZZZZZ")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_409_and_a_dropped_poll_are_survived() {
    let bot = Bot::start().await;
    bot.seen.lock().unwrap().conflicts = 2;
    bot.seen.lock().unwrap().drops = 1;
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, "n1").await;
    let _tg = Telegram::start(b.clone(), config(&bot.url), Routes::new())
        .await
        .unwrap();
    let waiter = ask(&b, "s1", "tier3 deploy");
    let m = bot.wait_calls("sendMessage", 1).await.remove(0);
    bot.tap(
        ALICE,
        CHAT,
        message_id(&m, 0),
        &button(&m, "Approve once").unwrap(),
    );
    let ruling = tokio::time::timeout(Duration::from_secs(15), waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ruling, Ruling::Allow);
    let polls = bot.calls("getUpdates");
    assert!(
        polls.len() >= 4,
        "two conflicts, one drop, then the poll that got the tap"
    );
    let s = bot.seen.lock().unwrap();
    assert_eq!((s.conflicts, s.drops), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_keeps_pending_messages_and_the_offset() {
    let bot = Bot::start().await;
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, "n1").await;
    let tg = Telegram::start(b.clone(), config(&bot.url), Routes::new())
        .await
        .unwrap();
    let id = b.submit(sub("s1", "tier3 migrate")).await.unwrap().id;
    let m = bot.wait_calls("sendMessage", 1).await.remove(0);
    // a stranger's tap is consumed before the restart: the offset moves past it
    bot.tap(
        MALLORY,
        CHAT,
        message_id(&m, 0),
        &button(&m, "Deny").unwrap(),
    );
    bot.wait_calls("answerCallbackQuery", 1).await;
    for _ in 0..100 {
        if b.ledger()
            .db()
            .chat_offset_get(&config(&bot.url).bot_key())
            .await
            .unwrap()
            .is_some()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(tg);
    b.shutdown().await;
    // while airlock is down, another approval is opened from the store's point of view
    let b = broker_at(d.path(), None, "n1").await;
    let id2 = b.submit(sub("s2", "tier3 second")).await.unwrap().id;
    let tg = Telegram::start(b.clone(), config(&bot.url), Routes::new())
        .await
        .unwrap();
    let sent = bot.wait_calls("sendMessage", 2).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(
        bot.calls("sendMessage").len(),
        2,
        "the first is not sent again"
    );
    assert!(sent[1]["text"].as_str().unwrap().contains("tier3 second"));
    // the tap from before the restart is not handled twice
    assert_eq!(bot.calls("answerCallbackQuery").len(), 1);
    bot.tap(
        ALICE,
        CHAT,
        message_id(&m, 0),
        &button(&m, "Approve once").unwrap(),
    );
    bot.wait_calls("answerCallbackQuery", 2).await;
    assert_eq!(
        b.approval(&id).await.unwrap().status,
        ApprovalStatus::Approved
    );
    assert_eq!(
        b.approval(&id2).await.unwrap().status,
        ApprovalStatus::Pending
    );
    drop(tg);
    b.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_poller_per_token_and_a_takeover_on_postgres() {
    let Some(pg) = airlock_testkit::PgDb::create().await else {
        eprintln!("PostgreSQL not reachable: skipped");
        return;
    };
    let bot = Bot::start().await;
    // Two nodes on one PostgreSQL (one data directory holds the ledger keys of both).
    let d = tempfile::tempdir().unwrap();
    let b1 = broker_at(d.path(), Some(pg.url.clone()), "n1").await;
    let b2 = broker_at(d.path(), Some(pg.url.clone()), "n2").await;
    let t1 = Telegram::start(b1.clone(), config(&bot.url), Routes::new())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let t2 = Telegram::start(b2.clone(), config(&bot.url), Routes::new())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(t1.is_polling() && !t2.is_polling(), "one node polls");
    // an approval opened on node 2 is sent once, by node 1
    let waiter = ask(&b2, "s1", "tier3 on node two");
    let m = bot.wait_calls("sendMessage", 1).await.remove(0);
    // node 1 dies: node 2 takes over and handles the tap, releasing its own waiter
    drop(t1);
    b1.shutdown().await;
    for _ in 0..100 {
        if t2.is_polling() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(t2.is_polling(), "node 2 took over");
    bot.tap(
        ALICE,
        CHAT,
        message_id(&m, 0),
        &button(&m, "Approve once").unwrap(),
    );
    let ruling = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ruling, Ruling::Allow);
    assert_eq!(bot.calls("sendMessage").len(), 1);
    drop(t2);
    b2.shutdown().await;
}

/// Tap → agent released, against answering the same kind of approval through the broker (the
/// inbox's and the terminal's path), alternated in one run. Prints the medians and spreads;
/// `cargo test -p airlock-chat --release --test telegram -- --ignored --nocapture tap_to_release`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, run by hand"]
async fn tap_to_release() {
    let bot = Bot::start().await;
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, "n1").await;
    let mut c = config(&bot.url);
    c.poll_timeout = Duration::from_secs(2);
    let _tg = Telegram::start(b.clone(), c, Routes::new()).await.unwrap();
    let (mut chat, mut direct) = (Vec::new(), Vec::new());
    for i in 0..40 {
        // chat: the tap lands in the long poll; measured from the tap to the waiter's ruling
        let waiter = ask(&b, &format!("c{i}"), &format!("tier3 deploy {i}"));
        // every request is posted (the direct ones too): find this one; ids count from 2
        let want = format!("$ tier3 deploy {i}\n");
        let (k, m) = loop {
            let sent = bot.calls("sendMessage");
            if let Some((k, m)) = sent
                .iter()
                .enumerate()
                .find(|(_, m)| m["text"].as_str().unwrap_or("").contains(&want))
            {
                break (k, m.clone());
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        let m = &m;
        let mid = i64::try_from(k).unwrap() + 2;
        let data = button(m, "Approve once").unwrap();
        let t = std::time::Instant::now();
        bot.tap(ALICE, CHAT, mid, &data);
        assert_eq!(waiter.await.unwrap(), Ruling::Allow);
        chat.push(t.elapsed());
        // direct: the same through Broker::answer
        let id = b
            .submit(sub(&format!("d{i}"), &format!("tier3 direct {i}")))
            .await
            .unwrap()
            .id;
        let b2 = b.clone();
        let w = tokio::spawn(async move { b2.wait(&id, Duration::from_secs(30)).await.unwrap() });
        let id = b
            .pending()
            .await
            .unwrap()
            .into_iter()
            .find(|a| a.session == format!("d{i}"))
            .unwrap()
            .id;
        let t = std::time::Instant::now();
        let mut ans = airlock_confirm::Answer {
            by: airlock_confirm::Principal::new("alice", airlock_confirm::Role::Approver),
            decision: airlock_confirm::Choice::Approve,
            scope: airlock_confirm::AnswerScope::Once,
            reason: String::new(),
            code: None,
            action_sha256: None,
            via: None,
        };
        ans.reason.clear();
        b.answer(&id, ans).await.unwrap();
        let o = w.await.unwrap();
        assert_eq!(o.status, airlock_confirm::Status::Allowed);
        direct.push(t.elapsed());
    }
    let stats = |v: &mut Vec<Duration>| {
        v.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        (
            ms(v[v.len() / 10]),
            ms(v[v.len() / 2]),
            ms(v[v.len() * 9 / 10]),
        )
    };
    let (c10, c50, c90) = stats(&mut chat);
    let (d10, d50, d90) = stats(&mut direct);
    println!("tap→released via Telegram: p10 {c10:.1} ms, median {c50:.1} ms, p90 {c90:.1} ms");
    println!(
        "answer→released via Broker::answer: p10 {d10:.1} ms, median {d50:.1} ms, p90 {d90:.1} ms"
    );
}

/// Approves `command` with a tap on its message (the `n`th message sent, 0-based).
async fn tap_approve(bot: &Bot, b: &Broker, command: &str, n: usize) -> Ruling {
    let waiter = ask(b, "s1", command);
    let m = bot.wait_calls("sendMessage", n + 1).await.remove(n);
    assert!(m["text"].as_str().unwrap().contains(command), "{m}");
    bot.tap(
        ALICE,
        CHAT,
        message_id(&m, n),
        &button(&m, "Approve once").unwrap(),
    );
    tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_of_approvals_offers_a_grant_one_tap_accepts() {
    learned_in_chat(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn learned_in_chat_on_postgres() {
    let Some(pg) = airlock_testkit::PgDb::create().await else {
        eprintln!("PostgreSQL not reachable: skipped");
        return;
    };
    learned_in_chat(Some(pg.url.clone())).await;
}

async fn learned_in_chat(database: Option<String>) {
    let bot = Bot::start().await;
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), database, "n1").await;
    let _tg = Telegram::start(b.clone(), config(&bot.url), Routes::new())
        .await
        .unwrap();
    assert_eq!(
        tap_approve(&bot, &b, "tier3 deploy web-1", 0).await,
        Ruling::Allow
    );
    assert_eq!(
        tap_approve(&bot, &b, "tier3 deploy web-2", 1).await,
        Ruling::Allow
    );
    assert_eq!(
        tap_approve(&bot, &b, "tier3 deploy web-3", 2).await,
        Ruling::Allow
    );
    // the third approval in a row: one message offers the learned grant, with one button
    let offer = bot.wait_calls("sendMessage", 4).await.remove(3);
    let text = offer["text"].as_str().unwrap();
    assert!(
        text.contains("3 approvals in a row") && text.contains("prefix: tier3 deploy"),
        "{text}"
    );
    let accept = button(&offer, "Allow for 7 days").unwrap();
    // a stranger's tap on it is refused; alice's creates the grant
    bot.tap(MALLORY, CHAT, message_id(&offer, 3), &accept);
    bot.tap(ALICE, CHAT, message_id(&offer, 3), &accept);
    let acks = bot.wait_calls("answerCallbackQuery", 5).await;
    assert!(
        acks[3]["text"]
            .as_str()
            .unwrap()
            .contains("not an approver")
    );
    let granted = acks[4]["text"].as_str().unwrap();
    assert!(granted.starts_with("Granted"), "{granted}");
    let grants = b
        .book()
        .list(&airlock_grants::ListFilter::default())
        .await
        .unwrap();
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0].creator.to_string(), "person:alice");
    // the next of its kind is allowed without a message
    let ruling = b
        .decide_and_wait(sub("s2", "tier3 deploy web-4"), Duration::from_secs(5))
        .await;
    assert_eq!(ruling, Ruling::Allow);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(bot.calls("sendMessage").len(), 4, "nobody was asked");
    b.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_for_a_person_in_crisis_is_approved_once_at_a_time() {
    let bot = Bot::start().await;
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), None, "n1").await;
    let _tg = Telegram::start(b.clone(), config(&bot.url), Routes::new())
        .await
        .unwrap();
    let origin = airlock_confirm::Origin {
        agent: "claude".into(),
        session: "s1".into(),
    };
    b.mark_crisis(&origin, "hook:claude", "crisis.x")
        .await
        .unwrap();
    let mut s = sub("s1", "-");
    s.action = airlock_core::Action::MessageSend {
        channel: "sms".into(),
        recipient: "+15550001".into(),
        body: "I am worried about you".into(),
    };
    let b2 = b.clone();
    let waiter = tokio::spawn(async move { b2.decide_and_wait(s, Duration::from_secs(40)).await });
    let m = bot.wait_calls("sendMessage", 1).await.remove(0);
    assert!(button(&m, "For this session").is_none(), "{m}");
    let once = button(&m, "Approve once").unwrap();
    // a session tap forged from the once button does not verify
    bot.tap(ALICE, CHAT, message_id(&m, 0), &once.replace(".o.", ".s."));
    bot.tap(ALICE, CHAT, message_id(&m, 0), &once);
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .unwrap()
            .unwrap(),
        Ruling::Allow
    );
    let a = b.history(1).await.unwrap().remove(0);
    assert_eq!(a.scope, Some(airlock_confirm::AnswerScope::Once));
    assert_eq!(a.grant, None);
    // no grant is offered however often it is approved
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(bot.calls("sendMessage").len(), 1);
    b.shutdown().await;
}

/// The index (in sending order) of the first sent message with a button labelled `label`.
fn sent_with(bot: &Bot, label: &str, skip: usize) -> Option<(usize, Value)> {
    bot.calls("sendMessage")
        .into_iter()
        .enumerate()
        .filter(|(_, m)| button(m, label).is_some())
        .nth(skip)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_pending_approvals_are_answered_together_each_on_its_own() {
    answered_together(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answered_together_on_postgres() {
    let Some(pg) = airlock_testkit::PgDb::create().await else {
        eprintln!("PostgreSQL not reachable: skipped");
        return;
    };
    answered_together(Some(pg.url.clone())).await;
}

async fn answered_together(database: Option<String>) {
    let bot = Bot::start().await;
    let d = tempfile::tempdir().unwrap();
    let b = broker_at(d.path(), database, "n1").await;
    let _tg = Telegram::start(b.clone(), config(&bot.url), Routes::new().with_batch(3))
        .await
        .unwrap();
    let mut waiters = Vec::new();
    let mut sent = 0;
    // two of session s1, a tier-4 one of s1 (never in a summary), one of s2
    for (session, command) in [
        ("s1", "tier3 rotate web-1"),
        ("s1", "tier4 drop table"),
        ("s2", "tier3 other session"),
        ("s1", "tier3 rotate web-2"),
    ] {
        waiters.push(ask(&b, session, command));
        sent += 1;
        bot.wait_calls("sendMessage", sent).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        sent_with(&bot, "Approve all", 0).is_none(),
        "two are not enough"
    );
    // the third of s1 below tier 4: its message, then one summary of the three
    waiters.push(ask(&b, "s1", "tier3 rotate web-3"));
    bot.wait_calls("sendMessage", 6).await;
    let (i, first) = sent_with(&bot, "Approve all 3", 0).expect("a summary");
    let text = first["text"].as_str().unwrap();
    assert!(
        text.contains("3 pending from claude (session s1)"),
        "{text}"
    );
    assert!(
        !text.contains("tier4") && !text.contains("other session"),
        "{text}"
    );
    // a fourth replaces it with a summary of four
    waiters.push(ask(&b, "s1", "tier3 rotate web-4"));
    bot.wait_calls("sendMessage", 8).await;
    let (j, second) = sent_with(&bot, "Approve all 4", 0).expect("a newer summary");
    for _ in 0..100 {
        let replaced = bot.calls("editMessageText").iter().any(|e| {
            e["message_id"] == message_id(&first, i)
                && e["text"].as_str().unwrap().contains("Replaced")
        });
        if replaced {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // the old summary answers nothing; a stranger's tap on the new one is refused
    bot.tap(
        ALICE,
        CHAT,
        message_id(&first, i),
        &button(&first, "Approve all").unwrap(),
    );
    bot.tap(
        MALLORY,
        CHAT,
        message_id(&second, j),
        &button(&second, "Approve all").unwrap(),
    );
    let acks = bot.wait_calls("answerCallbackQuery", 2).await;
    assert!(
        acks[0]["text"].as_str().unwrap().contains("replaced"),
        "{}",
        acks[0]
    );
    assert!(
        acks[1]["text"]
            .as_str()
            .unwrap()
            .contains("not an approver")
    );
    assert_eq!(b.pending().await.unwrap().len(), 6);
    // alice approves all four with one tap
    bot.tap(
        ALICE,
        CHAT,
        message_id(&second, j),
        &button(&second, "Approve all").unwrap(),
    );
    let acks = bot.wait_calls("answerCallbackQuery", 3).await;
    assert_eq!(acks[2]["text"], "Approved 4 by alice");
    let mut rulings = Vec::new();
    for (k, w) in waiters.into_iter().enumerate() {
        if k == 1 || k == 2 {
            w.abort();
            continue;
        }
        rulings.push(
            tokio::time::timeout(Duration::from_secs(10), w)
                .await
                .unwrap()
                .unwrap(),
        );
    }
    assert_eq!(rulings, vec![Ruling::Allow; 4]);
    // each answered and recorded on its own; the tier-4 one and the other session still wait
    let left = b.pending().await.unwrap();
    assert_eq!(left.len(), 2, "{left:?}");
    for a in b.history(4).await.unwrap() {
        assert_eq!(a.decided_by.as_deref(), Some("alice"));
        assert!(
            a.answered_via.as_deref().unwrap().ends_with("/batch"),
            "{a:?}"
        );
        let r = receipt(&b, &a.id).await;
        assert_eq!(r.approvers, ["alice"]);
        assert_eq!(r.decision, airlock_core::Decision::Allow);
    }
    // the summary shows the result, without buttons
    for _ in 0..100 {
        if bot.calls("editMessageText").iter().any(|e| {
            e["message_id"] == message_id(&second, j) && e["text"] == "Approved 4 by alice"
        }) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(bot.calls("editMessageText").iter().any(|e| {
        e["message_id"] == message_id(&second, j) && e["text"] == "Approved 4 by alice"
    }));
    b.shutdown().await;
}
