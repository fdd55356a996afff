//! Events: what the ledger records beside the decisions on agents' actions, each as one typed
//! [`Event`] whose receipt says it is an event (`event` on the receipt, an
//! [`airlock_ledger::EventKind`]), so `ledger verify` and `ledger replay` tell it from a
//! decision by type. Every surface records events through [`record`] (or
//! `Broker::record_event`): a scanner's verdict, a tool call refused before the policy, a
//! request refused for its budget, a person's re-approval of an MCP tool, a grant's life cycle,
//! a session entering or leaving crisis mode.
//!
//! A receipt carries hashes, never texts: an event's arguments hold a text's SHA-256, and the
//! canonical arguments are stored beside the receipt as its payload (a tool-shaped action
//! named for the event, as before events were marked, so older readers still read them).

use airlock_core::{Action, Assessment, Decision, Finding, ReasonCode, Severity, Tier};
use airlock_ledger::canonical::sha256_hex;
use airlock_ledger::{EventKind, LedgerError, Receipt};
use airlock_store::{AppendRequest, Ledger, LedgerStore};
use serde_json::{Value, json};

use crate::ConfirmError;
use crate::broker::Broker;
use crate::receipt::{RecordContext, request};

/// The session a person's pin approvals are recorded in.
pub const PIN_SESSION: &str = "mcp-pins";
/// The session grant events are recorded in.
pub const GRANT_SESSION: &str = "grants";
/// The session refused chat answers are recorded in.
pub const CHAT_SESSION: &str = "chat";

/// An agent's side of an event: whose traffic it was, in which session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub agent: String,
    pub session: String,
}

/// A verdict of the text scanner as the ledger records it: its label (`CLEAN`,
/// `INJECTION_DETECTED`, …) and, when it flagged the text, its reason code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanVerdict {
    pub label: String,
    /// `None` when the text is clean.
    pub flag: Option<ReasonCode>,
}

impl ScanVerdict {
    /// The ledger's record of a verdict of airlock's text scanner.
    pub fn of(v: airlock_shield::TextVerdict) -> ScanVerdict {
        let flag = match v {
            _ if v.is_clean() => None,
            airlock_shield::TextVerdict::JailbreakDetected => Some(ReasonCode::TextJailbreak),
            airlock_shield::TextVerdict::InjectionDetected => Some(ReasonCode::TextInjection),
            _ => Some(ReasonCode::TextCrisis),
        };
        ScanVerdict {
            label: v.as_str().to_string(),
            flag,
        }
    }
}

/// What happened to a grant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantChange {
    Add,
    Confirm,
    Revoke,
    EndSession,
}

impl GrantChange {
    pub fn as_str(self) -> &'static str {
        match self {
            GrantChange::Add => "add",
            GrantChange::Confirm => "confirm",
            GrantChange::Revoke => "revoke",
            GrantChange::EndSession => "end_session",
        }
    }
}

/// A session's crisis mode changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrisisChange {
    /// A crisis verdict on the person's text put the session in crisis mode.
    Set,
    /// An approver ended it.
    Clear,
}

impl CrisisChange {
    pub fn as_str(self) -> &'static str {
        match self {
            CrisisChange::Set => "set",
            CrisisChange::Clear => "clear",
        }
    }
}

