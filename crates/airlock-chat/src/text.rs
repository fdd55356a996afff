//! What a chat message says: the request (command, tier, analysis, the reviewer's view, time
//! left, how to answer) and, once decided, the outcome (who, where, how) with no live buttons.
//! Plain text only: the action is the agent's text and must not be read as markup.

use airlock_confirm::{Approval, ApprovalStatus};
use airlock_core::Action;

/// Telegram's limit is 4096 characters; the request's parts are cut well below it.
const MAX_ACTION: usize = 1500;
const MAX_REASONS: usize = 5;

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out: String = s.chars().take(n).collect();
    out.push('…');
    out
}

/// The action in one or a few lines.
pub fn action_line(a: &Action) -> String {
    let s = match a {
        Action::Shell { command, .. } => format!("$ {command}"),
        Action::Tool { tool, arguments } => format!("tool {tool} {arguments}"),
        Action::FileWrite { path, edit, .. } => {
            format!("{} {path}", if *edit { "edit" } else { "write" })
        }
        Action::NetworkFetch { url, method } => format!("{method} {url}"),
        Action::MessageSend {
            channel, recipient, ..
        } => format!("message to {recipient} on {channel}"),
    };
    cut(&s, MAX_ACTION)
}

/// `YYYY-MM-DD HH:MM` (UTC) of unix ms `ms`.
pub fn when(ms: i64) -> String {
    let min = ms.div_euclid(60_000).rem_euclid(24 * 60);
    format!(
        "{} {:02}:{:02}",
        airlock_confirm::stats::day_of(ms),
        min / 60,
        min % 60
    )
}

/// The offer of a learned grant: what it covers, for whom, how long, and why.
pub fn learn_offer(l: &airlock_confirm::Learned, days: i64) -> String {
    format!(
        "airlock: {} approvals in a row of this kind of action by {}.

Allow {} for {} for {days} days without asking? (tier 4 and decisions for a person in crisis are always asked; revoke with airlock grant revoke)",
        l.approvals,
        l.agent,
        l.scope.describe(),
        l.agent
    )
}

/// A session's summary: how many wait, and each in a line, with the approve-all question.
pub fn batch(members: &[Approval]) -> String {
    let Some(first) = members.first() else {
        return String::new();
    };
    let mut out = format!(
        "airlock: {} pending from {} (session {}): approve all?\n",
        members.len(),
        first.agent,
        cut(&first.session, 40)
    );
    for (i, a) in members.iter().enumerate() {
        out.push_str(&format!(
            "\n{}. {} (tier {})",
            i + 1,
            cut(&action_line(&a.action), 200),
            a.tier as u8
        ));
    }
    out.push_str("\n\nEach is answered and recorded on its own; tier 4 and decisions for a person in crisis are never in a summary.");
    out
}

/// The request: what, how risky, why, time left at `now_ms`, and how to answer with `code`
/// (`cmd` starts a typed command: `/` in Telegram and Discord, `/airlock ` in Slack).
pub fn request(a: &Approval, code: &str, now_ms: i64, cmd: &str) -> String {
    let mut out = format!(
        "airlock: {} asks (tier {}, session {})\n\n{}\n",
        a.agent,
        a.tier as u8,
        cut(&a.session, 40),
        action_line(&a.action)
    );
    if !a.reasons.is_empty() {
        out.push_str("\nWhy it asks:\n");
        for f in a.reasons.iter().take(MAX_REASONS) {
            out.push_str(&format!(
                "• {} ({})\n",
                cut(&f.message, 200),
                f.code.as_str()
            ));
        }
    }
    if let Some(r) = &a.llm {
        out.push_str(&format!(
            "\nReviewer: {}{}\n",
            r.result.as_str(),
            if r.rationale.is_empty() {
                String::new()
            } else {
                format!(" ({})", cut(&r.rationale, 300))
            }
        ));
    }
    let left = (a.deadline_ms - now_ms).max(0) / 1000;
    out.push_str(&format!("\nTime left: {left} s; silence denies.\n"));
    if a.code_required {
        out.push_str(&format!(
            "Tier 4: to approve, type {cmd}approve {code} (no button approves this). To deny: {cmd}deny {code} reason"
        ));
    } else {
        out.push_str(&format!(
            "Or type {cmd}approve {code} or {cmd}deny {code} reason"
        ));
    }
    out
}

/// Where an answer was given, for people: "in Telegram", "in the inbox or terminal".
pub fn place(via: Option<&str>) -> String {
    match via.and_then(|v| v.split(':').next()) {
        Some("telegram") => "in Telegram".into(),
        Some("discord") => "in Discord".into(),
        Some("slack") => "in Slack".into(),
        Some(other) => format!("in {other}"),
        None => "in the inbox or terminal".into(),
    }
}

/// The outcome line that replaces the buttons.
pub fn outcome(a: &Approval) -> String {
    let who = a.decided_by.clone().unwrap_or_default();
    let reason = a
        .reason
        .as_deref()
        .filter(|r| !r.is_empty())
        .map(|r| format!(": {}", cut(r, 200)))
        .unwrap_or_default();
    match a.status {
        ApprovalStatus::Approved | ApprovalStatus::Locked => {
            let scope = match a.scope {
                Some(airlock_confirm::AnswerScope::Session) => " for the session",
                _ => " once",
            };
            let lock = if a.status == ApprovalStatus::Locked {
                " (time lock running)"
            } else {
                ""
            };
            if who.starts_with("llm:") {
                format!("✅ Approved by the reviewer{lock}")
            } else {
                format!(
                    "✅ Approved{scope} by {who} {}{lock}",
                    place(a.answered_via.as_deref())
                )
            }
        }
        ApprovalStatus::Denied => {
            if who.starts_with("llm:") {
                format!("❌ Denied by the reviewer{reason}")
            } else {
                format!(
                    "❌ Denied by {who} {}{reason}",
                    place(a.answered_via.as_deref())
                )
            }
        }
        ApprovalStatus::Expired => "⌛ Expired: nobody answered in time, so it was denied".into(),
        ApprovalStatus::Cancelled => format!("🚫 Cancelled by {who}{reason}"),
        ApprovalStatus::Pending => "⏳ Waiting".into(),
    }
}

/// A chain step's notice: a request is waiting and nobody answered yet.
pub fn waiting(a: &Approval, now_ms: i64, inbox: Option<&str>) -> String {
    let left = (a.deadline_ms - now_ms).max(0) / 1000;
    format!(
        "airlock: tier {} request from {} waits, {left} s left, nobody answered: {}{}",
        a.tier as u8,
        a.agent,
        cut(&action_line(&a.action), 300),
        inbox
            .map(|u| format!(" — answer at {u}"))
            .unwrap_or_default()
    )
}

/// A timeout's notice: nobody answered, so it was denied.
pub fn timed_out(a: &Approval) -> String {
    format!(
        "⌛ airlock: nobody answered the tier {} request from {} in time; it was denied: {}",
        a.tier as u8,
        a.agent,
        cut(&action_line(&a.action), 300)
    )
}

/// `s` cut to at most `max` characters (keeping its end, where the answer instructions are).
pub fn fit(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let tail: String = s.chars().skip(n - max / 2).collect();
    let head: String = s.chars().take(max / 2 - 2).collect();
    format!("{head}…\n{tail}")
}
