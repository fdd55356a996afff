//! Answers in each agent's own shape. The decision vocabulary is airlock's (`Decision`); this file
//! is the only place that translates it to a dialect, and the only place that words the reason
//! the model reads: what was blocked, which rule, why, and what to do instead.

use airlock_core::{Assessment, Decision, Finding, ReasonCode, Severity, Tier};
use serde::Serialize;

use crate::input::{InputError, bounded};
use crate::protocol::{Protocol, Stage};
use crate::tools::{HookVerdict, Subject};

/// Exit code that Claude Code, Codex, Gemini CLI and Copilot all treat as "block this tool
/// call", used when no dialect could be told and so no JSON answer can be shaped.
pub const EXIT_BLOCK: u8 = 2;

/// What the hook process writes and how it exits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookAnswer {
    pub stdout: String,
    pub stderr: String,
    pub exit: u8,
}

/// Findings listed in full in a reason; the rest are counted.
const MAX_LISTED: usize = 3;
/// Longest message or remediation quoted from one finding.
const MAX_TEXT: usize = 600;

/// The answer for a decided tool call.
pub fn answer(protocol: Protocol, v: &HookVerdict) -> HookAnswer {
    answer_with(protocol, v, None)
}

/// [`answer`], with a replacement tool input for an allowed Claude Code call (`updatedInput`:
/// the command rewritten to run under `airlock run`). Ignored for other dialects and decisions.
pub fn answer_with(
    protocol: Protocol,
    v: &HookVerdict,
    updated_input: Option<serde_json::Map<String, serde_json::Value>>,
) -> HookAnswer {
    let a = &v.assessment;
    let reason = reason_text(protocol, v);
    let notice = (a.decision != Decision::Allow).then(|| notice(protocol, v));
    let stdout = match protocol {
        Protocol::Claude | Protocol::Codex => {
            // Codex rejects `allow` without a rewrite and has no `ask`: its allow is an empty
            // answer, and what needs a person is refused with that said in the reason.
            let decision = match (protocol, a.decision) {
                (Protocol::Codex, Decision::Allow) => None,
                (Protocol::Codex, _) => Some(Decision::Deny),
                (_, d) => Some(d),
            };
            match decision {
                None => "{}".to_string(),
                Some(d) => to_json(&ClaudeAnswer {
                    hook_specific_output: ClaudeSpecific {
                        hook_event_name: "PreToolUse",
                        permission_decision: d.as_str(),
                        updated_input: updated_input
                            .filter(|_| protocol == Protocol::Claude && d == Decision::Allow),
                        permission_decision_reason: reason,
                    },
                    system_message: notice,
                }),
            }
        }
        Protocol::Gemini => to_json(&GeminiAnswer {
            decision: a.decision.as_str(),
            reason: (a.decision != Decision::Allow).then_some(reason),
            system_message: notice,
        }),
        Protocol::Copilot => to_json(&CopilotAnswer {
            permission_decision: a.decision.as_str(),
            permission_decision_reason: (a.decision != Decision::Allow).then_some(reason),
        }),
    };
    HookAnswer {
        stdout,
        stderr: String::new(),
        exit: 0,
    }
}

