//! Fuzzes the proxy's chat-request reader (`proxy::request`): any bytes give either the texts to
//! scan or an error with a stable code, never a panic. Where a `serde_json::Value` of the same
//! bytes exists, the reader finds exactly the texts that tree holds after the last assistant
//! message, at the same places: reading without a tree skips nothing a tree would scan.

#![no_main]

use airlock_gateway::proxy::request;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let read = request::parse(data).and_then(|r| r.pieces());
    let pieces = match read {
        Ok(p) => p,
        Err(e) => {
            assert!(
                matches!(e.code, "MALFORMED_JSON" | "INVALID_REQUEST" | "INVALID_UTF8"),
                "{}",
                e.code
            );
            return;
        }
    };
    // A lone surrogate or an out-of-range number in a part the reader skips is left to the
    // upstream, where a tree would refuse the whole body: nothing to compare then.
    let Ok(doc) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let got: Vec<_> = pieces
        .into_iter()
        .map(|p| (p.msg, p.part, p.role, p.text))
        .collect();
    assert_eq!(got, request::pieces_of_tree(&doc));
});
