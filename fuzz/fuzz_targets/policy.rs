//! Fuzzes policy files (a project policy comes with whatever repository the agent works in): any
//! bytes, as any layer, must load or fail with an error, never panic; a policy that loads must
//! decide a fixed set of actions without panicking, and never allow `rm -rf /`.

#![no_main]

use airlock_core::{Action, Decision};
use airlock_policy::{Context, Layer, LayerKind, Policy};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for kind in [LayerKind::User, LayerKind::Project, LayerKind::Managed] {
        let Ok(layer) = Layer::from_str(kind, "<fuzz>", text, None) else {
            continue;
        };
        let Ok(p) = Policy::from_layers(vec![layer]) else {
            continue;
        };
        let ctx = Context {
            cwd: Some("/w".into()),
            ..Context::default()
        };
        for a in [
            Action::shell("git push --force origin main && ls"),
            Action::Tool {
                tool: "mcp__x__y".into(),
                arguments: serde_json::json!({"a": [1, {"b": null}]}),
            },
            Action::FileWrite {
                path: "../etc/passwd".into(),
                content: None,
                edit: true,
            },
        ] {
            let _ = p.evaluate(&a, &ctx);
        }
        assert_eq!(p.evaluate(&Action::shell("rm -rf /"), &ctx).decision, Decision::Deny);
    }
});
