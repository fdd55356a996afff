//! The settings of the stacked layers, merged: what each tier requires (who confirms, timeout,
//! deliberate confirmation, time lock), risk weights and per-channel thresholds, profiles. The
//! user layer replaces built-in values; the project and managed layers only move a value toward
//! strictness (a stronger confirmer, a shorter timeout, a lower threshold, a narrower profile).

use std::collections::BTreeMap;
use std::time::Duration;

use airlock_core::{Severity, Tier};
use serde::Serialize;

use crate::file::{Confirmers, PolicyFile, Profile};
use crate::layer::LayerKind;

/// Where a request came from, for risk thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    Terminal,
    Chat,
    Api,
}

impl Channel {
    pub fn parse(s: &str) -> Option<Channel> {
        match s {
            "terminal" => Some(Channel::Terminal),
            "chat" => Some(Channel::Chat),
            "api" => Some(Channel::Api),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Terminal => "terminal",
            Channel::Chat => "chat",
            Channel::Api => "api",
        }
    }
}

/// What confirming an action at a tier takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Requirement {
    pub confirm: Confirmers,
    /// No answer within this time denies.
    #[serde(with = "secs")]
    pub timeout: Duration,
    /// The person types a short code derived from the action's hash.
    pub deliberate: bool,
    /// An approval takes effect after this long and can be cancelled until then.
    #[serde(with = "secs")]
    pub time_lock: Duration,
}

mod secs {
    use serde::Serializer;
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_secs())
    }
}

/// The merged settings.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    pub tiers: [Requirement; 5],
    pub weights: BTreeMap<Severity, u32>,
    pub production_weight: u32,
    pub per_recent_denial: u32,
    pub thresholds: BTreeMap<Channel, u32>,
    pub profile: Profile,
    pub max_profile: Profile,
    pub agents: BTreeMap<String, Profile>,
    pub production: bool,
    pub user_may_allow: bool,
    pub allow_broad_grants: bool,
    pub crisis_support: Vec<String>,
    pub crisis_decision: Vec<String>,
}

impl Settings {
    /// Settings before any file: the design map's tiers; every later value comes from the
    /// built-in policy file.
    pub fn base() -> Settings {
        let r = |confirm, timeout: u64, deliberate| Requirement {
            confirm,
            timeout: Duration::from_secs(timeout),
            deliberate,
            time_lock: Duration::ZERO,
        };
        Settings {
            tiers: [
                r(Confirmers::Nobody, 0, false),
                r(Confirmers::Llm, 60, false),
                r(Confirmers::LlmAndHuman, 60, false),
                r(Confirmers::LlmAndHuman, 30, false),
                r(Confirmers::Human, 10, true),
            ],
            weights: BTreeMap::new(),
            production_weight: 0,
            per_recent_denial: 0,
            thresholds: BTreeMap::new(),
            profile: Profile::WorkspaceWrite,
            max_profile: Profile::Full,
            agents: BTreeMap::new(),
            production: false,
            user_may_allow: true,
            allow_broad_grants: false,
            crisis_support: Vec::new(),
            crisis_decision: Vec::new(),
        }
    }

