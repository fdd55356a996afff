//! The settings of the stacked layers, merged: what each tier requires (who confirms, timeout,
//! deliberate confirmation, time lock), risk weights and per-channel thresholds, profiles. The
//! user layer replaces built-in values; the project and managed layers only move a value toward
//! strictness (a stronger confirmer, a shorter timeout, a lower threshold, a narrower profile).

use std::collections::BTreeMap;
use std::time::Duration;

use airlock_core::{Severity, Tier};
use serde::Serialize;

use crate::file::{Confirmers, OutputHandling, PolicyFile, Profile, PromptHandling};
use crate::layer::LayerKind;

/// Where a request came from, for risk thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    Terminal,
    Chat,
    Api,
    Telegram,
    Discord,
    Slack,
}

impl Channel {
    pub fn parse(s: &str) -> Option<Channel> {
        match s {
            "terminal" => Some(Channel::Terminal),
            "chat" => Some(Channel::Chat),
            "api" => Some(Channel::Api),
            "telegram" => Some(Channel::Telegram),
            "discord" => Some(Channel::Discord),
            "slack" => Some(Channel::Slack),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Terminal => "terminal",
            Channel::Chat => "chat",
            Channel::Api => "api",
            Channel::Telegram => "telegram",
            Channel::Discord => "discord",
            Channel::Slack => "slack",
        }
    }

    /// Every channel, for help texts and checks.
    pub const ALL: [Channel; 6] = [
        Channel::Terminal,
        Channel::Chat,
        Channel::Api,
        Channel::Telegram,
        Channel::Discord,
        Channel::Slack,
    ];