/// The answer to input that could not be read: a deny in the dialect's and event's shape when
/// both are known (a prompt refused, a tool output treated as untrusted: `turn::reply::refuse`);
/// exit 2 with the reason on stderr when the event is not known, which every agent but Copilot
/// reads as a block at every stage (Copilot, whose only answered event is the tool call, gets
/// its deny). Never an allow.
pub fn refuse(err: &InputError) -> HookAnswer {
    let line = format!("airlock hook: {}: {}", err.code, err.message);
    match (err.protocol, err.stage) {
        (Some(p), Some(s @ (Stage::Prompt | Stage::Output))) => {
            crate::turn::reply::refuse(err, p, s)
        }
        (Some(p), stage) if stage.is_some() || p == Protocol::Copilot => {
            let finding = Finding::new(
                "hook.input",
                err.code,
                Decision::Deny,
                Tier::Safe,
                Severity::High,
                format!("{}.", err.message),
            )
            .with_remediation(if err.code == ReasonCode::InternalError {
                "This is a bug in airlock; please report it with the hook input."
            } else {
                "Check the hook configuration (`airlock hook install <agent>` prints a working \
                 entry) and that the agent sends its documented hook JSON."
            });
            let v = HookVerdict {
                tool: String::new(),
                subject: Subject::Unreadable,
                assessment: Assessment::from_findings(vec![finding], Decision::Deny),
            };
            let mut a = answer(p, &v);
            a.stderr = format!("{line}\n");
            a
        }
        _ => HookAnswer {
            stdout: String::new(),
            stderr: format!("{line}\nairlock hook: blocking (exit {EXIT_BLOCK})\n"),
            exit: EXIT_BLOCK,
        },
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ClaudeAnswer {
    hook_specific_output: ClaudeSpecific,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_message: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ClaudeSpecific {
    hook_event_name: &'static str,
    permission_decision: &'static str,
    permission_decision_reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated_input: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GeminiAnswer {
    decision: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_message: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CopilotAnswer {
    permission_decision: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    permission_decision_reason: Option<String>,
}

fn to_json<T: Serialize>(v: &T) -> String {
    // Serialising these plain structs cannot fail; should it ever, an empty object would read as
    // "no decision", so fall back to a bare deny instead.
    serde_json::to_string(v).unwrap_or_else(|_| {
        r#"{"decision":"deny","permissionDecision":"deny","reason":"airlock: internal error"}"#
            .to_string()
    })
}

/// "Bash `ls -la`", "Write `~/.ssh/config`", "the tool `Foo`".
fn what(v: &HookVerdict) -> String {
    let tool = bounded(&v.tool);
    match &v.subject {
        Subject::Command(c) => format!("{tool} `{}`", bounded(c)),
        Subject::Paths(ps) => {
            let shown: Vec<String> = ps
                .iter()
                .take(3)
                .map(|p| format!("`{}`", bounded(p)))
                .collect();
            let more = ps.len().saturating_sub(3);
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            format!("{tool} {}{tail}", shown.join(", "))
        }
        Subject::Tool => format!("the `{tool}` call"),
        Subject::Unreadable => "this tool call".to_string(),
    }
}

/// The reason the model reads.
fn reason_text(protocol: Protocol, v: &HookVerdict) -> String {
    let a = &v.assessment;
    let what = what(v);
    let mut out = match (a.decision, protocol, &v.subject) {
        (_, _, Subject::Unreadable) => {
            "airlock blocked this tool call: it could not read the hook input.".to_string()
        }
        (Decision::Allow, _, _) => format!("airlock allowed {what} ({}).", tier(a.tier)),
        (Decision::Deny, _, _) => format!("airlock blocked {what} ({}).", tier(a.tier)),
        (Decision::Ask, Protocol::Codex, _) => format!(
            "airlock blocked {what}: it needs a person's approval ({}), and Codex hooks \
             cannot ask for one.",
            tier(a.tier)
        ),
        (Decision::Ask, _, _) => format!(
            "airlock needs a person to confirm {what} ({}).",
            tier(a.tier)
        ),
    };
    for f in a.reasons.iter().take(MAX_LISTED) {
        out.push_str(&format!(
            "\n- {} [{}, {}]: {}",
            f.rule_id,
            f.code,
            f.decision,
            clip(&f.message)
        ));
        if !f.remediation.is_empty() {
            out.push_str(&format!("\n  Remediation: {}", clip(&f.remediation)));
        }
    }
    let more = a.reasons.len().saturating_sub(MAX_LISTED);
    if more > 0 {
        out.push_str(&format!("\n- and {more} more finding(s)."));
    }
    match (a.decision, protocol) {
        (Decision::Allow, _) => {}
        (Decision::Ask, Protocol::Codex) => out.push_str(
            "\nAsk the user to run it themselves or to approve it explicitly; do not retry it in \
             another form.",
        ),
        (Decision::Ask, _) => {}
        (Decision::Deny, _) => out.push_str(
            "\nDo not retry this in another form; choose a safer way or ask the user to do it.",
        ),
    }
    out
}

/// One line for the person watching the agent. Codex's ask is a deny (its hooks cannot ask), and
/// the line says so rather than "asks about".
fn notice(protocol: Protocol, v: &HookVerdict) -> String {
    let rule = v
        .assessment
        .reasons
        .first()
        .map(|f| format!(" ({})", f.rule_id))
        .unwrap_or_default();
    let what = what(v);
    match (v.assessment.decision, protocol) {
        (Decision::Ask, Protocol::Codex) => format!(
            "airlock blocked {what}{rule}: it needs a person's approval, which a Codex hook cannot ask for"
        ),
        (Decision::Deny, _) => format!("airlock blocked {what}{rule}"),
        (Decision::Ask, _) => format!("airlock asks about {what}{rule}"),
        (Decision::Allow, _) => format!("airlock allowed {what}{rule}"),
    }
}

/// `AIRLOCK_ASK=deny`: an ask nobody took (no daemon answered) is denied with a reason, for runs
/// where nobody can answer the agent's own prompt (Gemini CLI's `-p` runs turn an `ask` into a
/// prompt and wait for ever). Any other value, or none, keeps the agent's own prompt.
pub fn deny_unanswered_asks() -> bool {
    std::env::var("AIRLOCK_ASK").is_ok_and(|v| v == "deny")
}

/// The verdict of an ask that nobody can answer in this run: a deny with `NOBODY_TO_ASK`.
pub fn nobody_to_ask(mut v: HookVerdict) -> HookVerdict {
    let f = Finding::new(
        "hook.nobody_to_ask",
        ReasonCode::NobodyToAsk,
        Decision::Deny,
        v.assessment.tier,
        Severity::High,
        "this needs a person's approval, and this run has nobody to ask (AIRLOCK_ASK=deny; run \
         `airlock serve` to have a person answer through the inbox)",
    )
    .with_remediation(
        "Ask the user to run it themselves or to approve it in an interactive session.",
    );
    v.assessment.reasons.insert(0, f);
    v.assessment.decision = Decision::Deny;
    v
}

fn tier(t: Tier) -> String {
    format!("tier {} {}", t.as_u8(), t.name())
}

fn clip(s: &str) -> String {
    if s.chars().count() <= MAX_TEXT {
        return s.to_string();
    }
    let mut out: String = s.chars().take(MAX_TEXT).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn verdict(d: Decision) -> HookVerdict {
        let f = Finding::new(
            "paths.ssh",
            ReasonCode::SensitivePath,
            d,
            Tier::High,
            Severity::High,
            "m",
        )
        .with_remediation("r");
        HookVerdict {
            tool: "Write".into(),
            subject: Subject::Paths(vec!["~/.ssh/config".into()]),
            assessment: if d == Decision::Allow {
                Assessment::allow()
            } else {
                Assessment::from_findings(vec![f], d)
            },
        }
    }

    fn json(a: &HookAnswer) -> Value {
        serde_json::from_str(&a.stdout).unwrap_or(Value::Null)
    }

    #[test]
    fn no_dialect_ever_reads_allow_for_deny_or_ask() {
        for p in Protocol::ALL {
            for d in [Decision::Deny, Decision::Ask] {
                let a = answer(p, &verdict(d));
                let s = a.stdout.to_lowercase();
                assert!(!s.contains("\"allow\""), "{p:?} {d:?}: {s}");
                assert_eq!(a.exit, 0);
            }
        }
    }

    #[test]
    fn codex_turns_ask_into_deny_and_allow_into_nothing() {
        let a = answer(Protocol::Codex, &verdict(Decision::Ask));
        assert_eq!(json(&a)["hookSpecificOutput"]["permissionDecision"], "deny");
        assert!(a.stdout.contains("cannot ask"));
        assert_eq!(
            answer(Protocol::Codex, &verdict(Decision::Allow)).stdout,
            "{}"
        );
    }

    #[test]
    fn reason_names_rule_code_and_remediation() {
        let a = answer(Protocol::Gemini, &verdict(Decision::Deny));
        let r = json(&a)["reason"].as_str().unwrap_or("").to_string();
        assert!(r.contains("paths.ssh"));
        assert!(r.contains("SENSITIVE_PATH"));
        assert!(r.contains("Remediation: r"));
        assert!(r.contains("`~/.ssh/config`"));
    }

    /// The wire shape of an allow with a rewritten input (Claude Code's `updatedInput`), and
    /// that no other dialect or decision carries it.
    #[test]
    fn updated_input_only_on_a_claude_allow() {
        let mut m = serde_json::Map::new();
        m.insert("command".into(), "airlock run -- bash -c ls".into());
        let v = HookVerdict {
            tool: "Bash".into(),
            subject: Subject::Command("ls".into()),
            assessment: Assessment::allow(),
        };
        let a = answer_with(Protocol::Claude, &v, Some(m.clone()));
        assert_eq!(
            a.stdout,
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"airlock allowed Bash `ls` (tier 0 safe).","updatedInput":{"command":"airlock run -- bash -c ls"}}}"#
        );
        for p in [Protocol::Codex, Protocol::Gemini, Protocol::Copilot] {
            assert!(
                !answer_with(p, &v, Some(m.clone()))
                    .stdout
                    .contains("updatedInput")
            );
        }
        let ask = verdict(Decision::Ask);
        assert!(
            !answer_with(Protocol::Claude, &ask, Some(m))
                .stdout
                .contains("updatedInput")
        );
    }

    #[test]
    fn unknown_dialect_refuses_with_exit_2() {
        let e = InputError {
            code: ReasonCode::MalformedInput,
            message: "bad".into(),
            protocol: None,
            stage: None,
        };
        let a = refuse(&e);
        assert_eq!(a.exit, EXIT_BLOCK);
        assert!(a.stdout.is_empty());
        assert!(a.stderr.contains("MALFORMED_INPUT"));
    }
}
