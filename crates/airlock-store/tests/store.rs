//! The store against real databases: SQLite files in temporary directories and the PostgreSQL
//! server on 127.0.0.1:5432 (each run in its own schema).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod concurrency;
mod contract;
mod modes;
