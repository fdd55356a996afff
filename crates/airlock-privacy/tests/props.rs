//! Properties of the scanner on arbitrary text: it never panics, its findings are ordered,
//! disjoint and on character boundaries, redaction records every value it replaced, a known key
//! put anywhere between separators is found, and restoring a redacted text's personal data
//! gives the text back when it held no secret.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::LazyLock;

use airlock_privacy::{Kind, Scanner, Selection, Vault};
use proptest::prelude::*;

static SCANNER: LazyLock<Scanner> =
    LazyLock::new(|| Scanner::builtin(&Selection::default()).unwrap());

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[ -~\n]{0,300}",
        proptest::collection::vec(
            prop_oneof![
                Just("AKIAQYLPMN5HHHFPZAM2".to_string()),
                Just("jane.doe@acme-corp.com".to_string()),
                Just("+44 20 7946 0958".to_string()),
                Just("4111 1111 1111 1111".to_string()),
                Just("key=".to_string()),
                Just("[PII:email#1]".to_string()),
                Just("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n".to_string()),
                "[a-zA-Z0-9 @:/.=\n_-]{0,20}",
            ],
            0..12
        )
        .prop_map(|v| v.join(" ")),
    ]
}

proptest! {
    #[test]
    fn findings_are_ordered_disjoint_and_on_boundaries(t in text()) {
        let f = SCANNER.scan(&t);
        for w in f.windows(2) {
            prop_assert!(w[0].span.end <= w[1].span.start);
        }
        for x in &f {
            prop_assert!(t.is_char_boundary(x.span.start) && t.is_char_boundary(x.span.end));
            prop_assert!(x.span.start < x.span.end);
        }
    }

    #[test]
    fn a_key_between_separators_is_found(pre in "[ -~\n]{0,100}", post in "[ -~\n]{0,100}") {
        let t = format!("{pre}\n AKIAQYLPMN5HHHFPZAM2 \n{post}");
        let mut v = Vault::new();
        let out = v.redact(&t, &SCANNER.scan(&t));
        prop_assert!(!out.contains("AKIAQYLPMN5HHHFPZAM2"), "{}", out);
    }

    #[test]
    fn personal_data_comes_back(t in text()) {
        let f = SCANNER.scan(&t);
        let mut v = Vault::new();
        let out = v.redact(&t, &f);
        for x in &f {
            prop_assert!(v.replaced().iter().any(|r| r.value == t[x.span.clone()]));
        }
        if f.iter().all(|x| x.kind == Kind::Personal) && !t.contains("[PII:") {
            let back = v.restorer().map_or(out.clone(), |r| r.restore(&out).into_owned());
            prop_assert_eq!(back, t);
        }
    }
}
