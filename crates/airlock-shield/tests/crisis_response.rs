//! The crisis response in the person's language and the system text the model is given.
//! The language recogniser is measured on the team's labelled sets (`datasets/text/crisis`
//! and `datasets/text/multilingual`), which its word lists were not built from; the system
//! texts are pinned by snapshots.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use airlock_shield::{CrisisResponse, Direction, TextVerdict};

fn samples(dir: &str) -> Vec<(String, String)> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../datasets/text");
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(format!("{root}/{dir}"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    for f in files {
        for line in std::fs::read_to_string(&f).unwrap().lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let lang = v["lang"].as_str().unwrap_or("en").to_string();
            out.push((lang, v["text"].as_str().unwrap().to_string()));
        }
    }
    out
}

/// Per language of the response: the share of its texts recognised as it; for every other
/// language: the share that falls back to the default (a wrong answer there is resources in a
/// language the person may not read).
fn tally(dir: &str) -> (BTreeMap<String, (usize, usize)>, String) {
    let r = CrisisResponse::builtin().unwrap();
    let d = r.detector();
    let ours = r.languages();
    let mut tally: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (lang, text) in samples(dir) {
        let got = d.detect(&text);
        let e = tally.entry(lang.clone()).or_default();
        e.1 += 1;
        let right = if ours.contains(&lang.as_str()) {
            got == Some(lang.as_str()) || (got.is_none() && lang == r.lang)
        } else {
            got.is_none() || got == Some(r.lang.as_str())
        };
        if right {
            e.0 += 1;
        }
    }
    let mut report = format!("{dir}:\n");
    for (lang, (ok, n)) in &tally {
        report.push_str(&format!(
            "  {lang}: {ok}/{n} ({:.3})\n",
            *ok as f64 / *n as f64
        ));
    }
    println!("{report}");
    (tally, report)
}

/// The word lists were written from knowledge of the languages and widened once after looking
/// at the mistakes on `datasets/text/multilingual` (prompts of every kind); the crisis set,
/// whose mistakes were not looked at, is the held-out measure the floors guard.
#[test]
fn the_person_s_language_is_recognised_on_held_out_sets() {
    let (held_out, report) = tally("crisis");
    for (lang, floor) in [
        ("en", 0.98),
        ("es", 0.9),
        ("de", 0.95),
        ("fr", 0.95),
        ("pt", 0.85),
    ] {
        let (ok, n) = held_out[lang];
        assert!(n >= 100, "{lang}: {n} texts");
        assert!(
            ok as f64 / n as f64 >= floor,
            "{lang} below {floor}:\n{report}"
        );
    }
    let (tuned, report) = tally("multilingual");
    for lang in ["es", "de", "fr", "pt"] {
        let (ok, n) = tuned[lang];
        assert!(ok as f64 / n as f64 >= 0.85, "{lang}:\n{report}");
    }
}

#[test]
fn a_crisis_verdict_carries_the_response_in_the_person_s_language() {
    for (text, lang, question) in [
        (
            "I want to kill myself tonight",
            "en",
            "Are you safe right now?",
        ),
        (
            "quiero morirme, ya no puedo más",
            "es",
            "¿Estás a salvo en este momento?",
        ),
        (
            "ich will nicht mehr leben",
            "de",
            "Bist du gerade in Sicherheit?",
        ),
        (
            "je veux mourir, je n'en peux plus",
            "fr",
            "Es-tu en sécurité en ce moment ?",
        ),
        ("eu quero me matar", "pt", "Você está em segurança agora?"),
    ] {
        let r = airlock_shield::scan(text, Direction::User);
        assert!(r.verdict.is_crisis(), "{text}: {:?}", r.verdict);
        let a = r.crisis.unwrap();
        assert_eq!(a.lang, lang, "{text}");
        assert_eq!(a.safety_question, question);
        assert!(a.text().starts_with(question), "the safety question first");
    }
    assert_eq!(
        airlock_shield::scan("how do I list files", Direction::User).verdict,
        TextVerdict::Clean
    );
}

#[test]
fn the_system_text_in_crisis_is_pinned() {
    let r = CrisisResponse::builtin().unwrap();
    for lang in ["en", "es", "de", "fr", "pt"] {
        let g = r.for_lang(lang);
        insta::assert_snapshot!(format!("system_text_{lang}"), r.system_text(&g, false));
    }
    insta::assert_snapshot!(
        "system_text_en_under_attack",
        r.system_text(&r.for_lang("en"), true)
    );
    insta::assert_snapshot!("guidance_es", r.for_lang("es").text());
    let t = r.system_text(&r.for_lang("en"), false);
    for must in [
        "Are you safe right now?",
        "988",
        "741741",
        "Never give methods",
        "doses",
        "heights",
        "a story, a hypothetical",
        "asking for a friend",
    ] {
        assert!(t.contains(must), "{must}");
    }
}
