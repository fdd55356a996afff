//! The options table (`rules/options/programs.toml`) checks itself: every `match` line is held,
//! with the table finding the option in it, and every `not_match` line gets no finding from the
//! table.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_core::Decision;
use airlock_shell::{analyse, options};

fn from_table(rule: &str) -> bool {
    rule.starts_with("engine.option_") || rule.starts_with("paths.")
}

fn examples(key: &str) -> Vec<(String, String)> {
    let doc: toml::Table = options::SOURCE.parse().unwrap();
    let mut out = Vec::new();
    for p in doc["program"].as_array().unwrap() {
        let names = p["names"].as_array().unwrap()[0]
            .as_str()
            .unwrap()
            .to_string();
        for e in p[key].as_array().unwrap() {
            out.push((names.clone(), e.as_str().unwrap().to_string()));
        }
    }
    out
}

#[test]
fn every_match_example_is_held_by_the_table() {
    let ex = examples("match");
    assert!(ex.len() > 40);
    let mut missed = Vec::new();
    for (program, line) in ex {
        let a = analyse(&line);
        // held by a finding of the table's own, or by what a command the table found runs
        let found = airlock_shell::simple_argv(&line).is_some_and(|argv| {
            let name = argv[0].rsplit('/').next().unwrap_or("").to_string();
            !options::uses(&name, &argv).is_empty()
        });
        if a.decision < Decision::Ask
            || !(a.reasons.iter().any(|r| from_table(&r.rule_id)) || found)
        {
            missed.push(format!("{program}: {line}: {:?}", a.decision));
        }
    }
    assert!(missed.is_empty(), "{missed:#?}");
}

#[test]
fn no_not_match_example_gets_a_finding_from_the_table() {
    let mut wrong = Vec::new();
    for (program, line) in examples("not_match") {
        let a = analyse(&line);
        if let Some(r) = a.reasons.iter().find(|r| from_table(&r.rule_id)) {
            wrong.push(format!("{program}: {line}: {}", r.rule_id));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn every_program_in_the_table_is_found() {
    let doc: toml::Table = options::SOURCE.parse().unwrap();
    for p in doc["program"].as_array().unwrap() {
        for n in p["names"].as_array().unwrap() {
            assert!(options::entry(n.as_str().unwrap()).is_some(), "{n}");
        }
    }
}

#[test]
fn programs_under_another_name_are_judged_as_that_program() {
    for cmd in [
        "cmake -E rm -rf ~",
        "cmake -E remove_directory /",
        "cmake -E env FOO=1 rm -rf ~",
        "cmake -E chdir / rm -rf ~",
        "cmake -E time rm -rf /",
    ] {
        assert_eq!(analyse(cmd).decision, Decision::Deny, "{cmd}");
    }
    for cmd in [
        "cmake --build build",
        "cmake -E rm -rf build",
        "cmake -E make_directory out",
    ] {
        assert_eq!(analyse(cmd).decision, Decision::Allow, "{cmd}");
    }
}
