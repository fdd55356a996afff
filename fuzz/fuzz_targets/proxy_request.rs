//! Fuzzes the proxy's chat-request reader (`proxy::request`): any bytes give either the texts to
//! scan or an error with a stable code, never a panic. Where a `serde_json::Value` of the same
//! bytes exists, the reader finds exactly the texts that tree holds after the last assistant
//! message, at the same places: reading without a tree skips nothing a tree would scan.

#![no_main]

use airlock_proxy::request;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = request::agrees_with_tree(data) {
        panic!("{e}");
    }
});
