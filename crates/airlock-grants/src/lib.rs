//! airlock's capabilities. A [`Grant`] lets one subject (an agent, in one session or in all)
//! take actions inside one narrow [`Scope`] (one exact action by hash, a command prefix of one
//! simple literal command, or a tool with argument constraints) a limited number of times until it
//! expires. Grants are made by people; an LLM can only propose one. Forwarding attenuates (a
//! narrower scope, fewer uses, an earlier expiry) and every use of a forwarded grant also counts
//! against its ancestors; revoking cascades to everything derived. [`GrantBook`] does all of it
//! over `airlock_store::Db` (SQLite or PostgreSQL), where a use is an atomic check-and-consume.
//!
//! The scope logic (matching, attenuation, broadness) is synchronous and usable on its own:
//! without the default `store` feature the crate has no async or database dependency.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

#[cfg(feature = "store")]
mod book;
pub mod broad;
mod error;
mod model;
pub mod scope;

#[cfg(feature = "store")]
pub use book::{Clock, Forward, GrantBook, GrantConfig, ListFilter, NewGrant, system_now_ms};
pub use broad::check_narrow;
pub use error::GrantError;
pub use model::{Creator, Grant, GrantKind, Status, Subject, is_grant_id, new_id};
pub use scope::{
    ArgConstraint, CONNECT_TOOL, Constraint, PreparedAction, Scope, WRITE_TOOL, action_hash,
    connect_action, write_action,
};