/// One event for the ledger.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A verdict on text from `source` (an MCP server's answer, or what a client of
    /// `POST /v1/scan` names): denied when a flagged text is blocked, allowed otherwise.
    Scan {
        origin: Origin,
        source: String,
        /// `tool`, `user`, … (the scanner's direction, as its wire name).
        direction: String,
        text_sha256: String,
        verdict: ScanVerdict,
        /// What the surface does with a flagged text: `annotate`, `block`, …
        handling: String,
    },
    /// A verdict of the proxy's inbound scanner on one message (`role` user or tool).
    InboundText {
        origin: Origin,
        role: String,
        text_sha256: String,
        verdict: ScanVerdict,
        handling: String,
        blocked: bool,
    },
    /// The inbound texts of one request the scanner found clean: (role, SHA-256) each.
    CleanTexts {
        origin: Origin,
        texts: Vec<(String, String)>,
    },
    /// The privacy filter's findings in a request bound for a remote model: per value its rule,
    /// its kind (`secret` or `personal`) and a salted hash (the salt never leaves the process,
    /// so a short value cannot be guessed from the ledger); never the value.
    Privacy {
        origin: Origin,
        /// Where the request was going (`proxy`, `mcp:<server>:sampling`).
        surface: String,
        /// (rule id, kind, salted SHA-256) per value.
        findings: Vec<(String, String, String)>,
        /// `placeholder` or `refuse`.
        handling: String,
        refused: bool,
    },
    /// A tool call refused before the policy saw it: its arguments were unusable.
    Refusal {
        origin: Origin,
        tool: String,
        /// The raw arguments; only their hash is recorded.
        arguments: String,
        /// The surface's refusal (`MALFORMED_ARGUMENTS`, …), which names the rule.
        what: String,
        reason: String,
    },
    /// A model request refused because the agent's budget for the period is spent.
    BudgetRefusal {
        origin: Origin,
        period_start_ms: i64,
        message: String,
    },
    /// `person` approved definition `approved_sha256` of a quarantined MCP tool.
    PinApproval {
        person: String,
        server: String,
        tool: String,
        approved_sha256: String,
        previous_sha256: String,
    },
    /// A tool's output as airlock saw it (an MCP result, a proxied tool message), by its
    /// SHA-256, with the drift from its declared output schema when there is one.
    ToolOutput {
        origin: Origin,
        /// The tool as the policy names it (`mcp__<server>__<tool>`, a proxied function).
        tool: String,
        output_sha256: String,
        /// Whether the policy declares an output schema for the tool.
        declared: bool,
        /// `Policy::check_output`'s finding (deny: withheld; allow: passed flagged).
        drift: Option<Finding>,
    },
    /// A grant's life cycle, caused by `person`.
    Grant {
        person: String,
        change: GrantChange,
        /// The grant (or what changed), as the receipt's payload.
        details: Value,
        grant: Option<String>,
    },
    /// A tap or typed answer in a chat channel refused before the broker decided anything: by
    /// someone not on the channel's approver list (`not_approver`), with a forged or moved
    /// button, an unknown code, too late, or a second answer (`what`).
    ChatRefusal {
        /// `telegram:ops`, `slack:ops`, …
        channel: String,
        /// The platform's id of whoever tapped or typed.
        user: String,
        chat: String,
        /// The approval the answer was for, when the button or code named one.
        approval: Option<String>,
        what: String,
    },
    /// `session` entered crisis mode (`who` is the agent whose traffic it was) or an approver
    /// (`who`) ended it. `source` and `rule` are the mark's: the surface and the scanner's rule.
    Crisis {
        session: String,
        who: String,
        change: CrisisChange,
        source: String,
        rule: String,
    },
}

impl Event {
    /// A scanner's verdict on `text` (recorded by its hash) from `source`.
    pub fn scan(
        origin: Origin,
        source: &str,
        direction: airlock_shield::Direction,
        text: &str,
        verdict: airlock_shield::TextVerdict,
        handling: &str,
    ) -> Event {
        let direction = match direction {
            airlock_shield::Direction::User => "user",
            airlock_shield::Direction::Tool => "tool",
        };
        Event::Scan {
            origin,
            source: source.to_string(),
            direction: direction.to_string(),
            text_sha256: sha256_hex(text.as_bytes()),
            verdict: ScanVerdict::of(verdict),
            handling: handling.to_string(),
        }
    }

