//! The privacy filter's receipts, one use-case for every surface that sends text to a remote
//! model: the proxy's requests and an MCP server's sampling requests (in-process or through
//! `POST /v1/privacy`). What the filter replaced or refused is one [`Event::Privacy`]: per value
//! its rule, its kind and a salted hash, never the value. The salt is random per process and
//! never leaves it, so a value's hash is the same within a run (a repeated leak is visible) and
//! a short value cannot be found by hashing candidates.

use std::sync::LazyLock;

use airlock_ledger::canonical::sha256_hex;
use airlock_privacy::{Kind, Replaced, Scanner, Selection, Vault};
use serde_json::Value;

use crate::ConfirmError;
use crate::broker::Broker;
use crate::event::{Event, Origin};

static SALT: LazyLock<Option<[u8; 32]>> = LazyLock::new(|| {
    let mut salt = [0u8; 32];
    getrandom::fill(&mut salt).ok().map(|()| salt)
});

/// The built-in secret rules (personal data is left as it is: see [`Broker::replace_secrets`]).
static SECRETS: LazyLock<Option<Scanner>> = LazyLock::new(|| {
    Scanner::builtin(&Selection {
        personal: false,
        ..Selection::default()
    })
    .ok()
});

/// A value's salted hash, as receipts record it.
pub fn salted(value: &str) -> Result<String, ConfirmError> {
    let salt = SALT
        .as_ref()
        .ok_or_else(|| ConfirmError::Internal("no randomness for the privacy salt".into()))?;
    let mut b = Vec::with_capacity(salt.len() + value.len());
    b.extend_from_slice(salt);
    b.extend_from_slice(value.as_bytes());
    Ok(sha256_hex(&b))
}

/// The receipt of what the filter replaced (or, `refused`, refused to send) in a request bound
/// for `surface` (`proxy`, `mcp:<server>:sampling`).
pub fn privacy_event(
    origin: Origin,
    surface: &str,
    found: &[Replaced],
    refused: bool,
) -> Result<Event, ConfirmError> {
    let findings = found
        .iter()
        .map(|r| {
            let kind = match r.kind {
                Kind::Secret => "secret",
                Kind::Personal => "personal",
            };
            Ok((r.rule.to_string(), kind.to_string(), salted(&r.value)?))
        })
        .collect::<Result<Vec<_>, ConfirmError>>()?;
    Ok(Event::Privacy {
        origin,
        surface: surface.to_string(),
        findings,
        handling: if refused { "refuse" } else { "placeholder" }.to_string(),
        refused,
    })
}

/// What [`Broker::replace_secrets`] replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretsReplaced {
    /// The rule ids of the secrets replaced, in order of first sight, each once.
    pub rules: Vec<String>,
    /// The receipt recording them.
    pub receipt: String,
}

impl Broker {
    /// Records what the privacy filter replaced or refused (see [`privacy_event`]); returns the
    /// receipt's id.
    pub async fn record_privacy(
        &self,
        origin: Origin,
        surface: &str,
        found: &[Replaced],
        refused: bool,
    ) -> Result<String, ConfirmError> {
        self.record_event(&privacy_event(origin, surface, found, refused)?)
            .await
    }

    /// Replaces every secret in the strings of `value` one way by a typed placeholder
    /// (`[SECRET:<rule>#n]`) and records the receipt before returning: `None` when there was
    /// none. For a request whose answer goes back to a program, not to a person (an MCP
    /// server's sampling request), so personal data is left as it is: nobody would need it
    /// restored. An error when the rules cannot be loaded or the receipt written: the caller
    /// must not send the value.
    pub async fn replace_secrets(
        &self,
        origin: Origin,
        surface: &str,
        value: &mut Value,
    ) -> Result<Option<SecretsReplaced>, ConfirmError> {
        let scanner = SECRETS
            .as_ref()
            .ok_or_else(|| ConfirmError::Internal("the privacy rules did not load".into()))?;
        let mut vault = Vault::new();
        walk(scanner, &mut vault, value);
        if vault.is_empty() {
            return Ok(None);
        }
        let receipt = self
            .record_privacy(origin, surface, vault.replaced(), false)
            .await?;
        let mut rules: Vec<String> = Vec::new();
        for r in vault.replaced() {
            if !rules.iter().any(|x| **x == *r.rule) {
                rules.push(r.rule.to_string());
            }
        }
        Ok(Some(SecretsReplaced { rules, receipt }))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_salted_hash_is_stable_within_the_process_and_not_the_plain_hash() {
        let a = salted("AKIAQYLPMN5HHHFPZAM2").unwrap();
        assert_eq!(a, salted("AKIAQYLPMN5HHHFPZAM2").unwrap());
        assert_ne!(a, sha256_hex(b"AKIAQYLPMN5HHHFPZAM2"));
        assert_ne!(a, salted("AKIAQYLPMN5HHHFPZAM3").unwrap());
    }
}
