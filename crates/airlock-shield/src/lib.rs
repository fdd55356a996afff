//! airlock-shield scans text that flows into an agent, user messages and tool results, for
//! jailbreaks, prompt injection and crisis signals.
//!
//! ```
//! use airlock_shield::{scan, Direction, TextVerdict};
//! assert_eq!(scan("How do I kill a Python process?", Direction::User).verdict, TextVerdict::Clean);
//! ```
//!
//! The pipeline: [`normalise`] (invisible characters, NFKC, confusables, spacing, leetspeak),
//! [`decode`] (embedded base64 / hex / URL-encoding / rot13), data-driven [`rules`] behind an
//! Aho-Corasick prefilter, and a small hashed n-gram logistic [`model`] with committed weights.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod crisis;
pub mod decode;
pub mod flags;
mod keyword_table;
pub mod lang;
pub mod model;
pub mod normalise;
pub mod plan;
pub mod prebuilt;
pub mod reach;
pub mod reply;
mod result;
pub mod rules;
mod scanner;
pub mod soup;
#[cfg(test)]
mod test_rng;

#[cfg(feature = "corpora")]
pub mod corpus;
#[cfg(feature = "corpora")]
pub mod loso;
#[cfg(feature = "corpora")]
pub mod report;
#[cfg(feature = "corpora")]
pub mod train;

use std::sync::LazyLock;

pub use crisis::{CrisisResponse, Guidance, Locale, Resource};
pub use flags::Flags;
pub use result::{CrisisAdvice, Direction, Match, ScanResult, Source, Span, TextVerdict};
pub use scanner::{MAX_INPUT, Scanner};

/// What can go wrong building a scanner. Scanning itself cannot fail.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("text rules {file}: {message}")]
    Rules { file: String, message: String },
    #[error("model weights: {0}")]
    Model(String),
    #[error("crisis response: {0}")]
    Config(String),
}

static BUILTIN: LazyLock<Result<Scanner, Error>> = LazyLock::new(Scanner::builtin);

/// The scanner built from the shipped rules and weights (built once, on first use).
pub fn builtin() -> Result<&'static Scanner, &'static Error> {
    BUILTIN.as_ref()
}

/// Scans `text` with the shipped scanner. If the shipped scanner could not be built (a bug the
/// tests guard against), the result fails closed: an attack verdict with confidence 1.
pub fn scan(text: &str, dir: Direction) -> ScanResult {
    match builtin() {
        Ok(s) => s.scan(text, dir),
        Err(_) => ScanResult {
            verdict: match dir {
                Direction::User => TextVerdict::JailbreakDetected,
                Direction::Tool => TextVerdict::InjectionDetected,
            },
            confidence: 1.0,
            score: 1.0,
            direction: dir,
            categories: vec!["internal_error".to_string()],
            matches: Vec::new(),
            flags: Flags::empty(),
            model_score: 0.0,
            crisis: None,
        },
    }
}
