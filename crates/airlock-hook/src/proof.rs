//! How a client knows that the process answering at the address in `serve.json` is the airlock
//! daemon of its data directory, and not whatever bound that port after the daemon died.
//!
//! `airlock serve` keeps a secret, `daemon.key` (32 random bytes as hex, mode 0600), in the data
//! directory. A client sends a fresh random nonce with each request (`X-Airlock-Nonce`); the
//! daemon answers with `X-Airlock-Proof: HMAC-SHA256(key, DOMAIN ‖ nonce ‖ 0 ‖ status ‖ 0 ‖
//! body)`. Only a process that can read the key file can prove it, and a proof is good for one
//! request's answer only. On a new connection a client first asks `/healthz` without any token
//! and checks the proof; only then, on the same connection, does it send its token. A peer that
//! cannot prove the key never sees the token and is never believed.
//!
//! The key is as private as the data directory: a process of the same user that reads the file
//! can prove it too (see `docs/trust-model.md`).

use std::path::Path;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The daemon's secret, beside `serve.json`.
pub const DAEMON_KEY_FILE: &str = "daemon.key";
/// The request header carrying the client's nonce.
pub const NONCE_HEADER: &str = "x-airlock-nonce";
/// The answer header carrying the daemon's proof.
pub const PROOF_HEADER: &str = "x-airlock-proof";
/// The path a client asks first on a new connection (no token sent).
pub const HELLO_PATH: &str = "/healthz";

const DOMAIN: &[u8] = b"airlock.daemon-answer.v1\0";

type HmacSha256 = Hmac<Sha256>;

/// The secret a daemon proves with.
#[derive(Clone, PartialEq, Eq)]
pub struct DaemonKey([u8; 32]);

impl std::fmt::Debug for DaemonKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DaemonKey(…)")
    }
}

impl DaemonKey {
    /// 32 fresh random bytes.
    pub fn generate() -> Result<DaemonKey, getrandom::Error> {
        let mut k = [0u8; 32];
        getrandom::fill(&mut k)?;
        Ok(DaemonKey(k))
    }

    /// The key from its file's text (64 hex digits, surrounding white space ignored).
    pub fn from_hex(text: &str) -> Option<DaemonKey> {
        let t = text.trim().as_bytes();
        if t.len() != 64 {
            return None;
        }
        let mut k = [0u8; 32];
        for (i, pair) in t.chunks(2).enumerate() {
            k[i] = (hex_digit(pair[0])? << 4) | hex_digit(pair[1])?;
        }
        Some(DaemonKey(k))
    }

    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    /// The key in `data_dir`, if the file is there and well formed.
    pub fn load(data_dir: &Path) -> Option<DaemonKey> {
        let text = std::fs::read_to_string(data_dir.join(DAEMON_KEY_FILE)).ok()?;
        DaemonKey::from_hex(&text)
    }

    /// `None` never happens (HMAC takes keys of any length); it makes no proof and checks none.
    fn mac(&self, nonce: &str, status: u16, body: &[u8]) -> Option<HmacSha256> {
        let mut m = <HmacSha256 as KeyInit>::new_from_slice(&self.0).ok()?;
        m.update(DOMAIN);
        m.update(nonce.as_bytes());
        m.update(b"\0");
        m.update(status.to_string().as_bytes());
        m.update(b"\0");
        m.update(body);
        Some(m)
    }

    /// The proof for the answer `status`/`body` to the request that carried `nonce`.
    pub fn prove(&self, nonce: &str, status: u16, body: &[u8]) -> String {
        self.mac(nonce, status, body)
            .map(|m| hex(&m.finalize().into_bytes()))
            .unwrap_or_default()
    }

    /// Whether `proof` is the proof of this answer (compared in constant time).
    pub fn check(&self, nonce: &str, status: u16, body: &[u8], proof: &str) -> bool {
        let Some(given) = DaemonKey::from_hex(proof) else {
            return false;
        };
        self.mac(nonce, status, body)
            .is_some_and(|m| m.verify_slice(&given.0).is_ok())
    }
}

/// A fresh nonce for one request: 16 random bytes as hex.
pub fn fresh_nonce() -> Result<String, getrandom::Error> {
    let mut n = [0u8; 16];
    getrandom::fill(&mut n)?;
    Ok(hex(&n))
}

/// Whether a client's nonce is one a daemon answers: 32 to 128 hex digits.
pub fn is_nonce(s: &str) -> bool {
    (32..=128).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn hex_digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_binds_key_nonce_status_and_body() {
        let k = DaemonKey::generate().unwrap();
        let n = fresh_nonce().unwrap();
        assert!(is_nonce(&n));
        let p = k.prove(&n, 200, b"{\"status\":\"allowed\"}");
        assert!(k.check(&n, 200, b"{\"status\":\"allowed\"}", &p));
        assert!(k.check(&n, 200, b"{\"status\":\"allowed\"}", &p.to_uppercase()));
        let other = DaemonKey::generate().unwrap();
        assert!(!other.check(&n, 200, b"{\"status\":\"allowed\"}", &p));
        assert!(!k.check(
            &fresh_nonce().unwrap(),
            200,
            b"{\"status\":\"allowed\"}",
            &p
        ));
        assert!(!k.check(&n, 201, b"{\"status\":\"allowed\"}", &p));
        assert!(!k.check(&n, 200, b"{\"status\":\"denied\"}", &p));
        assert!(!k.check(&n, 200, b"{\"status\":\"allowed\"}", ""));
        assert!(!k.check(&n, 200, b"{\"status\":\"allowed\"}", &p[..62]));
        assert_eq!(DaemonKey::from_hex(&format!(" {}\n", k.to_hex())), Some(k));
        assert!(DaemonKey::from_hex("zz").is_none());
        assert!(DaemonKey::from_hex(&"g".repeat(64)).is_none());
        assert!(!is_nonce("abc") && !is_nonce(&"x".repeat(32)));
    }
}