    pub fn kind(&self) -> EventKind {
        match self {
            Event::Scan { .. }
            | Event::InboundText { .. }
            | Event::CleanTexts { .. }
            | Event::Privacy { .. } => EventKind::Scan,
            Event::Refusal { .. } | Event::ChatRefusal { .. } => EventKind::Refusal,
            Event::BudgetRefusal { .. } => EventKind::BudgetRefusal,
            Event::PinApproval { .. } => EventKind::PinApproval,
            Event::Grant { .. } => EventKind::Grant,
            Event::ToolOutput { .. } => EventKind::ToolOutput,
            Event::Crisis { .. } => EventKind::Crisis,
        }
    }

    /// The tool-shaped action the receipt signs (its arguments are the payload).
    fn action(&self) -> Action {
        let (tool, arguments) = match self {
            Event::Scan {
                source,
                direction,
                text_sha256,
                verdict,
                handling,
                ..
            } => (
                "airlock.scan".to_string(),
                json!({
                    "source": source,
                    "direction": direction,
                    "text_sha256": text_sha256,
                    "verdict": verdict.label,
                    "handling": scan_handling(verdict, handling),
                }),
            ),
            Event::InboundText {
                role,
                text_sha256,
                verdict,
                handling,
                ..
            } => (
                "airlock.proxy.inbound_text".to_string(),
                json!({
                    "role": role,
                    "text_sha256": text_sha256,
                    "verdict": verdict.label,
                    "handling": handling,
                }),
            ),
            Event::CleanTexts { texts, .. } => {
                let scanned: Vec<_> = texts
                    .iter()
                    .map(
                        |(role, sha)| json!({"role": role, "text_sha256": sha, "verdict": "CLEAN"}),
                    )
                    .collect();
                (
                    "airlock.proxy.inbound_text".to_string(),
                    json!({ "scanned": scanned, "handling": "forward" }),
                )
            }
            Event::Privacy {
                surface,
                findings,
                handling,
                ..
            } => (
                "airlock.privacy".to_string(),
                json!({
                    "surface": surface,
                    "handling": handling,
                    "found": findings
                        .iter()
                        .map(|(rule, kind, hash)| json!({"rule": rule, "kind": kind, "salted_sha256": hash}))
                        .collect::<Vec<_>>(),
                }),
            ),
            Event::Refusal {
                tool, arguments, ..
            } => (
                tool.clone(),
                json!({ "unparsed_sha256": sha256_hex(arguments.as_bytes()) }),
            ),
            Event::BudgetRefusal {
                period_start_ms, ..
            } => (
                "airlock.proxy.request".to_string(),
                json!({ "budget_period_start_ms": period_start_ms }),
            ),
            Event::PinApproval {
                server,
                tool,
                approved_sha256,
                previous_sha256,
                ..
            } => (
                "airlock.mcp.approve_tool".to_string(),
                json!({
                    "server": server,
                    "tool": tool,
                    "approved_sha256": approved_sha256,
                    "previous_sha256": previous_sha256,
                }),
            ),
            Event::Grant {
                change, details, ..
            } => (
                format!("airlock.grant.{}", change.as_str()),
                details.clone(),
            ),
            Event::ToolOutput {
                tool,
                output_sha256,
                declared,
                drift,
                ..
            } => (
                tool.clone(),
                json!({
                    "output_sha256": output_sha256,
                    "output_schema": match (declared, drift) {
                        (false, _) => "undeclared",
                        (true, None) => "match",
                        (true, Some(_)) => "drift",
                    },
                }),
            ),
            Event::ChatRefusal {
                channel,
                user,
                chat,
                approval,
                what,
            } => (
                "airlock.chat.refusal".to_string(),
                json!({
                    "channel": channel,
                    "user_id": user,
                    "chat": chat,
                    "approval": approval,
                    "what": what,
                }),
            ),
            Event::Crisis {
                change,
                source,
                rule,
                ..
            } => (
                format!("airlock.crisis.{}", change.as_str()),
                json!({ "source": source, "rule": rule }),
            ),
        };
        Action::Tool { tool, arguments }
    }

