//! airlock's store: where state lives. One interface ([`LedgerStore`], implemented by
//! [`Ledger`]) over two backends chosen at open time: SQLite (embedded default, WAL, one file in
//! the data directory) and PostgreSQL (several airlock nodes sharing one database). Migrations
//! are embedded and run at open; queries are built at run time (no compile-time macros).
//! Appends go through one writer task per process that commits them in batches; the call
//! returns once its batch is durably committed.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod approvals;
pub mod audit;
mod auth;
mod budgets;
mod chat;
mod crisis;
mod db;
mod error;
mod grants;
pub mod keyfile;
mod ledger;
mod mcp_pins;
mod migrate;
mod options;
mod secrets;
pub mod witness;
mod writer;

pub use approvals::{ApprovalRow, LinkRow, SpentLink, Transition};
pub use auth::{TokenRow, WebSessionRow};
pub use budgets::{BudgetLimits, BudgetUsage};
pub use chat::{ChatMessageRow, ChatRefusal};
pub use crisis::CrisisRow;
pub use db::{Db, StoredReceipt};
pub use error::StoreError;
pub use grants::{ChildRefused, GrantFilter, GrantRow};
pub use ledger::{AppendRequest, Ledger, LedgerConfig, LedgerStore, rotate_ledger_key};
pub use mcp_pins::{PinCheck, PinRow};
pub use options::{StoreOptions, default_data_dir};
