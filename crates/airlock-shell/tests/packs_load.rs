//! Checks that the process, containers, kubernetes, cloud, terraform, databases, packages and
//! services packs load into the built-in rule set and that their key rules are present, so a pack
//! that silently lost a rule (or failed to be embedded) is caught even before the per-example
//! test runs. Every rule's `match`/`not_match` lines are checked end to end by `tests/rules.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_core::Decision;
use airlock_shell::rules::{BUILTIN_PACKS, RuleSet};

/// The pack files this test owns.
const FILES: &[&str] = &[
    "cloud.toml",
    "containers.toml",
    "databases.toml",
    "kubernetes.toml",
    "packages.toml",
    "process.toml",
    "services.toml",
    "terraform.toml",
];

/// Compiles only these packs, so a broken pack elsewhere does not hide a problem here.
fn ours() -> RuleSet {
    let packs: Vec<(&str, &str)> = BUILTIN_PACKS
        .iter()
        .copied()
        .filter(|(name, _)| FILES.contains(name))
        .collect();
    for f in FILES {
        assert!(
            packs.iter().any(|(name, _)| name == f),
            "{f} is not embedded"
        );
    }
    RuleSet::from_packs(packs).expect("packs load")
}

/// Rules whose absence would leave a whole class of destruction unguarded, with the decision
/// each must keep.
const EXPECTED: &[(&str, Decision)] = &[
    ("process.kill_all", Decision::Deny),
    ("process.power_off", Decision::Deny),
    ("process.fork_bomb", Decision::Deny),
    ("process.sysrq_trigger", Decision::Deny),
    ("containers.volumes_wipe", Decision::Ask),
    ("containers.privileged", Decision::Ask),
    ("containers.host_mount", Decision::Ask),
    ("kubernetes.delete_system_namespace", Decision::Deny),
    ("kubernetes.delete_all_namespaces", Decision::Deny),
    ("kubernetes.secret_values", Decision::Ask),
];

#[test]
fn key_rules_are_present() {
    let set = ours();
    for (id, decision) in EXPECTED {
        let rule = set.rules().iter().find(|r| r.id == *id);
        let rule = rule.unwrap_or_else(|| panic!("rule {id} is missing from the built-in set"));
        assert_eq!(rule.decision, *decision, "{id} changed its decision");
    }
}

#[test]
fn every_pack_b_rule_has_counter_examples_and_remediation() {
    let set = ours();
    let mut seen = 0;
    for rule in set.rules() {
        seen += 1;
        assert!(
            !rule.counter_examples.is_empty(),
            "{} has no not_match examples",
            rule.id
        );
        assert!(
            rule.examples.len() >= 2 || rule.id.contains("sysrq"),
            "{} has too few examples",
            rule.id
        );
        assert!(
            !rule.remediation.trim().is_empty(),
            "{} has no remediation",
            rule.id
        );
    }
    assert!(seen >= 30, "only {seen} rules from packs b were loaded");
}