    /// The decision and the reasons the receipt records.
    fn assessment(&self) -> Assessment {
        match self {
            Event::Scan {
                source,
                verdict,
                handling,
                ..
            } => match verdict.flag {
                None => Assessment::allow(),
                Some(code) => {
                    let decision = if handling == "block" {
                        Decision::Deny
                    } else {
                        Decision::Allow
                    };
                    flagged(
                        "scan",
                        verdict,
                        code,
                        decision,
                        format!("text from {source}: {} ({handling})", verdict.label),
                    )
                }
            },
            Event::InboundText {
                role,
                verdict,
                handling,
                blocked,
                ..
            } => {
                let decision = if *blocked {
                    Decision::Deny
                } else {
                    Decision::Allow
                };
                flagged(
                    "proxy.scan",
                    verdict,
                    verdict.flag.unwrap_or(ReasonCode::TextCrisis),
                    decision,
                    format!("inbound {role} text: {} ({handling})", verdict.label),
                )
            }
            Event::CleanTexts { .. } => Assessment::allow(),
            Event::Privacy {
                surface,
                findings,
                handling,
                refused,
                ..
            } => {
                let secret = findings.iter().any(|(_, k, _)| k == "secret");
                let (code, tier, severity) = if secret {
                    (ReasonCode::PrivacySecret, Tier::High, Severity::High)
                } else {
                    (ReasonCode::PrivacyPersonal, Tier::Medium, Severity::Medium)
                };
                let decision = if *refused {
                    Decision::Deny
                } else {
                    Decision::Allow
                };
                let mut rules: Vec<&str> = findings.iter().map(|(r, _, _)| r.as_str()).collect();
                rules.sort_unstable();
                rules.dedup();
                one(
                    format!("privacy.{handling}"),
                    code,
                    decision,
                    tier,
                    severity,
                    format!(
                        "{} value(s) bound for {surface} ({}): {handling}",
                        findings.len(),
                        rules.join(", ")
                    ),
                )
            }
            Event::Refusal { what, reason, .. } => one(
                format!("proxy.{}", what.to_ascii_lowercase()),
                ReasonCode::MalformedInput,
                Decision::Deny,
                Tier::Medium,
                Severity::Medium,
                reason.clone(),
            ),
            Event::BudgetRefusal { message, .. } => one(
                "proxy.budget_exceeded".into(),
                ReasonCode::BudgetExceeded,
                Decision::Deny,
                Tier::Low,
                Severity::Low,
                message.clone(),
            ),
            Event::PinApproval {
                person,
                server,
                tool,
                ..
            } => one(
                "mcp.tool_reapproved".into(),
                ReasonCode::Approved,
                Decision::Allow,
                Tier::High,
                Severity::Medium,
                format!("{person} approved the changed definition of {tool} ({server})"),
            ),
            Event::ChatRefusal {
                channel,
                user,
                approval,
                what,
                ..
            } => one(
                format!("chat.refused.{what}"),
                ReasonCode::AnswerRefused,
                Decision::Deny,
                Tier::Medium,
                Severity::Medium,
                format!(
                    "{channel}: an answer by platform user {user} to {} was refused ({what})",
                    approval.as_deref().unwrap_or("no known approval")
                ),
            ),
            Event::Grant { person, change, .. } => one(
                format!("grant.{}", change.as_str()),
                ReasonCode::GrantEvent,
                Decision::Allow,
                Tier::Safe,
                Severity::Info,
                format!("grant {} by {person}", change.as_str()),
            ),
            Event::ToolOutput { drift: None, .. } => Assessment::allow(),
            Event::ToolOutput { drift: Some(f), .. } => {
                Assessment::from_findings(vec![f.clone()], f.decision)
            }
            Event::Crisis {
                who,
                change: CrisisChange::Set,
                source,
                rule,
                ..
            } => one(
                "crisis.session_set".into(),
                ReasonCode::SessionCrisis,
                Decision::Allow,
                Tier::Safe,
                Severity::High,
                format!("crisis verdict from {source} ({rule}) on {who}'s session: crisis mode"),
            ),
            Event::Crisis {
                who,
                change: CrisisChange::Clear,
                ..
            } => one(
                "crisis.session_cleared".into(),
                ReasonCode::CrisisCleared,
                Decision::Allow,
                Tier::Safe,
                Severity::Info,
                format!("{who} ended the session's crisis mode"),
            ),
        }
    }

