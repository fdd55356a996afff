//! Fuzzes the proxy's reader of whole chat completions (`proxy::answer`): any bytes give the
//! calls or leave the answer to a tree, never a panic; where a `serde_json::Value` of the same
//! bytes exists and the reader read them, both find the same tool calls in the same order and
//! the same usage, so the verdicts the proxy applies to the tree always belong to their calls.

#![no_main]

use airlock_proxy::answer;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = answer::agrees_with_tree(data) {
        panic!("{e}");
    }
});
