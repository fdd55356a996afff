//! airlock's vocabulary. Every other crate speaks in these types: surfaces turn their wire format
//! into an [`Action`], analysers produce [`Finding`]s, and the strictest finding becomes the
//! [`Decision`] of an [`Assessment`]. No I/O, no async.

mod action;
mod decision;
mod finding;
mod reason;

pub use action::{Action, ActionKind};
pub use decision::{Assessment, Decision, Severity, Tier};
pub use finding::{Finding, Span};
pub use reason::ReasonCode;
