//! Shell-command analysis: parse a command line into a tree, walk everything that runs, unwrap
//! wrappers, and match the resulting simple commands against rule packs.
//!
//! The entry point is [`analyse`], which never panics and never fails: what cannot be analysed
//! becomes at least an `ask` finding with its own reason code.

use airlock_core::{Assessment, Decision, Finding, ReasonCode, Severity, Tier};

pub mod paths;
pub mod rules;

/// Analyses one command line with the built-in rule packs.
pub fn analyse(command: &str) -> Assessment {
    // Placeholder until the analyser lands: everything asks.
    Assessment::from_findings(
        vec![Finding::new(
            "engine.pending",
            ReasonCode::UnknownCommand,
            Decision::Ask,
            Tier::Low,
            Severity::Info,
            format!("not analysed yet: {command}"),
        )],
        Decision::Ask,
    )
}
