//! Attenuation never widens: whenever a child scope counts as inside its parent, every action the
//! child matches, the parent matches too. Scopes and actions come from small vocabularies so that
//! matches and subset relations actually occur.

use airlock_core::Action;
use airlock_grants::{ArgConstraint, Constraint, Scope};
use proptest::prelude::*;
use serde_json::{Value, json};

const WORDS: &[&str] = &["git", "push", "origin", "main", "-f", "rm"];

fn values() -> Vec<Value> {
    vec![
        json!("x"),
        json!("xy"),
        json!("/work/a"),
        json!("/work/"),
        json!("/work/src/a.rs"),
        json!("/work/src/x/b.rs"),
        json!("/work/../etc/passwd"),
        json!("/etc/passwd"),
        json!(1),
        json!({"x": "/work/a"}),
        json!(["x"]),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    prop::sample::select(values())
}

/// Actions likely to fall inside `s`: its prefix with more words; tool calls with every
/// combination of sample values for `a` and `b` (and `a` as an object).
fn near(s: &Scope) -> Vec<Action> {
    match s {
        Scope::Exact { action, .. } => vec![action.clone()],
        Scope::CommandPrefix { argv } => vec![
            Action::shell(argv.join(" ")),
            Action::shell(format!("{} origin", argv.join(" "))),
            Action::shell(format!("{}; rm -rf /", argv.join(" "))),
        ],
        Scope::Network { host, port, .. } => vec![
            airlock_grants::connect_action(host, port.unwrap_or(443)),
            airlock_grants::connect_action(host, 8080),
            airlock_grants::connect_action(&format!("x.{host}"), 443),
        ],
        Scope::Write { path } => vec![
            airlock_grants::write_action(path),
            airlock_grants::write_action(&format!("{path}/sub")),
            airlock_grants::write_action(&format!("{path}x")),
        ],
        Scope::Tool { tool, .. } => {
            let mut out = Vec::new();
            let vs = values();
            for a in &vs {
                for b in vs.iter().map(Some).chain([None]) {
                    let mut m = serde_json::Map::new();
                    m.insert("a".into(), a.clone());
                    if let Some(b) = b {
                        m.insert("b".into(), b.clone());
                    }
                    out.push(Action::Tool {
                        tool: tool.clone(),
                        arguments: Value::Object(m),
                    });
                }
                out.push(Action::Tool {
                    tool: tool.clone(),
                    arguments: json!({"a": {"x": a}}),
                });
            }
            out
        }
    }
}

fn constraint() -> impl Strategy<Value = Constraint> {
    prop_oneof![
        value().prop_map(Constraint::Eq),
        prop::collection::vec(value(), 1..3).prop_map(Constraint::OneOf),
        prop::sample::select(vec!["", "x", "/work/", "/w", "/work/src/"])
            .prop_map(|s| Constraint::Prefix(s.into())),
        prop::sample::select(vec![
            "/work/**",
            "/work/*",
            "/work/src/*.rs",
            "/work/a",
            "/*",
            "**",
            "/work/{a,b}",
            "/work/src/**",
            "/work/{,a}",
            "/work/[a-z]",
        ])
        .prop_map(|s| Constraint::PathGlob(s.into())),
    ]
}

fn arg_constraint() -> impl Strategy<Value = ArgConstraint> {
    (
        prop::sample::select(vec!["/a", "/b", "/a/x", ""]),
        constraint(),
    )
        .prop_map(|(p, rule)| ArgConstraint {
            pointer: p.into(),
            rule,
        })
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        (
            prop::collection::vec(prop::sample::select(WORDS), 0..5),
            prop::sample::select(vec!["", "; rm -rf /", " $(x)", " # c", " > f"])
        )
            .prop_map(|(w, tail)| Action::shell(format!("{}{tail}", w.join(" ")))),
        (
            prop::sample::select(vec!["t", "u"]),
            prop::collection::btree_map(prop::sample::select(vec!["a", "b", "c"]), value(), 0..3)
        )
            .prop_map(|(t, m)| Action::Tool {
                tool: t.into(),
                arguments: Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()),
            }),
    ]
}

