//! The loader on arbitrary bytes: any input is a module or a clear error, never a panic, and
//! a module that loads runs to an ending under small limits.

use airlock_wasm::Limits;
use proptest::prelude::*;

fn small() -> Limits {
    Limits {
        fuel: 10_000,
        memory_bytes: 1 << 20,
        timeout: std::time::Duration::from_secs(2),
        ..Limits::default()
    }
}

fn try_all(bytes: &[u8]) {
    if let Ok(m) = airlock_wasm::load(bytes, &small()) {
        let inv = airlock_wasm::Invocation {
            args: vec!["x".into()],
            env: Vec::new(),
            stdin: Vec::new(),
            preopens: Vec::new(),
            entry: airlock_wasm::Entry::Start,
            stdout: airlock_wasm::Output::Capture,
            stderr: airlock_wasm::Output::Capture,
        };
        let _ = m.run(inv, &small(), std::time::Instant::now());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_after_the_header(tail in proptest::collection::vec(any::<u8>(), 0..256)) {
        let mut bytes = b"\0asm\x01\0\0\0".to_vec();
        bytes.extend(tail);
        try_all(&bytes);
    }

    #[test]
    fn mutated_real_modules(at in any::<prop::sample::Index>(), byte in any::<u8>(), which in 0usize..3) {
        let name = ["hello", "fsprobe", "echo"][which];
        let mut bytes = super::module(name);
        let i = at.index(bytes.len());
        bytes[i] = byte;
        try_all(&bytes);
    }
}