    /// Applies one layer on top.
    pub fn apply(&mut self, kind: LayerKind, f: &PolicyFile) {
        let tighten = kind.tightens_only();
        for (k, spec) in &f.tiers {
            let Some(t) = k.parse::<usize>().ok().and_then(|i| self.tiers.get_mut(i)) else {
                continue;
            };
            if let Some(c) = spec.confirm {
                t.confirm = if tighten { stronger(t.confirm, c) } else { c };
            }
            if let Some(d) = spec.timeout.as_deref().and_then(|d| parse_duration(d).ok()) {
                t.timeout = if tighten { t.timeout.min(d) } else { d };
            }
            if let Some(d) = spec.deliberate {
                t.deliberate = if tighten { t.deliberate || d } else { d };
            }
            if let Some(d) = spec
                .time_lock
                .as_deref()
                .and_then(|d| parse_duration(d).ok())
            {
                t.time_lock = if tighten { t.time_lock.max(d) } else { d };
            }
        }
        if let Some(r) = &f.risk {
            for (k, w) in &r.weights {
                if let Some(s) = severity(k) {
                    let e = self.weights.entry(s).or_insert(0);
                    *e = if tighten { (*e).max(*w) } else { *w };
                }
            }
            if let Some(p) = r.production {
                self.production_weight = if tighten {
                    self.production_weight.max(p)
                } else {
                    p
                };
            }
            if let Some(p) = r.per_recent_denial {
                self.per_recent_denial = if tighten {
                    self.per_recent_denial.max(p)
                } else {
                    p
                };
            }
            for (k, v) in &r.thresholds {
                if let Some(c) = Channel::parse(k) {
                    let e = self.thresholds.entry(c).or_insert(u32::MAX);
                    *e = if tighten { (*e).min(*v) } else { *v };
                }
            }
        }
        if let Some(p) = f.policy.profile {
            self.profile = if tighten { self.profile.min(p) } else { p };
        }
        if let Some(p) = f.policy.max_profile {
            self.max_profile = self.max_profile.min(p);
        }
        for (agent, spec) in &f.agents {
            match self.agents.get_mut(agent) {
                Some(e) if tighten => *e = (*e).min(spec.profile),
                _ if tighten => {
                    let floor = self.profile.min(spec.profile);
                    self.agents.insert(agent.clone(), floor);
                }
                _ => {
                    self.agents.insert(agent.clone(), spec.profile);
                }
            }
        }
        if let Some(p) = f.policy.production {
            self.production = if tighten { self.production || p } else { p };
        }
        if let Some(u) = f.policy.user_may_allow {
            self.user_may_allow = u;
        }
        if let Some(b) = f.policy.allow_broad_grants {
            self.allow_broad_grants = b;
        }
        if let Some(c) = &f.crisis {
            self.crisis_support.extend(c.support_tools.iter().cloned());
            self.crisis_decision
                .extend(c.decision_tools.iter().cloned());
        }
    }

    /// A crisis support tool: never gated in crisis mode.
    pub fn is_crisis_support(&self, tool: &str) -> bool {
        names(&self.crisis_support, tool)
    }

    /// A crisis decision tool: needs a person in crisis mode.
    pub fn is_crisis_decision(&self, tool: &str) -> bool {
        names(&self.crisis_decision, tool)
    }

    pub fn requirement(&self, tier: Tier) -> Requirement {
        self.tiers[usize::from(tier.as_u8())]
    }

    pub fn weight(&self, s: Severity) -> u32 {
        self.weights.get(&s).copied().unwrap_or(0)
    }

    pub fn threshold(&self, c: Channel) -> u32 {
        self.thresholds.get(&c).copied().unwrap_or(u32::MAX)
    }

    /// The profile of an agent in a session: the narrowest of the default, the agent's, the
    /// session's, and the managed ceiling.
    pub fn profile_for(&self, agent: Option<&str>, session: Option<Profile>) -> Profile {
        let mut p = agent
            .and_then(|a| self.agents.get(a).copied())
            .unwrap_or(self.profile);
        if let Some(s) = session {
            p = p.min(s);
        }
        p.min(self.max_profile)
    }
}

/// Whether any glob of `list` names `tool` (the globs were checked when their layer loaded).
fn names(list: &[String], tool: &str) -> bool {
    list.iter()
        .any(|p| crate::pattern::NameGlob::new(p).is_ok_and(|g| g.matches(tool)))
}

/// The stricter of two confirmer sets.
pub fn stronger(a: Confirmers, b: Confirmers) -> Confirmers {
    let person = a.person() || b.person();
    let llm = a.llm() || b.llm();
    match (llm, person) {
        (true, true) => Confirmers::LlmAndHuman,
        (false, true) => Confirmers::Human,
        (true, false) => Confirmers::Llm,
        (false, false) => Confirmers::Nobody,
    }
}

fn severity(s: &str) -> Option<Severity> {
    Some(match s {
        "info" => Severity::Info,
        "low" => Severity::Low,
        "medium" => Severity::Medium,
        "high" => Severity::High,
        "critical" => Severity::Critical,
        _ => return None,
    })
}

/// `"90s"`, `"2m"`, `"1h"`, `"0s"`; a bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration like 30s, 5m or 1h"))?;
    let mult = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("`{s}`: the unit is s, m, h or d")),
    };
    n.checked_mul(mult)
        .filter(|v| *v <= 366 * 86_400)
        .map(Duration::from_secs)
        .ok_or_else(|| format!("`{s}` is longer than a year"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("15").unwrap(), Duration::from_secs(15));
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("99999999999999999999d").is_err());
    }

    #[test]
    fn confirmers_only_grow_when_tightening() {
        assert_eq!(
            stronger(Confirmers::Llm, Confirmers::Human),
            Confirmers::LlmAndHuman
        );
        assert_eq!(
            stronger(Confirmers::Human, Confirmers::Nobody),
            Confirmers::Human
        );
    }
}
