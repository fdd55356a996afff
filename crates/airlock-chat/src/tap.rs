//! What a button carries back: `al1.<nonce>.<choice>.<mac>`, at most 45 bytes (Telegram's
//! `callback_data` holds 64). The nonce names the stored message (and through it the approval);
//! the MAC (HMAC-SHA256 under a secret the store keeps, truncated to 128 bits, base64url) binds
//! the nonce and the choice to the channel and the chat the message was sent to. A tap whose
//! data was made up, altered, or carried into another chat does not verify; a replayed one
//! verifies but finds its approval decided.

use airlock_confirm::{AnswerScope, Choice};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The longest data a tap may carry (anything longer is refused unread).
pub const MAX_TAP: usize = 64;

const PREFIX: &str = "al1";
const MAC_BYTES: usize = 16;

/// What a person chose with a button.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    ApproveOnce,
    ApproveSession,
    Deny,
    /// Accept the grant airlock learned from this approval and its earlier ones.
    Learn,
    /// Approve (once) every approval a session's summary message lists that is still pending.
    ApproveAll,
    /// Deny every approval a session's summary message lists that is still pending.
    DenyAll,
}

impl Pick {
    fn letter(self) -> char {
        match self {
            Pick::ApproveOnce => 'o',
            Pick::ApproveSession => 's',
            Pick::Deny => 'd',
            Pick::Learn => 'g',
            Pick::ApproveAll => 'a',
            Pick::DenyAll => 'x',
        }
    }

    fn of_letter(c: &str) -> Option<Pick> {
        match c {
            "o" => Some(Pick::ApproveOnce),
            "s" => Some(Pick::ApproveSession),
            "d" => Some(Pick::Deny),
            "g" => Some(Pick::Learn),
            "a" => Some(Pick::ApproveAll),
            "x" => Some(Pick::DenyAll),
            _ => None,
        }
    }

    pub fn choice(self) -> Choice {
        match self {
            Pick::Deny | Pick::DenyAll => Choice::Deny,
            Pick::ApproveOnce | Pick::ApproveSession | Pick::Learn | Pick::ApproveAll => {
                Choice::Approve
            }
        }
    }

    pub fn scope(self) -> AnswerScope {
        match self {
            Pick::ApproveSession => AnswerScope::Session,
            _ => AnswerScope::Once,
        }
    }
}

/// A tap whose MAC verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tap {
    pub nonce: String,
    pub pick: Pick,
}

fn mac(key: &[u8], channel: &str, chat: &str, nonce: &str, pick: Pick) -> Vec<u8> {
    // HMAC takes keys of any length; an empty MAC would never verify.
    let Ok(mut m) = <Hmac<Sha256> as KeyInit>::new_from_slice(key) else {
        return Vec::new();
    };
    for part in [
        b"airlock.chat.tap.v1".as_slice(),
        channel.as_bytes(),
        chat.as_bytes(),
        nonce.as_bytes(),
    ] {
        m.update(part);
        m.update(b"\0");
    }
    m.update(pick.letter().to_string().as_bytes());
    let mut out = m.finalize().into_bytes().to_vec();
    out.truncate(MAC_BYTES);
    out
}

/// The data of the button `pick` on the message with `nonce` in `chat` of `channel`.
pub fn encode(key: &[u8], channel: &str, chat: &str, nonce: &str, pick: Pick) -> String {
    format!(
        "{PREFIX}.{nonce}.{}.{}",
        pick.letter(),
        URL_SAFE_NO_PAD.encode(mac(key, channel, chat, nonce, pick))
    )
}

/// The tap `data` says, if its MAC is right for `chat` of `channel`.
pub fn verify(key: &[u8], channel: &str, chat: &str, data: &str) -> Option<Tap> {
    if data.len() > MAX_TAP {
        return None;
    }
    let mut parts = data.split('.');
    let (Some(PREFIX), Some(nonce), Some(letter), Some(sig), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return None;
    };
    if nonce.is_empty() || nonce.len() > 32 || !nonce.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let pick = Pick::of_letter(letter)?;
    let given = URL_SAFE_NO_PAD.decode(sig).ok()?;
    let want = mac(key, channel, chat, nonce, pick);
    bool::from(subtle::ConstantTimeEq::ct_eq(
        given.as_slice(),
        want.as_slice(),
    ))
    .then(|| Tap {
        nonce: nonce.to_string(),
        pick,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const K: &[u8] = b"0123456789abcdef0123456789abcdef";
    const N: &str = "00112233445566778899aabbccddeeff";

    #[test]
    fn round_trip_fits_and_binds() {
        for pick in [
            Pick::ApproveOnce,
            Pick::ApproveSession,
            Pick::Deny,
            Pick::Learn,
            Pick::ApproveAll,
            Pick::DenyAll,
        ] {
            let d = encode(K, "telegram:ops", "-1001", N, pick);
            assert!(d.len() <= MAX_TAP, "{} bytes", d.len());
            assert_eq!(
                verify(K, "telegram:ops", "-1001", &d),
                Some(Tap {
                    nonce: N.into(),
                    pick
                })
            );
            // another chat, another channel, another key
            assert_eq!(verify(K, "telegram:ops", "-1002", &d), None);
            assert_eq!(verify(K, "telegram:dev", "-1001", &d), None);
            assert_eq!(verify(b"other", "telegram:ops", "-1001", &d), None);
        }
        // deny's MAC does not approve
        let d = encode(K, "c", "1", N, Pick::Deny);
        assert_eq!(verify(K, "c", "1", &d.replace(".d.", ".o.")), None);
        assert_eq!(verify(K, "c", "1", "al1.zz.o.AAAA"), None);
        assert_eq!(verify(K, "c", "1", ""), None);
        assert_eq!(verify(K, "c", "1", &format!("{d}.x")), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn arbitrary_data_never_verifies_or_panics(s in "\\PC{0,80}") {
            prop_assert_eq!(verify(K, "c", "1", &s), None);
        }
    }
}
