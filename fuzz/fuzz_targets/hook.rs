//! Arbitrary bytes as `airlock hook` input (every dialect, detected and forced; tool calls,
//! prompts and tool outputs), through the whole pipeline to the answer, and as a command line
//! for the shell analyser and the sensitive-path check. Nothing may panic, and no answer to
//! unreadable input may allow.

#![no_main]

use libfuzzer_sys::fuzz_target;

use airlock_core::Decision;
use airlock_hook::protocol::Protocol;
use airlock_hook::input::Event;
use airlock_hook::{answer, input, tools, turn};

const HOME: Option<&str> = Some("/home/fuzz");

/// The built-in policy, loaded once (the hook loads the effective one per call).
fn policy() -> &'static airlock_policy::Policy {
    static P: std::sync::OnceLock<airlock_policy::Policy> = std::sync::OnceLock::new();
    P.get_or_init(|| airlock_policy::Policy::builtin().expect("the built-in policy loads"))
}

fn text_settings() -> airlock_policy::TextSettings {
    policy().settings.text
}

/// libfuzzer-sys installs a panic hook that aborts on every panic, even one caught on purpose:
/// the analyser runs brush-parser under `catch_unwind` (it panics on inputs like `~999…9`) and
/// turns the panic into a deny. Restoring the default hook keeps such caught panics quiet
/// findings-wise; a panic that escapes this target still aborts (libfuzzer-sys catches it).
fn allow_caught_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = std::panic::take_hook();
    });
}

fuzz_target!(|data: &[u8]| {
    allow_caught_panics();
    let forced = [
        None,
        Some(Protocol::Claude),
        Some(Protocol::Codex),
        Some(Protocol::Gemini),
        Some(Protocol::Copilot),
    ];
    for f in forced {
        match input::parse_event(data, f) {
            Ok(Event::Prompt(p)) => {
                let dir = std::env::temp_dir().join("airlock-fuzz-crisis");
                let marks = turn::Marks {
                    data_dir: &dir,
                    report: &|_| {},
                };
                let a = turn::decide_prompt(&p, &text_settings(), &marks);
                assert!(a.exit == 0 && serde_json::from_str::<serde_json::Value>(&a.stdout).is_ok());
            }
            Ok(Event::Output(o)) => {
                let a = turn::decide_output(&o, &text_settings());
                assert!(a.exit == 0 && serde_json::from_str::<serde_json::Value>(&a.stdout).is_ok());
            }
            Ok(Event::Tool(call)) => {
                let v = tools::assess_with(policy(), &call, HOME);
                let a = answer::answer(call.protocol, &v);
                assert_eq!(a.exit, 0);
                let json: serde_json::Value =
                    serde_json::from_str(&a.stdout).expect("answers are JSON");
                if v.assessment.decision != Decision::Allow {
                    assert!(!a.stdout.contains(r#""allow""#), "{}", a.stdout);
                }
                assert!(json.is_object());
            }
            Err(e) => {
                let a = answer::refuse(&e);
                assert!(!a.stdout.contains(r#""allow""#), "{}", a.stdout);
                assert!(a.exit == answer::EXIT_BLOCK || !a.stdout.is_empty());
            }
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = airlock_shell::analyse(text);
        if let Some(f) = airlock_shell::paths::write_target_finding(text, HOME) {
            assert_ne!(f.decision, Decision::Allow);
        }
    }
});