    /// Who and what the receipt is about beyond the action.
    fn context(&self) -> RecordContext {
        let (principal, session, approvers, grant) = match self {
            Event::Scan { origin, .. }
            | Event::InboundText { origin, .. }
            | Event::CleanTexts { origin, .. }
            | Event::Privacy { origin, .. }
            | Event::Refusal { origin, .. }
            | Event::BudgetRefusal { origin, .. }
            | Event::ToolOutput { origin, .. } => {
                (origin.agent.clone(), origin.session.clone(), vec![], None)
            }
            Event::PinApproval { person, .. } => (
                person.clone(),
                PIN_SESSION.to_string(),
                vec![person.clone()],
                None,
            ),
            Event::Grant { person, grant, .. } => (
                person.clone(),
                GRANT_SESSION.to_string(),
                vec![person.clone()],
                grant.clone(),
            ),
            Event::ChatRefusal { channel, user, .. } => (
                format!("{channel}/user={user}"),
                CHAT_SESSION.to_string(),
                vec![],
                None,
            ),
            Event::Crisis {
                session,
                who,
                change,
                ..
            } => {
                let approvers = match change {
                    CrisisChange::Set => vec![],
                    CrisisChange::Clear => vec![who.clone()],
                };
                (who.clone(), session.clone(), approvers, None)
            }
        };
        RecordContext {
            request_id: None,
            session,
            principal,
            policy_sha256: event_policy(self.rule_set()),
            grant,
            approvers,
            output_sha256: match self {
                Event::ToolOutput { output_sha256, .. } => Some(output_sha256.clone()),
                _ => None,
            },
        }
    }

    /// What the receipt names as its policy: the fixed rule that produced the event.
    fn rule_set(&self) -> String {
        match self {
            Event::Scan {
                verdict, handling, ..
            } => format!("scan:{}", scan_handling(verdict, handling)),
            Event::InboundText { handling, .. } => format!("scan:{handling}"),
            Event::CleanTexts { .. } => "scan:clean".into(),
            Event::Privacy { handling, .. } => format!("privacy:{handling}"),
            Event::Refusal { .. } => "tool-call-arguments".into(),
            Event::BudgetRefusal { .. } => "budget".into(),
            Event::PinApproval { .. } => "mcp-pin-approval".into(),
            Event::Grant { .. } => "grant-event".into(),
            Event::ChatRefusal { .. } => "chat-answer".into(),
            Event::ToolOutput { drift, .. } => match drift.as_ref().map(|f| f.decision) {
                Some(Decision::Deny) => "output-contract:deny".into(),
                Some(_) => "output-contract:flag".into(),
                None => "output-contract".into(),
            },
            Event::Crisis { change, .. } => format!("crisis:{}", change.as_str()),
        }
    }
}

/// A clean text is forwarded whatever the surface does with flagged ones.
fn scan_handling<'a>(verdict: &ScanVerdict, handling: &'a str) -> &'a str {
    if verdict.flag.is_none() {
        "forward"
    } else {
        handling
    }
}

/// The policy hash of an event's receipt: the hash of the fixed rule that produced it (the
/// proxy's own receipts named theirs so before events had a type).
fn event_policy(rule_set: String) -> String {
    sha256_hex(format!("airlock-proxy:{rule_set}").as_bytes())
}

fn one(
    rule: String,
    code: ReasonCode,
    decision: Decision,
    tier: Tier,
    severity: Severity,
    message: String,
) -> Assessment {
    Assessment::from_findings(
        vec![Finding::new(rule, code, decision, tier, severity, message)],
        decision,
    )
}

