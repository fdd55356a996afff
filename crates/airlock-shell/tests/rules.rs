//! Every example of every built-in rule, end to end through the analyser: each `match` line must
//! report the rule, each `not_match` line must not, and for every example the keyword prefilter
//! must change nothing (the same rules fire with the prefilter off). A rule whose examples fail
//! here would fail the same way in production, so the test names each failing line.

use airlock_shell::Analyser;
use std::collections::BTreeSet;

fn ids(a: &airlock_core::Assessment) -> BTreeSet<String> {
    a.reasons.iter().map(|f| f.rule_id.clone()).collect()
}

fn analyser() -> &'static Analyser {
    match Analyser::builtin() {
        Ok(a) => a,
        Err(e) => panic!("built-in rule packs do not load: {e}"),
    }
}

#[test]
fn every_match_example_reports_its_rule() {
    let a = analyser();
    let mut failures = Vec::new();
    for rule in a.rules().rules() {
        for ex in &rule.examples {
            let got = ids(&a.analyse_with(ex, true));
            if !got.contains(&rule.id) {
                failures.push(format!(
                    "{}: `match` example not reported: {ex:?} (got {got:?})",
                    rule.id
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn no_not_match_example_reports_its_rule() {
    let a = analyser();
    let mut failures = Vec::new();
    for rule in a.rules().rules() {
        for ex in &rule.counter_examples {
            let got = ids(&a.analyse_with(ex, true));
            if got.contains(&rule.id) {
                failures.push(format!("{}: `not_match` example reported: {ex:?}", rule.id));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_prefilter_hides_no_rule() {
    let a = analyser();
    let mut failures = Vec::new();
    for rule in a.rules().rules() {
        for ex in rule.examples.iter().chain(&rule.counter_examples) {
            let fast = ids(&a.analyse_with(ex, true));
            let full = ids(&a.analyse_with(ex, false));
            if fast != full {
                let hidden: Vec<_> = full.difference(&fast).collect();
                failures.push(format!(
                    "{}: prefilter hides {hidden:?} for {ex:?}",
                    rule.id
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_rule_is_documented_for_agent_and_reviewer() {
    let a = analyser();
    let mut failures = Vec::new();
    for rule in a.rules().rules() {
        if rule.counter_examples.is_empty() {
            failures.push(format!("{}: no `not_match` example", rule.id));
        }
        if rule.remediation.trim().is_empty() {
            failures.push(format!("{}: no remediation", rule.id));
        }
        if rule.message.len() < 40 {
            failures.push(format!("{}: message too short to act on", rule.id));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
