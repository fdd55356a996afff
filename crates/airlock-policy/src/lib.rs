//! airlock's policy engine: turns an action and the findings of the built-in inspection into a
//! decision a team can configure. A policy is a stack of TOML layers (built-in < user <
//! project, plus a managed admin layer whose ceilings nothing below lifts); tools are denied
//! unless declared, and declared tools may pin a JSON Schema for their arguments. The effective
//! policy has a content hash that goes into every receipt. See `docs/policy.md`.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod claude;
mod context;
mod error;
pub mod eval;
pub mod examples;
mod facts;
pub mod file;
pub mod guard_secrets;
pub mod layer;
mod output;
pub mod pattern;
mod policy;
pub mod project_hosts;
pub mod risk;
pub mod schema;
pub mod tiers;

pub use error::PolicyError;
pub use eval::{Context, PolicyVerdict, Step, load_error};
pub use facts::{git_branch, kube_current_context};
pub use file::{
    Confirmers, OutputDrift, OutputHandling, PolicyFile, Profile, PromptHandling, SideEffects,
    TextSpec,
};
pub use layer::{Layer, LayerKind};
pub use pattern::{CommandPattern, Matcher};
pub use policy::{BUILTIN, Policy, Sources};
pub use risk::{ScorePart, may_upload};
pub use tiers::{Channel, Requirement, TextSettings, parse_duration};
