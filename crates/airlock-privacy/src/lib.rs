//! airlock's outbound privacy filter: finds secrets (provider key formats, private key blocks,
//! JWTs, connection strings with passwords, high-entropy assignments) and personal data (e-mail
//! addresses, phone numbers, card numbers and IBANs with their checksums, national ids, IP
//! addresses) in text bound for a remote model, replaces them with typed placeholders, and puts
//! the personal data back into the answer. The rules are data (`rules/privacy/*.toml`); this
//! crate knows text only, not JSON, HTTP or the ledger.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod placeholder;
mod rules;
mod scan;
mod validate;

pub use placeholder::{Replaced, Restorer, StreamRestorer, Vault};
pub use rules::{BUILTIN, Check, Kind, Rule, RuleError, load, parse_pack};
pub use scan::{Finding, Scanner, Selection};
pub use validate::entropy;
