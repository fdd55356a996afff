//! Tallies for `airlock eval commands`: how airlock's decision on each labelled command compares
//! with the label, per corpus (and per source file), and the lists of misses.

use super::corpus_commands::{Case, Expect};
use airlock_core::{Assessment, Decision, ReasonCode};
use serde::Serialize;

/// One command whose decision disagrees with its label.
#[derive(Debug, Clone, Serialize)]
pub struct Miss {
    pub command: String,
    pub label: String,
    pub origin: String,
    pub decision: Decision,
    /// Rule ids (or reason codes) behind the decision, strictest first.
    pub reasons: Vec<String>,
}

/// Counts for one group of cases.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Tally {
    pub n: usize,
    pub dangerous: usize,
    /// Dangerous cases answered with ask or deny.
    pub detected: usize,
    /// The corpus' "hard" class (Hermes `hardline`), a subset of `dangerous`.
    pub hard: usize,
    pub hard_denied: usize,
    pub benign: usize,
    /// Benign cases answered with ask or deny.
    pub benign_asked: usize,
    pub benign_denied: usize,
    /// Labels that only promise "not denied".
    pub not_denied: usize,
    pub not_denied_but_denied: usize,
    pub warn: usize,
    pub warn_asked: usize,
}

/// Which list a miss belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissKind {
    /// A dangerous command that was allowed.
    Missed,
    /// A benign command that was asked or denied.
    FalsePositive,
    /// A hard-class command that was only asked.
    HardNotDenied,
    /// A "not denied" label that was denied.
    Denied,
}

impl Tally {
    /// Adds one case; returns the kind of miss it is, if any.
    pub fn add(&mut self, case: &Case, a: &Assessment) -> Option<MissKind> {
        self.n += 1;
        let flagged = a.decision != Decision::Allow;
        let denied = a.decision == Decision::Deny;
        match case.expect {
            Expect::Dangerous { hard } => {
                self.dangerous += 1;
                self.detected += usize::from(flagged);
                if hard {
                    self.hard += 1;
                    self.hard_denied += usize::from(denied);
                }
                if !flagged {
                    Some(MissKind::Missed)
                } else if hard && !denied {
                    Some(MissKind::HardNotDenied)
                } else {
                    None
                }
            }
            Expect::Benign => {
                self.benign += 1;
                self.benign_asked += usize::from(flagged);
                self.benign_denied += usize::from(denied);
                flagged.then_some(MissKind::FalsePositive)
            }
            Expect::NotDenied => {
                self.not_denied += 1;
                self.not_denied_but_denied += usize::from(denied);
                denied.then_some(MissKind::Denied)
            }
            Expect::Warn => {
                self.warn += 1;
                self.warn_asked += usize::from(flagged);
                None
            }
        }
    }

    pub fn recall(&self) -> Option<f64> {
        ratio(self.detected, self.dangerous)
    }

    pub fn benign_asked_share(&self) -> Option<f64> {
        ratio(self.benign_asked, self.benign)
    }

    pub fn hard_deny_rate(&self) -> Option<f64> {
        ratio(self.hard_denied, self.hard)
    }
}

fn ratio(a: usize, b: usize) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

/// The reasons behind a decision: the rule id, with the reason code when the finding came from
/// code rather than a rule pack.
pub fn reason_names(a: &Assessment) -> Vec<String> {
    a.reasons
        .iter()
        .filter(|f| f.decision == a.decision)
        .map(|f| {
            if f.rule_id.is_empty() {
                f.code.as_str().to_string()
            } else if f.code == ReasonCode::RuleMatch {
                f.rule_id.clone()
            } else {
                format!("{} [{}]", f.rule_id, f.code)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use airlock_core::{Finding, Severity, Tier};

    fn case(expect: Expect) -> Case {
        Case {
            set: "s".into(),
            origin: "o".into(),
            label: "l".into(),
            expect,
            command: "c".into(),
        }
    }

    fn assessed(d: Decision) -> Assessment {
        let f = Finding::new(
            "x.y",
            ReasonCode::RuleMatch,
            d,
            Tier::High,
            Severity::High,
            "m",
        );
        Assessment::from_findings(vec![f], Decision::Allow)
    }

    #[test]
    fn tallies_follow_the_label_mapping() {
        let mut t = Tally::default();
        let hard = case(Expect::Dangerous { hard: true });
        assert_eq!(
            t.add(&hard, &assessed(Decision::Ask)),
            Some(MissKind::HardNotDenied)
        );
        assert_eq!(t.add(&hard, &assessed(Decision::Deny)), None);
        assert_eq!(t.add(&hard, &Assessment::allow()), Some(MissKind::Missed));
        let benign = case(Expect::Benign);
        assert_eq!(
            t.add(&benign, &assessed(Decision::Ask)),
            Some(MissKind::FalsePositive)
        );
        assert_eq!(t.add(&benign, &Assessment::allow()), None);
        let nd = case(Expect::NotDenied);
        assert_eq!(t.add(&nd, &assessed(Decision::Ask)), None);
        assert_eq!(
            t.add(&nd, &assessed(Decision::Deny)),
            Some(MissKind::Denied)
        );
        assert_eq!(t.add(&case(Expect::Warn), &assessed(Decision::Ask)), None);
        assert_eq!(
            (t.dangerous, t.detected, t.hard, t.hard_denied),
            (3, 2, 3, 1)
        );
        assert_eq!((t.benign, t.benign_asked), (2, 1));
        assert_eq!(
            (t.not_denied, t.not_denied_but_denied, t.warn_asked),
            (2, 1, 1)
        );
        assert_eq!(t.recall(), Some(2.0 / 3.0));
        assert_eq!(t.benign_asked_share(), Some(0.5));
        assert_eq!(Tally::default().recall(), None);
        assert_eq!(
            reason_names(&assessed(Decision::Deny)),
            vec!["x.y".to_string()]
        );
    }
}
