//! Fuzzes airlock-wasm's module loader and a run under small limits: any bytes must load or be
//! refused with a reason code, and a module that loads must end (an exit code or a stop with
//! its reason), never panic or hang past its fuel.

#![no_main]

use std::time::{Duration, Instant};

use airlock_wasm::{Ending, Entry, Invocation, Limits, Output};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        fuel: 100_000,
        memory_bytes: 1 << 20,
        timeout: Duration::from_secs(2),
        output_bytes: 4096,
        ..Limits::default()
    };
    match airlock_wasm::load(data, &limits) {
        Err(e) => assert!(e.reason().is_some(), "{e}"),
        Ok(m) => {
            let inv = Invocation {
                args: vec!["fuzz".into()],
                env: Vec::new(),
                stdin: data.to_vec(),
                preopens: Vec::new(),
                entry: Entry::Start,
                stdout: Output::Capture,
                stderr: Output::Capture,
            };
            if let Ok(o) = m.run(inv, &limits, Instant::now()) {
                if let Ending::Stopped { reason, .. } = o.ending {
                    assert!(reason.as_str().starts_with("WASM_"));
                }
                assert!(o.stdout.len() + o.stderr.len() <= 4096);
            }
        }
    }
});