fn flagged(
    prefix: &str,
    verdict: &ScanVerdict,
    code: ReasonCode,
    decision: Decision,
    message: String,
) -> Assessment {
    one(
        format!("{prefix}.{}", verdict.label.to_ascii_lowercase()),
        code,
        decision,
        Tier::Medium,
        Severity::Medium,
        message,
    )
}

/// The append request for one event: its receipt carries `event` and a fresh request id.
pub fn event_request(event: &Event) -> Result<AppendRequest, LedgerError> {
    let mut req = request(&event.action(), &event.assessment(), &event.context())?;
    req.receipt.event = Some(event.kind());
    Ok(req)
}

/// Records one event in `ledger`; returns once its receipt is durable.
pub async fn record(ledger: &Ledger, event: &Event) -> Result<Receipt, ConfirmError> {
    Ok(ledger.append(event_request(event)?).await?)
}

impl Broker {
    /// Records one event in the broker's ledger; returns its receipt's id.
    pub async fn record_event(&self, event: &Event) -> Result<String, ConfirmError> {
        Ok(record(self.ledger(), event).await?.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin {
        Origin {
            agent: "a".into(),
            session: "s".into(),
        }
    }

    #[test]
    fn every_event_is_marked_and_names_its_tool() {
        let flagged = ScanVerdict {
            label: "INJECTION_DETECTED".into(),
            flag: Some(ReasonCode::TextInjection),
        };
        let events = [
            Event::Scan {
                origin: origin(),
                source: "mcp:fs:tools/call".into(),
                direction: "tool".into(),
                text_sha256: "0".repeat(64),
                verdict: flagged.clone(),
                handling: "block".into(),
            },
            Event::Refusal {
                origin: origin(),
                tool: "Bash".into(),
                arguments: "{".into(),
                what: "MALFORMED_ARGUMENTS".into(),
                reason: "not JSON".into(),
            },
            Event::Grant {
                person: "person:ann".into(),
                change: GrantChange::Revoke,
                details: json!({"id": "g-1"}),
                grant: Some("g-1".into()),
            },
        ];
        for e in &events {
            let r = event_request(e).unwrap().receipt;
            assert_eq!(r.event, Some(e.kind()));
            assert!(r.tool.is_some());
        }
        let scan = event_request(&events[0]).unwrap().receipt;
        assert_eq!(scan.decision, Decision::Deny, "a blocked flagged text");
        assert_eq!(scan.reasons[0].code, "TEXT_INJECTION");
        let grant = event_request(&events[2]).unwrap().receipt;
        assert_eq!(grant.tool.as_deref(), Some("airlock.grant.revoke"));
        assert_eq!(grant.session, GRANT_SESSION);
        assert_eq!(grant.grant.as_deref(), Some("g-1"));
    }

    #[test]
    fn a_tool_output_receipt_carries_its_hash_and_drift() {
        let sha = sha256_hex(b"{}");
        let clean = Event::ToolOutput {
            origin: origin(),
            tool: "mcp__w__now".into(),
            output_sha256: sha.clone(),
            declared: false,
            drift: None,
        };
        let r = event_request(&clean).unwrap().receipt;
        assert_eq!(r.event, Some(EventKind::ToolOutput));
        assert_eq!(r.output_sha256.as_deref(), Some(sha.as_str()));
        assert_eq!(r.decision, Decision::Allow);
        let drift = Finding::new(
            "policy.output_schema_drift",
            ReasonCode::OutputSchemaDrift,
            Decision::Deny,
            Tier::High,
            Severity::High,
            "drift",
        );
        let denied = Event::ToolOutput {
            origin: origin(),
            tool: "mcp__w__now".into(),
            output_sha256: sha.clone(),
            declared: true,
            drift: Some(drift),
        };
        let r = event_request(&denied).unwrap().receipt;
        assert_eq!(r.decision, Decision::Deny);
        assert_eq!(r.reasons[0].code, "OUTPUT_SCHEMA_DRIFT");
        assert_eq!(r.output_sha256.as_deref(), Some(sha.as_str()));
    }
}
