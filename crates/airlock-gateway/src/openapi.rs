//! The OpenAPI 3.1 document served at `/openapi.json`, written by hand (no generator that
//! needs network or build scripts). A test checks that its paths and methods are exactly the
//! routes the router registers.

/// The document, as served.
pub const DOCUMENT: &str = include_str!("openapi.json");
