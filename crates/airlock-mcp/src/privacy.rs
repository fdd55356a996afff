//! Secrets in a server's sampling request: the text of `sampling/createMessage` goes to the
//! client's model, often a remote one, so every secret in its string values (system prompt,
//! message texts, tool results) is replaced one way by a typed placeholder
//! (`[SECRET:<rule>#n]`, airlock-privacy) before the client sees it. Personal data is left as
//! it is here: the answer goes back to the server, not to a person who would need it restored.

use std::sync::LazyLock;

use airlock_privacy::{Scanner, Selection, Vault};
use serde_json::Value;

static SECRETS: LazyLock<Option<Scanner>> = LazyLock::new(|| {
    Scanner::builtin(&Selection {
        personal: false,
        ..Selection::default()
    })
    .ok()
});

/// Replaces the secrets in every string of `v`; the rule ids of what was replaced, or `Err`
/// when the rules cannot be loaded (the request cannot be analysed).
pub fn scrub_secrets(v: &mut Value) -> Result<Vec<String>, String> {
    let scanner = SECRETS.as_ref().ok_or("the privacy rules did not load")?;
    let mut vault = Vault::new();
    walk(scanner, &mut vault, v);
    let mut ids: Vec<String> = vault
        .replaced()
        .iter()
        .map(|r| r.rule.to_string())
        .collect();
    ids.dedup();
    Ok(ids)
}

fn walk(s: &Scanner, vault: &mut Vault, v: &mut Value) {
    match v {
        Value::String(t) => {
            let found = s.scan(t);
            if !found.is_empty() {
                *t = vault.redact(t, &found);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| walk(s, vault, x)),
        Value::Object(o) => o.values_mut().for_each(|x| walk(s, vault, x)),
        _ => {}
    }
}