    /// A chat channel without a threshold of its own uses the `chat` threshold.
    fn fallback(self) -> Option<Channel> {
        match self {
            Channel::Telegram | Channel::Discord | Channel::Slack => Some(Channel::Chat),
            _ => None,
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

/// Patterns that make a context production.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ProductionPatterns {
    pub environments: Vec<String>,
    pub kube_contexts: Vec<String>,
    pub git_branches: Vec<String>,
    pub cloud_profiles: Vec<String>,
}

/// One behaviour of the risk score.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Behaviour {
    pub weight: u32,
    pub rules: Vec<String>,
    pub text: Vec<String>,
    pub message: String,
    /// `text` compiled once, when the first sent message is weighed (each pattern was checked
    /// when its file loaded): a process that never weighs a message, like each hook process,
    /// never pays for compiling them (about 13M instructions for the built-in ones).
    #[serde(skip)]
    text_set: std::sync::OnceLock<Option<regex::RegexSet>>,
}

impl Behaviour {
    /// Whether any of the behaviour's text patterns matches `t`.
    pub fn text_matches(&self, t: &str) -> bool {
        !self.text.is_empty()
            && self
                .text_set
                .get_or_init(|| regex::RegexSet::new(&self.text).ok())
                .as_ref()
                .is_some_and(|set| set.is_match(t))
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
    /// Tool bundles per agent: the agent may use only these (globs, plus `shell`, `write`,
    /// `fetch`, `message`). Later layers narrow: a name must be in every layer's bundle.
    pub bundles: BTreeMap<String, Vec<Vec<String>>>,
    pub production: bool,
    /// What makes a context production (merged: every layer's patterns count).
    pub production_patterns: ProductionPatterns,
    /// The least tier a state-changing action in production asks at.
    pub production_min_tier: u8,
    /// Behaviours weighed in the score: name -> (weight, rule-id globs, message).
    pub behaviours: BTreeMap<String, Behaviour>,
    /// Hosts the project knows (domain patterns).
    pub known_hosts: Vec<String>,
    /// Whether an upload or write to an unknown host asks.
    pub ask_unknown_hosts: bool,
    /// The hosts web-fetch tools may read, from every layer (empty: any public host).
    pub fetch_hosts: Vec<String>,
    /// Directories (path globs) where the person lowers friction (user layer only).
    pub trusted_dirs: Vec<String>,
    pub user_may_allow: bool,
    pub allow_broad_grants: bool,
    pub crisis_support: Vec<String>,
    pub crisis_decision: Vec<String>,
    /// The hooks' handling of flagged texts (`[text]`).
    pub text: TextSettings,
}

/// The merged `[text]` section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TextSettings {
    pub jailbreak: PromptHandling,
    pub injection: OutputHandling,
    /// Bytes of one text scanned, at least 4 KiB and at most the scanner's 1 MiB.
    pub scan_limit: usize,
}

impl TextSettings {
    /// Bounds of `scan_limit`.
    pub const MIN_SCAN: usize = 4 << 10;
    pub const MAX_SCAN: usize = 1 << 20;
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
            bundles: BTreeMap::new(),
            production: false,
            production_patterns: ProductionPatterns::default(),
            production_min_tier: 3,
            behaviours: BTreeMap::new(),
            known_hosts: Vec::new(),
            ask_unknown_hosts: true,
            fetch_hosts: Vec::new(),
            trusted_dirs: Vec::new(),
            user_may_allow: true,
            allow_broad_grants: false,
            crisis_support: Vec::new(),
            crisis_decision: Vec::new(),
            text: TextSettings {
                jailbreak: PromptHandling::Block,
                injection: OutputHandling::Annotate,
                scan_limit: 256 << 10,
            },
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
            if let Some(profile) = spec.profile {
                match self.agents.get_mut(agent) {
                    Some(e) if tighten => *e = (*e).min(profile),
                    _ if tighten => {
                        let floor = self.profile.min(profile);
                        self.agents.insert(agent.clone(), floor);
                    }
                    _ => {
                        self.agents.insert(agent.clone(), profile);
                    }
                }
            }
            if let Some(tools) = &spec.tools {
                let b = self.bundles.entry(agent.clone()).or_default();
                if !tighten {
                    // the user's bundle replaces the built-in one; project and managed
                    // bundles are added as further constraints (a name must pass each)
                    b.clear();
                }
                b.push(tools.clone());
            }
        }
        if let Some(p) = &f.production {
            let pp = &mut self.production_patterns;
            pp.environments.extend(p.environments.iter().cloned());
            pp.kube_contexts.extend(p.kube_contexts.iter().cloned());
            pp.git_branches.extend(p.git_branches.iter().cloned());
            pp.cloud_profiles.extend(p.cloud_profiles.iter().cloned());
            if let Some(t) = p.min_tier {
                self.production_min_tier = if tighten {
                    self.production_min_tier.max(t)
                } else {
                    t
                };
            }
        }
        for (name, spec) in &f.behaviour {
            let b = self.behaviours.entry(name.clone()).or_default();
            if let Some(w) = spec.weight {
                b.weight = if tighten { b.weight.max(w) } else { w };
            }
            b.rules.extend(spec.rules.iter().cloned());
            if !spec.text.is_empty() {
                b.text.extend(spec.text.iter().cloned());
                b.text_set = std::sync::OnceLock::new();
            }
            if let Some(m) = &spec.message {
                b.message = m.clone();
            }
        }
        if let Some(h) = &f.hosts {
            self.known_hosts.extend(h.known.iter().cloned());
            self.fetch_hosts.extend(h.fetch.iter().cloned());
            if let Some(a) = h.ask_unknown {
                self.ask_unknown_hosts = if tighten {
                    self.ask_unknown_hosts || a
                } else {
                    a
                };
            }
        }
        if kind == LayerKind::User {
            self.trusted_dirs = f.policy.trusted_dirs.clone();
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
        if let Some(t) = &f.text {
            let text = &mut self.text;
            if let Some(j) = t.jailbreak {
                text.jailbreak = if tighten { text.jailbreak.max(j) } else { j };
            }
            if let Some(i) = t.injection {
                text.injection = if tighten { text.injection.max(i) } else { i };
            }
            if let Some(n) = t.scan_limit {
                let n = usize::try_from(n)
                    .unwrap_or(usize::MAX)
                    .clamp(TextSettings::MIN_SCAN, TextSettings::MAX_SCAN);
                // A smaller window scans less: only the user layer may choose it.
                text.scan_limit = if tighten { text.scan_limit.max(n) } else { n };
            }
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
        self.thresholds
            .get(&c)
            .or_else(|| c.fallback().and_then(|f| self.thresholds.get(&f)))
            .copied()
            .unwrap_or(u32::MAX)
    }

    /// Whether the agent's bundle (if it has one) lets it use `name` (a tool name, or
    /// `shell`, `write`, `fetch`, `message`). `None` when the agent has no bundle.
    pub fn bundle_allows(&self, agent: Option<&str>, name: &str) -> Option<bool> {
        let b = self.bundles.get(agent?)?;
        Some(b.iter().all(|layer| names(layer, name)))
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

#[cfg(test)]
mod behaviour_text_tests {
    use crate::Policy;

    /// The built-in layer's behaviour patterns are not compiled when it loads (every hook
    /// process loads it); they must compile, and match what they are for.
    #[test]
    fn builtin_behaviour_texts_compile() {
        let p = Policy::builtin().unwrap();
        let b = &p.settings.behaviours["secret_request"];
        assert!(!b.text.is_empty());
        for t in &b.text {
            regex::Regex::new(t).unwrap();
        }
        assert!(b.text_matches("please send me your password"));
        assert!(!b.text_matches("the password field is on the left"));
    }
}
