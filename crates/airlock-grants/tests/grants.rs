//! airlock-grants against real databases (a SQLite file in a temporary directory and the
//! PostgreSQL server on 127.0.0.1:5432, each run in its own schema) and property tests of the
//! scope logic.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod book;
mod common;
mod model;
mod props;
