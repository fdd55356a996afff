//! What the templates show, as plain strings: approvals and grants turned into display
//! values (the templates escape them; nothing here is markup).

use airlock_confirm::{Approval, Broker, LlmReview};
use airlock_core::Action;
use airlock_grants::Grant;
use airlock_ledger::time::format_millis;

pub struct ReasonView {
    pub rule: String,
    pub code: String,
    pub message: String,
}

pub struct ApprovalView {
    pub id: String,
    pub agent: String,
    pub session: String,
    pub summary: String,
    pub summary_short: String,
    pub action_sha256: String,
    pub tier: u8,
    pub tier_name: &'static str,
    pub reasons: Vec<ReasonView>,
    pub llm: Option<String>,
    pub suggestion: Option<String>,
    pub status: &'static str,
    /// The tier-4 code the approver must type.
    pub code: Option<String>,
    pub deadline_ms: i64,
    pub effective_ms: Option<i64>,
    pub decided_by: Option<String>,
    pub reason: Option<String>,
    pub receipt: Option<String>,
    pub created: String,
}

pub struct GrantView {
    pub id: String,
    pub agent: String,
    pub session: String,
    pub scope: String,
    pub uses: String,
    pub expires: String,
    pub status: String,
    pub revocable: bool,
}

/// A readable rendering of an action (bounded: a huge tool argument list is cut).
pub fn describe(action: &Action) -> String {
    let s = match action {
        Action::Shell { command, cwd } => match cwd {
            Some(d) => format!("$ {command}\n(in {d})"),
            None => format!("$ {command}"),
        },
        Action::Tool { tool, arguments } => format!(
            "tool {tool}\n{}",
            serde_json::to_string_pretty(arguments).unwrap_or_default()
        ),
        Action::FileWrite {
            path,
            content,
            edit,
        } => format!(
            "{} {path}\n{}",
            if *edit { "edit" } else { "write" },
            content.as_deref().unwrap_or("")
        ),
        Action::NetworkFetch { url, method } => format!("{method} {url}"),
        Action::MessageSend {
            channel,
            recipient,
            body,
        } => format!("message to {recipient} on {channel}\n{body}"),
    };
    cut(&s, 4000)
}

fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

fn llm_text(l: &LlmReview) -> String {
    let mut s = l.result.as_str().to_string();
    let mut about = Vec::new();
    if !l.model.is_empty() {
        about.push(l.model.clone());
    }
    if let Some(r) = l.risk {
        about.push(format!("risk {r:.2}"));
    }
    if !about.is_empty() {
        s.push_str(&format!(" ({})", about.join(", ")));
    }
    for part in [Some(&l.rationale), l.error.as_ref()].into_iter().flatten() {
        if !part.is_empty() {
            s.push_str(": ");
            s.push_str(part);
        }
    }
    s
}

/// `2026-11-22 20:16:07 UTC`.
fn when(ms: i64) -> String {
    let t = format_millis(ms);
    format!("{} UTC", t.get(..19).unwrap_or(&t).replace('T', " "))
}

impl ApprovalView {
    /// The card of `a`, with its tier-4 code (keyed by the broker's secret) when it needs one
    /// and `broker` is given (not on a link's page: a link cannot approve tier 4).
    pub fn new(a: &Approval, broker: Option<&Broker>) -> Self {
        let summary = describe(&a.action);
        let first_line = summary.lines().next().unwrap_or("");
        ApprovalView {
            id: a.id.clone(),
            agent: a.agent.clone(),
            session: a.session.clone(),
            summary_short: cut(first_line, 120),
            summary,
            action_sha256: a.action_sha256.clone(),
            tier: u8::from(a.tier),
            tier_name: a.tier.name(),
            reasons: a
                .reasons
                .iter()
                .map(|f| ReasonView {
                    rule: f.rule_id.clone(),
                    code: f.code.as_str().to_string(),
                    message: f.message.clone(),
                })
                .collect(),
            llm: a.llm.as_ref().map(llm_text),
            suggestion: a.suggestion.clone(),
            status: a.status.as_str(),
            code: broker
                .filter(|_| a.code_required)
                .map(|b| b.deliberate_code(&a.action_sha256)),
            deadline_ms: a.deadline_ms,
            effective_ms: a.effective_ms,
            decided_by: a.decided_by.clone(),
            reason: a.reason.clone(),
            receipt: a.receipt.clone(),
            created: when(a.created_ms),
        }
    }
}

impl GrantView {
    pub fn new(g: &Grant, now: i64) -> Self {
        let status = if g.revoked_at.is_some() {
            "revoked".to_string()
        } else if g.expires_at <= now {
            "expired".to_string()
        } else if g.remaining() == 0 {
            "used up".to_string()
        } else {
            g.status.as_str().to_string()
        };
        GrantView {
            id: g.id.clone(),
            agent: g.subject.agent.clone(),
            session: g.subject.session.clone().unwrap_or_else(|| "any".into()),
            scope: g.scope.describe(),
            uses: format!("{} of {}", g.uses, g.max_uses),
            expires: when(g.expires_at),
            revocable: g.revoked_at.is_none() && g.expires_at > now,
            status,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_characters_whole() {
        assert_eq!(cut("abc", 10), "abc");
        assert_eq!(cut("ééé", 3), "é…");
        assert_eq!(cut("abcdef", 3), "abc…");
    }

    #[test]
    fn describes_each_kind() {
        let shell = Action::Shell {
            command: "ls".into(),
            cwd: Some("/w".into()),
        };
        assert_eq!(describe(&shell), "$ ls\n(in /w)");
        let tool = Action::Tool {
            tool: "Read".into(),
            arguments: serde_json::json!({"file_path": "a"}),
        };
        assert!(describe(&tool).starts_with("tool Read\n{"));
        let fetch = Action::NetworkFetch {
            url: "https://x".into(),
            method: "GET".into(),
        };
        assert_eq!(describe(&fetch), "GET https://x");
        assert_eq!(when(0), "1970-01-01 00:00:00 UTC");
    }
}