fn scope() -> impl Strategy<Value = Scope> {
    prop_oneof![
        action().prop_map(|a| Scope::exact(&a).unwrap()),
        prop::collection::vec(prop::sample::select(WORDS), 0..4).prop_map(|w| {
            Scope::CommandPrefix {
                argv: w.into_iter().map(String::from).collect(),
            }
        }),
        (
            prop::sample::select(vec!["t", "u"]),
            prop::collection::vec(arg_constraint(), 0..3),
            any::<bool>()
        )
            .prop_map(|(t, constraints, exact_fields)| Scope::Tool {
                tool: t.into(),
                constraints,
                exact_fields,
            }),
    ]
}

/// A parent and a child made by narrowing it at random (longer prefix, extra or tighter
/// constraints, exact_fields), which is usually but not always inside the parent.
fn pair() -> impl Strategy<Value = (Scope, Scope)> {
    scope().prop_flat_map(|parent| {
        let p = parent.clone();
        (
            prop::collection::vec(prop::sample::select(WORDS), 0..2),
            prop::collection::vec(arg_constraint(), 0..2),
            value(),
            any::<bool>(),
        )
            .prop_map(move |(more, extra, v, exact)| {
                let child = match &p {
                    Scope::CommandPrefix { argv } => Scope::CommandPrefix {
                        argv: argv
                            .iter()
                            .cloned()
                            .chain(more.into_iter().map(String::from))
                            .collect(),
                    },
                    Scope::Tool {
                        tool,
                        constraints,
                        exact_fields,
                    } => {
                        let mut cs: Vec<ArgConstraint> = constraints
                            .iter()
                            .map(|c| ArgConstraint {
                                pointer: c.pointer.clone(),
                                rule: if exact {
                                    Constraint::Eq(v.clone())
                                } else {
                                    c.rule.clone()
                                },
                            })
                            .collect();
                        cs.extend(extra);
                        Scope::Tool {
                            tool: tool.clone(),
                            constraints: cs,
                            exact_fields: *exact_fields || exact,
                        }
                    }
                    other => other.clone(),
                };
                (p.clone(), child)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn narrowed_children_never_widen(
        (parent, child) in pair(),
        actions in prop::collection::vec(action(), 1..24),
    ) {
        if child.is_within(&parent) {
            for a in actions.iter().chain(near(&child).iter()) {
                if child.matches(a) {
                    prop_assert!(parent.matches(a), "child {child:?} matches {a:?}, parent {parent:?} does not");
                }
            }
        }
    }

    #[test]
    fn attenuation_never_widens(
        parent in scope(),
        child in scope(),
        actions in prop::collection::vec(action(), 1..24),
    ) {
        if child.is_within(&parent) {
            for a in actions.iter().chain(near(&child).iter()) {
                if child.matches(a) {
                    prop_assert!(parent.matches(a), "child {child:?} matches {a:?}, parent {parent:?} does not");
                }
            }
        }
    }

    /// Every scope lies within itself, and an exact scope lies within any scope that matches its
    /// action (so the subset test is not vacuous).
    #[test]
    fn subset_is_not_vacuous(s in scope(), a in action()) {
        let empty_prefix = matches!(&s, Scope::CommandPrefix { argv } if argv.is_empty());
        prop_assert!(s.is_within(&s) || empty_prefix, "{:?} not within itself", s);
        let e = Scope::exact(&a).unwrap();
        prop_assert_eq!(e.is_within(&s), s.matches(&a));
    }
}

/// How often the main property met a real subset with a shared match (guards against a
/// generator that never exercises it).
#[test]
fn generator_hits_subsets() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut hits = 0;
    for _ in 0..3000 {
        let (p, c) = pair().new_tree(&mut runner).unwrap().current();
        let a = action().new_tree(&mut runner).unwrap().current();
        let _ = a;
        if c.is_within(&p)
            && c != p
            && !matches!(c, Scope::Exact { .. })
            && near(&c).iter().any(|x| c.matches(x))
        {
            hits += 1;
        }
    }
    assert!(hits >= 200, "only {hits} non-trivial subset matches");
}
