//! airlock's ledger: the receipt format (version 1), its canonical JSON (RFC 8785) and Ed25519
//! signatures, per-session hash chains with Lamport counters, the event-sourced trust registry of
//! keys, the Merkle log with signed checkpoints and proofs, and the offline verification of all of
//! it. Synchronous and free of I/O: the store persists what this crate produces, and the CLI reads
//! evidence packs from disk and hands their bytes here.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod batch;
pub mod canonical;
mod error;
pub mod keys;
pub mod merkle;
pub mod pack;
pub mod receipt;
pub mod registry;
pub mod time;
pub mod verify;

pub use error::LedgerError;
pub use keys::{KeyRole, LedgerKey};
pub use merkle::{Checkpoint, ConsistencyDoc, InclusionDoc, MerkleLog};
pub use receipt::{EventKind, NewReceipt, Prepared, ReasonRef, Receipt, Sealed};
pub use registry::{Registry, RegistryEvent};
pub use verify::{Extra, LogVerifier, PayloadCheck, VerifyReport};

/// The receipt format version this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;
