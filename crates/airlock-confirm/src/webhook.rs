//! The webhook channel: when an approval opens for a person, a JSON POST signed with
//! `X-Airlock-Signature: sha256=<hex HMAC-SHA256(secret, body)>` (and `X-Airlock-Timestamp`,
//! unix ms, also inside the signed body) carrying one-time approve/deny links. A link token is
//! `<nonce>.<hex HMAC of the nonce>`: the signature proves the broker made it; the store row
//! (`approval_links`) says which approval and decision it answers, and is spent once.

use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use serde_json::json;
use sha2::Sha256;

use crate::ConfirmError;
use crate::config::WebhookConfig;
use crate::model::{Approval, Choice};

type HmacSha256 = Hmac<Sha256>;

/// The signature header's value for `body`.
pub fn signature(secret: &[u8], body: &[u8]) -> String {
    format!("sha256={}", hex::encode(mac(secret, &[body])))
}

/// Whether `header` is the signature of `body` (constant-time comparison).
pub fn verify_signature(secret: &[u8], body: &[u8], header: &str) -> bool {
    let Some(hexsig) = header.strip_prefix("sha256=") else {
        return false;
    };
    let Ok(given) = hex::decode(hexsig) else {
        return false;
    };
    let want = mac(secret, &[body]);
    subtle::ConstantTimeEq::ct_eq(given.as_slice(), want.as_slice()).into()
}

fn mac(secret: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    // HMAC accepts keys of any length, so this cannot fail; an empty MAC would never verify.
    let Ok(mut m) = <HmacSha256 as KeyInit>::new_from_slice(secret) else {
        return Vec::new();
    };
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().to_vec()
}

/// A new link token for a stored nonce.
pub(crate) fn token(secret: &[u8], nonce: &str) -> String {
    format!(
        "{nonce}.{}",
        hex::encode(mac(secret, &[b"airlock.link.v1\0", nonce.as_bytes()]))
    )
}

/// The nonce of a token whose signature is valid.
pub(crate) fn nonce_of<'t>(secret: &[u8], token: &'t str) -> Option<&'t str> {
    let (nonce, sig) = token.split_once('.')?;
    if nonce.is_empty() || nonce.len() > 64 || !nonce.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let given = hex::decode(sig).ok()?;
    let want = mac(secret, &[b"airlock.link.v1\0", nonce.as_bytes()]);
    bool::from(subtle::ConstantTimeEq::ct_eq(
        given.as_slice(),
        want.as_slice(),
    ))
    .then_some(nonce)
}

/// Sends webhook deliveries.
#[derive(Debug, Clone)]
pub(crate) struct Webhook {
    client: reqwest::Client,
    pub(crate) config: WebhookConfig,
}

impl Webhook {
    pub(crate) fn new(config: WebhookConfig) -> Result<Webhook, ConfirmError> {
        let client =
            crate::http::client(Duration::from_secs(10)).map_err(ConfirmError::Internal)?;
        Ok(Webhook { client, config })
    }

    /// Posts the opened approval with its links (`links` pairs a choice with its URL).
    pub(crate) async fn send(
        &self,
        a: &Approval,
        links: &[(Choice, String)],
        now_ms: i64,
    ) -> Result<(), String> {
        let links: serde_json::Map<String, serde_json::Value> = links
            .iter()
            .map(|(c, url)| (c.as_str().to_string(), json!(url)))
            .collect();
        let body = json!({
            "event": "approval.opened",
            "timestamp": now_ms,
            "approval": {
                "id": a.id,
                "agent": a.agent,
                "session": a.session,
                "action": a.action,
                "action_sha256": a.action_sha256,
                "tier": a.tier,
                "reasons": a.reasons,
                "confirm": a.confirm,
                "code_required": a.code_required,
                "deadline_ms": a.deadline_ms,
            },
            "links": links,
        });
        let bytes = serde_json::to_vec(&body).map_err(|e| e.to_string())?;
        let resp = self
            .client
            .post(&self.config.url)
            .header("content-type", "application/json")
            .header(
                "x-airlock-signature",
                signature(&self.config.secret, &bytes),
            )
            .header("x-airlock-timestamp", now_ms.to_string())
            .body(bytes)
            .send()
            .await
            .map_err(|e| format!("webhook POST failed: {e}"))?;
        if resp.status().is_success() {
            Ok(())
        } else {
            Err(format!("webhook answered HTTP {}", resp.status().as_u16()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_and_tokens() {
        let s = signature(b"k", b"{}");
        assert!(s.starts_with("sha256=") && s.len() == 7 + 64);
        assert!(verify_signature(b"k", b"{}", &s));
        assert!(!verify_signature(b"other", b"{}", &s));
        assert!(!verify_signature(b"k", b"{ }", &s));
        let t = token(b"k", "00ff");
        assert_eq!(nonce_of(b"k", &t), Some("00ff"));
        assert_eq!(nonce_of(b"x", &t), None);
        assert_eq!(nonce_of(b"k", "00ff.abcd"), None);
        assert_eq!(nonce_of(b"k", "garbage"), None);
    }
}
