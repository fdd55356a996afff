//! Fuzzes what chat platforms send airlock: button data (`tap::verify`), typed commands
//! (`command::parse`) and the Slack and Discord request signatures. Any bytes must be refused or
//! read without a panic; made-up button data never verifies.

#![no_main]

use std::time::Duration;

use airlock_chat::{command, discord, slack, tap};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    assert!(tap::verify(b"0123456789abcdef", "telegram:ops", "-1001", &text).is_none());
    if let Some(t) = command::parse(&text) {
        assert!(!t.code.is_empty() && t.code.len() <= 16);
    }
    // The first line is the timestamp header, the second the signature header, all of it
    // the body: a wrong signature never verifies.
    let w = Duration::from_secs(300);
    let mut lines = text.lines();
    let (ts, sig) = (lines.next().unwrap_or(""), lines.next().unwrap_or(""));
    assert!(!slack::verify(b"secret-secret-secret", ts, sig, data, 1_800_000_000, w));
    let key = ed25519_dalek::SigningKey::from_bytes(&[7u8; 32]).verifying_key();
    assert!(!discord::verify(&key, ts, sig, data, 1_800_000_000, w));
});
