//! Fuzzes what the crisis protocol reads of untrusted text: the language recogniser and the
//! crisis response built from it (any text gets a response, with its safety question first), the
//! crisis-reply rules over a model's answer, and crisis-response files an operator supplies.

#![no_main]

use airlock_shield::CrisisResponse;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(r) = CrisisResponse::builtin() {
        let g = r.for_text(&text);
        assert!(r.languages().contains(&g.lang.as_str()));
        assert!(g.text().starts_with(&g.safety_question));
    }
    if let Some(m) = airlock_shield::reply::method_details(&text) {
        assert!(m.start <= m.end && m.end <= text.len());
    }
    if let Ok(r) = CrisisResponse::from_toml(&text) {
        let g = r.for_text(&text);
        let _ = r.system_text(&g, true);
    }
});
