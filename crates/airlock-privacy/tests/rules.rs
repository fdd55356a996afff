//! The rule packs' own examples: every `match` example is found by its rule (and passes the
//! prefilter), no `not_match` example is found by its rule, and every pack loads.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_privacy::{Kind, Scanner, Selection, Vault, load};

fn scanner() -> Scanner {
    Scanner::builtin(&Selection::default()).unwrap()
}

#[test]
fn every_positive_example_is_found_by_its_rule() {
    let s = scanner();
    let mut bad = Vec::new();
    for r in s.rules() {
        assert!(!r.examples.is_empty(), "{} has no examples", r.id);
        for ex in &r.examples {
            if !s.scan(ex).iter().any(|f| *f.rule == *r.id) {
                bad.push(format!("{}: missed {ex:?} (found {:?})", r.id, s.scan(ex)));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn every_positive_example_passes_the_prefilter() {
    let s = scanner();
    for r in s.rules() {
        for ex in &r.examples {
            assert!(s.prefilter_admits(&r.id, ex), "{}: {ex:?}", r.id);
            if !r.keywords.is_empty() {
                let l = ex.to_ascii_lowercase();
                assert!(
                    r.keywords.iter().any(|k| l.contains(k.as_str())),
                    "{}: {ex:?}",
                    r.id
                );
            }
        }
    }
}

#[test]
fn no_negative_example_is_found_by_its_rule() {
    let s = scanner();
    let mut bad = Vec::new();
    for r in s.rules() {
        assert!(
            !r.counter_examples.is_empty(),
            "{} has no counter-examples",
            r.id
        );
        for ex in &r.counter_examples {
            if s.scan(ex).iter().any(|f| *f.rule == *r.id) {
                bad.push(format!("{}: found in {ex:?}", r.id));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn hashes_uuids_git_shas_and_images_are_not_secrets() {
    let s = scanner();
    let png = format!(
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg{}",
        "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODk"
            .repeat(200)
    );
    let texts = [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b\nAuthor: a",
        "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "id = \"123e4567-e89b-12d3-a456-426614174000\"",
        "integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
        "SECRET_HASH=5d41402abc4b2a76b9719d911017c592",
        "TOKEN_ID=9b2c1f0e-8d7a-4b6c-9e5f-3a2b1c0d9e8f",
        png.as_str(),
    ];
    for t in texts {
        let found: Vec<_> = s
            .scan(t)
            .into_iter()
            .filter(|f| f.kind == Kind::Secret)
            .collect();
        assert!(found.is_empty(), "{t:.80}: {found:?}");
    }
}

#[test]
fn a_selection_turns_kinds_and_rules_off() {
    let only_secrets = Scanner::builtin(&Selection {
        personal: false,
        ..Selection::default()
    })
    .unwrap();
    assert!(only_secrets.scan("jane.doe@acme-corp.com").is_empty());
    let no_email = Scanner::builtin(&Selection {
        off: vec!["email".into()],
        ..Selection::default()
    })
    .unwrap();
    assert!(no_email.scan("jane.doe@acme-corp.com").is_empty());
    assert_eq!(no_email.scan("+44 20 7946 0958").len(), 1);
}

#[test]
fn the_packs_load_with_unique_ids() {
    let rules = load().unwrap();
    assert!(rules.len() >= 25);
}

#[test]
fn redaction_leaves_no_value_behind() {
    let s = scanner();
    let text =
        "DATABASE_URL=postgres://app:Sup3rS3cret!@db.internal:5432/app\nemail ana.lopez@proton.me";
    let mut v = Vault::new();
    let out = v.redact(text, &s.scan(text));
    assert!(!out.contains("Sup3rS3cret!"), "{out}");
    assert!(!out.contains("ana.lopez@proton.me"), "{out}");
    assert!(out.contains("[SECRET:connection_string#1]"), "{out}");
}
