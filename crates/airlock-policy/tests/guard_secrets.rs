//! airlock's own secrets through an agent's file tools, end to end through the built-in policy:
//! `Read`/`Grep`/an MCP `read_file` of the daemon's key, the agent token, the signing keys or the
//! database deny under the shell rule's id, wherever `AIRLOCK_DATA_DIR` puts them; the address
//! file and listings stay allowed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use airlock_core::{Action, Decision, Tier};
use airlock_policy::{Context, Layer, LayerKind, Policy};
use serde_json::json;

fn ctx() -> Context {
    Context {
        cwd: Some("/work/proj".into()),
        home: Some("/home/u".into()),
        agent: Some("claude-code".into()),
        data_dir: Some("/srv/airlock".into()),
        ..Context::default()
    }
}

fn tool(name: &str, args: serde_json::Value) -> Action {
    Action::Tool {
        tool: name.into(),
        arguments: args,
    }
}

#[test]
fn file_tools_cannot_read_airlocks_secrets() {
    // an MCP filesystem server's tools, declared read-only by the user
    let user = Layer::from_str(
        LayerKind::User,
        "<test>",
        "[[tools]]\nname = \"read_file\"\nside_effects = \"read\"\ntier = 0\n",
        None,
    )
    .unwrap();
    let p = Policy::from_layers(vec![user]).unwrap();
    for a in [
        tool(
            "Read",
            json!({"file_path": "~/.local/share/airlock/daemon.key"}),
        ),
        tool(
            "Read",
            json!({"file_path": "/home/u/.local/share/airlock/agent.token"}),
        ),
        tool("read_file", json!({"path": "/srv/airlock/airlock.db"})),
        tool("Read", json!({"file_path": "/srv/airlock/keys/ledger.key"})),
        tool("Grep", json!({"pattern": "alk_", "path": "/srv/airlock"})),
        tool(
            "Grep",
            json!({"pattern": "alk_", "path": "../../home/u/.local/share/airlock"}),
        ),
    ] {
        let v = p.evaluate(&a, &ctx());
        assert_eq!(v.decision, Decision::Deny, "{a:?}: {:?}", v.reasons);
        assert_eq!(v.tier, Tier::Critical, "{a:?}");
        assert!(
            v.reasons
                .iter()
                .any(|f| f.rule_id == "secrets.read_airlock_secrets"),
            "{a:?}: {:?}",
            v.reasons
        );
    }
    for a in [
        tool(
            "Read",
            json!({"file_path": "~/.local/share/airlock/serve.json"}),
        ),
        tool(
            "Read",
            json!({"file_path": "/work/proj/docs/trust-model.md"}),
        ),
        tool(
            "Grep",
            json!({"pattern": "daemon.key", "path": "/work/proj"}),
        ),
        tool("Glob", json!({"pattern": "*", "path": "/srv/airlock"})),
    ] {
        let v = p.evaluate(&a, &ctx());
        assert_eq!(v.decision, Decision::Allow, "{a:?}: {:?}", v.reasons);
    }
}
