//! Decisions, tiers and severities, and the rule that the strictest finding wins.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::Finding;

/// What happens to an action. The order is the point: `Allow < Ask < Deny`, and combining
/// findings always keeps the strictest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }

    /// Parses the lowercase wire name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "allow" => Some(Decision::Allow),
            "ask" => Some(Decision::Ask),
            "deny" => Some(Decision::Deny),
            _ => None,
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Risk tier 0–4; it decides who must confirm and how fast (see the design map).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub enum Tier {
    /// Read, search, list: nobody confirms.
    Safe = 0,
    /// Writes inside the workspace.
    Low = 1,
    /// Messages, external API calls.
    Medium = 2,
    /// Deploys, configuration, credentials, force-push.
    High = 3,
    /// System destruction.
    Critical = 4,
}

impl Tier {
    pub const ALL: [Tier; 5] = [
        Tier::Safe,
        Tier::Low,
        Tier::Medium,
        Tier::High,
        Tier::Critical,
    ];

    pub fn as_u8(self) -> u8 {
        self as u8
    }

    pub fn name(self) -> &'static str {
        match self {
            Tier::Safe => "safe",
            Tier::Low => "low",
            Tier::Medium => "medium",
            Tier::High => "high",
            Tier::Critical => "critical",
        }
    }
}

impl TryFrom<u8> for Tier {
    type Error = String;
    fn try_from(v: u8) -> Result<Self, Self::Error> {
        Tier::ALL
            .get(usize::from(v))
            .copied()
            .ok_or_else(|| format!("tier must be 0-4, got {v}"))
    }
}

impl From<Tier> for u8 {
    fn from(t: Tier) -> u8 {
        t.as_u8()
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.as_u8(), self.name())
    }
}

/// How bad a finding is, independent of what the policy decides to do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Low,
    Medium,
    High,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }
}

/// The outcome of assessing one action: a decision, the tier that decides who confirms, and
/// every reason behind it (strictest first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assessment {
    pub decision: Decision,
    pub tier: Tier,
    pub reasons: Vec<Finding>,
}

impl Assessment {
    /// An allow at tier 0 with no reasons.
    pub fn allow() -> Self {
        Assessment {
            decision: Decision::Allow,
            tier: Tier::Safe,
            reasons: Vec::new(),
        }
    }

    /// Combines findings: the decision and the tier are the strictest among them; an empty list
    /// is `default`. Reasons are ordered strictest first, stable otherwise.
    pub fn from_findings(mut reasons: Vec<Finding>, default: Decision) -> Self {
        let decision = reasons
            .iter()
            .map(|f| f.decision)
            .max()
            .unwrap_or(default)
            .max(default);
        let tier = reasons.iter().map(|f| f.tier).max().unwrap_or(Tier::Safe);
        reasons.sort_by(|a, b| b.decision.cmp(&a.decision).then(b.tier.cmp(&a.tier)));
        Assessment {
            decision,
            tier,
            reasons,
        }
    }

    /// Adds a finding, keeping the strictest decision and tier.
    pub fn push(&mut self, f: Finding) {
        self.decision = self.decision.max(f.decision);
        self.tier = self.tier.max(f.tier);
        let at = self
            .reasons
            .iter()
            .position(|r| (r.decision, r.tier) < (f.decision, f.tier))
            .unwrap_or(self.reasons.len());
        self.reasons.insert(at, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ReasonCode;

    fn f(d: Decision, t: Tier) -> Finding {
        Finding::new("t.x", ReasonCode::RuleMatch, d, t, Severity::Low, "m")
    }

    #[test]
    fn strictest_wins() {
        let a = Assessment::from_findings(
            vec![f(Decision::Ask, Tier::High), f(Decision::Deny, Tier::Low)],
            Decision::Allow,
        );
        assert_eq!(a.decision, Decision::Deny);
        assert_eq!(a.tier, Tier::High);
        assert_eq!(a.reasons[0].decision, Decision::Deny);
    }

    #[test]
    fn empty_uses_default() {
        let a = Assessment::from_findings(vec![], Decision::Ask);
        assert_eq!(a.decision, Decision::Ask);
        assert_eq!(a.tier, Tier::Safe);
    }

    #[test]
    fn push_keeps_order() {
        let mut a = Assessment::allow();
        a.push(f(Decision::Ask, Tier::Low));
        a.push(f(Decision::Deny, Tier::Critical));
        a.push(f(Decision::Allow, Tier::Safe));
        assert_eq!(a.decision, Decision::Deny);
        assert_eq!(a.tier, Tier::Critical);
        let ds: Vec<_> = a.reasons.iter().map(|r| r.decision).collect();
        assert_eq!(ds, vec![Decision::Deny, Decision::Ask, Decision::Allow]);
    }

    #[test]
    fn tier_serde_is_a_number() {
        assert_eq!(
            serde_json::to_string(&Tier::High).ok().as_deref(),
            Some("3")
        );
        assert!(serde_json::from_str::<Tier>("5").is_err());
        assert_eq!(Decision::parse("ask"), Some(Decision::Ask));
    }
}
