//! The privacy scanner on arbitrary text: no panic, findings disjoint and on character
//! boundaries, and personal data restored exactly when no secret was replaced.
#![no_main]

use std::sync::LazyLock;

use airlock_privacy::{Kind, Scanner, Selection, Vault};
use libfuzzer_sys::fuzz_target;

static SCANNER: LazyLock<Option<Scanner>> =
    LazyLock::new(|| Scanner::builtin(&Selection::default()).ok());

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Some(scanner) = SCANNER.as_ref() else {
        panic!("the built-in rules do not load");
    };
    let found = scanner.scan(text);
    for w in found.windows(2) {
        assert!(w[0].span.end <= w[1].span.start);
    }
    for f in &found {
        assert!(text.is_char_boundary(f.span.start) && text.is_char_boundary(f.span.end));
    }
    let mut vault = Vault::new();
    let out = vault.redact(text, &found);
    if found.iter().all(|f| f.kind == Kind::Personal) && !text.contains("[PII:") {
        let back = vault
            .restorer()
            .map_or(out.clone(), |r| r.restore(&out).into_owned());
        assert_eq!(back, text);
        let mut chunks = vault.restorer().map(|r| r.stream());
        if let Some(st) = chunks.as_mut() {
            let mid = (0..=out.len() / 2).rev().find(|i| out.is_char_boundary(*i)).unwrap_or(0);
            let mut s = st.push(&out[..mid]);
            s.push_str(&st.push(&out[mid..]));
            s.push_str(&st.finish());
            assert_eq!(s, text);
        }
    }
});
