//! The trust registry: an append-only, hash-chained list of signed key events (added, rotated,
//! revoked), replayed from the first event to learn which key was valid when. The first event
//! adds the admin key and is signed by that key (the trust anchor, printed by `airlock ledger
//! verify` so it can be compared out of band). Every later event is signed by an admin key in
//! force, or — for a rotation or a revocation — by the key it replaces or revokes.
//!
//! A public key appears in the registry once, with one role, so the ledger's signing key can
//! never also be an approver's key.

use std::collections::HashMap;

use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};

use crate::canonical::{sha256_hex, to_canonical};
use crate::keys::{KeyRole, key_id, parse_public, verify_hex};
use crate::{LedgerError, LedgerKey, time};

pub const MAX_EVENT_BYTES: usize = 16 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum KeyChange {
    Added {
        key_id: String,
        public_key: String,
        role: KeyRole,
    },
    Rotated {
        key_id: String,
        new_key_id: String,
        new_public_key: String,
    },
    Revoked {
        key_id: String,
        #[serde(default)]
        reason: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistryEvent {
    pub v: u32,
    pub seq: u64,
    /// Hash of the previous event (`None` for the first).
    pub prev: Option<String>,
    pub time: String,
    pub change: KeyChange,
    pub signer: String,
    pub sig: String,
}

impl RegistryEvent {
    fn signing_bytes(&self) -> Result<Vec<u8>, LedgerError> {
        let mut v =
            serde_json::to_value(self).map_err(|e| LedgerError::malformed("registry event", e))?;
        if let Some(m) = v.as_object_mut() {
            m.remove("sig");
        }
        to_canonical(&v)
    }

    pub fn canonical_bytes(&self) -> Result<Vec<u8>, LedgerError> {
        to_canonical(self)
    }

    pub fn hash_hex(&self) -> Result<String, LedgerError> {
        Ok(sha256_hex(&self.canonical_bytes()?))
    }

    /// Parses stored bytes; only the canonical form is accepted.
    pub fn parse(bytes: &[u8]) -> Result<RegistryEvent, LedgerError> {
        if bytes.len() > MAX_EVENT_BYTES {
            return Err(LedgerError::TooLarge {
                what: "registry event",
                limit: MAX_EVENT_BYTES,
            });
        }
        let e: RegistryEvent = serde_json::from_slice(bytes)
            .map_err(|e| LedgerError::malformed("registry event", e))?;
        if e.canonical_bytes()? != bytes {
            return Err(LedgerError::BadRegistryEvent {
                seq: e.seq,
                detail: "not in canonical form".into(),
            });
        }
        Ok(e)
    }
}

/// One key as the registry knows it after replay.
#[derive(Debug, Clone)]
pub struct KeyState {
    pub key_id: String,
    pub role: KeyRole,
    pub public: VerifyingKey,
    /// Valid from this time (inclusive) …
    pub valid_from: String,
    /// … until this time (exclusive), once rotated away or revoked.
    pub valid_until: Option<String>,
}

/// The replayed registry.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    keys: HashMap<String, KeyState>,
    events: Vec<RegistryEvent>,
    head: Option<String>,
}

impl Registry {
    /// Replays events from the first; the first bad event stops the replay and is named.
    pub fn replay(
        events: impl IntoIterator<Item = RegistryEvent>,
    ) -> Result<Registry, LedgerError> {
        let mut r = Registry::default();
        for e in events {
            r.apply(e)?;
        }
        Ok(r)
    }

    pub fn events(&self) -> &[RegistryEvent] {
        &self.events
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    pub fn key(&self, key_id: &str) -> Option<&KeyState> {
        self.keys.get(key_id)
    }

    /// The key id of the first admin key: the trust anchor.
    pub fn anchor(&self) -> Option<&str> {
        match self.events.first().map(|e| &e.change) {
            Some(KeyChange::Added { key_id, .. }) => Some(key_id),
            _ => None,
        }
    }

    /// The key `key_id` if it has `role` and was in force at `at`.
    pub fn key_valid_at(
        &self,
        key_id: &str,
        role: KeyRole,
        at: &str,
    ) -> Result<&VerifyingKey, String> {
        let k = self
            .keys
            .get(key_id)
            .ok_or_else(|| format!("key {key_id} is not in the trust registry"))?;
        if k.role != role {
            return Err(format!(
                "key {key_id} is a {:?} key, not a {:?} key",
                k.role, role
            ));
        }
        if at < k.valid_from.as_str() {
            return Err(format!(
                "signed at {at}, before key {key_id} was added ({})",
                k.valid_from
            ));
        }
        if let Some(until) = &k.valid_until
            && at >= until.as_str()
        {
            return Err(format!(
                "signed at {at}, after key {key_id} was rotated or revoked ({until})"
            ));
        }
        Ok(&k.public)
    }

    fn in_force(&self, key_id: &str, at: &str) -> Option<&KeyState> {
        self.keys.get(key_id).filter(|k| {
            k.valid_from.as_str() <= at && k.valid_until.as_deref().is_none_or(|u| at < u)
        })
    }

    /// Validates one more event and applies it.
    pub fn apply(&mut self, e: RegistryEvent) -> Result<(), LedgerError> {
        let seq = e.seq;
        let bad = |d: String| LedgerError::BadRegistryEvent { seq, detail: d };
        if e.v != crate::FORMAT_VERSION {
            return Err(bad(format!("unsupported version {}", e.v)));
        }
        if e.seq != self.events.len() as u64 {
            return Err(bad(format!("expected event number {}", self.events.len())));
        }
        if e.prev != self.head {
            return Err(bad(
                "prev does not match the hash of the previous event".into()
            ));
        }
        time::check("registry event time", &e.time).map_err(|x| bad(x.to_string()))?;
        if let Some(last) = self.events.last()
            && e.time < last.time
        {
            return Err(bad("time goes backwards".into()));
        }
        let msg = e.signing_bytes()?;
        // Who may sign this event, and with which public key.
        let signer_key: VerifyingKey = match &e.change {
            KeyChange::Added {
                key_id: kid,
                public_key,
                role,
            } => {
                let pk = parse_public(kid, public_key)?;
                if key_id(&pk) != *kid {
                    return Err(bad(format!("key id {kid} does not match its public key")));
                }
                if self.keys.contains_key(kid) {
                    return Err(bad(format!(
                        "key {kid} is already registered (a key has one role, once)"
                    )));
                }
                if self.events.is_empty() {
                    if *role != KeyRole::Admin || e.signer != *kid {
                        return Err(bad(
                            "the first event must add an admin key signed by itself".into(),
                        ));
                    }
                    pk
                } else {
                    self.admin_signer(&e.signer, &e.time).map_err(bad)?
                }
            }
            KeyChange::Rotated {
                key_id: old,
                new_key_id,
                new_public_key,
            } => {
                let pk = parse_public(new_key_id, new_public_key)?;
                if key_id(&pk) != *new_key_id {
                    return Err(bad(format!(
                        "key id {new_key_id} does not match its public key"
                    )));
                }
                if self.keys.contains_key(new_key_id) {
                    return Err(bad(format!("key {new_key_id} is already registered")));
                }
                let k = self
                    .in_force(old, &e.time)
                    .ok_or_else(|| bad(format!("key {old} is not in force")))?;
                if e.signer == *old {
                    k.public
                } else {
                    self.admin_signer(&e.signer, &e.time).map_err(bad)?
                }
            }
            KeyChange::Revoked { key_id: old, .. } => {
                let k = self
                    .in_force(old, &e.time)
                    .ok_or_else(|| bad(format!("key {old} is not in force")))?;
                if e.signer == *old {
                    k.public
                } else {
                    self.admin_signer(&e.signer, &e.time).map_err(bad)?
                }
            }
        };
        if !verify_hex(&signer_key, &msg, &e.sig) {
            return Err(bad(format!("signature by {} does not verify", e.signer)));
        }
        match &e.change {
            KeyChange::Added {
                key_id,
                public_key,
                role,
            } => {
                let public = parse_public(key_id, public_key)?;
                self.keys.insert(
                    key_id.clone(),
                    KeyState {
                        key_id: key_id.clone(),
                        role: *role,
                        public,
                        valid_from: e.time.clone(),
                        valid_until: None,
                    },
                );
            }
            KeyChange::Rotated {
                key_id,
                new_key_id,
                new_public_key,
            } => {
                let public = parse_public(new_key_id, new_public_key)?;
                let role = self
                    .keys
                    .get(key_id)
                    .map(|k| k.role)
                    .unwrap_or(KeyRole::Ledger);
                if let Some(k) = self.keys.get_mut(key_id) {
                    k.valid_until = Some(e.time.clone());
                }
                self.keys.insert(
                    new_key_id.clone(),
                    KeyState {
                        key_id: new_key_id.clone(),
                        role,
                        public,
                        valid_from: e.time.clone(),
                        valid_until: None,
                    },
                );
            }
            KeyChange::Revoked { key_id, .. } => {
                if let Some(k) = self.keys.get_mut(key_id) {
                    k.valid_until = Some(e.time.clone());
                }
            }
        }
        self.head = Some(e.hash_hex()?);
        self.events.push(e);
        Ok(())
    }

    fn admin_signer(&self, signer: &str, at: &str) -> Result<VerifyingKey, String> {
        match self.in_force(signer, at) {
            Some(k) if k.role == KeyRole::Admin => Ok(k.public),
            Some(_) => Err(format!("signer {signer} is not an admin key")),
            None => Err(format!("signer {signer} is not a key in force")),
        }
    }

    /// Builds, signs and applies the next event.
    pub fn append(
        &mut self,
        change: KeyChange,
        signer: &LedgerKey,
        at: String,
    ) -> Result<RegistryEvent, LedgerError> {
        let mut e = RegistryEvent {
            v: crate::FORMAT_VERSION,
            seq: self.events.len() as u64,
            prev: self.head.clone(),
            time: at,
            change,
            signer: signer.id().to_string(),
            sig: String::new(),
        };
        e.sig = signer.sign_hex(&e.signing_bytes()?);
        self.apply(e.clone())?;
        Ok(e)
    }

    /// The genesis: the admin key adds itself.
    pub fn genesis(
        admin: &LedgerKey,
        at: String,
    ) -> Result<(Registry, RegistryEvent), LedgerError> {
        let mut r = Registry::default();
        let e = r.append(
            KeyChange::Added {
                key_id: admin.id().into(),
                public_key: admin.public_hex(),
                role: KeyRole::Admin,
            },
            admin,
            at,
        )?;
        Ok((r, e))
    }

    /// Adds `key` with `role`, signed by `admin`.
    pub fn add_key(
        &mut self,
        key: &LedgerKey,
        role: KeyRole,
        admin: &LedgerKey,
        at: String,
    ) -> Result<RegistryEvent, LedgerError> {
        self.append(
            KeyChange::Added {
                key_id: key.id().into(),
                public_key: key.public_hex(),
                role,
            },
            admin,
            at,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: u32) -> String {
        format!("2026-11-22T14:00:{s:02}.000Z")
    }

    #[test]
    fn add_rotate_revoke_replay() {
        let admin = LedgerKey::from_secret(&[1; 32]);
        let l1 = LedgerKey::from_secret(&[2; 32]);
        let l2 = LedgerKey::from_secret(&[3; 32]);
        let (mut r, _) = Registry::genesis(&admin, t(0)).unwrap();
        r.add_key(&l1, KeyRole::Ledger, &admin, t(1)).unwrap();
        // Rotation signed by the previous key.
        r.append(
            KeyChange::Rotated {
                key_id: l1.id().into(),
                new_key_id: l2.id().into(),
                new_public_key: l2.public_hex(),
            },
            &l1,
            t(10),
        )
        .unwrap();
        assert!(r.key_valid_at(l1.id(), KeyRole::Ledger, &t(5)).is_ok());
        assert!(r.key_valid_at(l1.id(), KeyRole::Ledger, &t(10)).is_err());
        assert!(r.key_valid_at(l2.id(), KeyRole::Ledger, &t(11)).is_ok());
        assert!(r.key_valid_at(l2.id(), KeyRole::Admin, &t(11)).is_err());
        r.append(
            KeyChange::Revoked {
                key_id: l2.id().into(),
                reason: "lost".into(),
            },
            &admin,
            t(20),
        )
        .unwrap();
        assert!(r.key_valid_at(l2.id(), KeyRole::Ledger, &t(19)).is_ok());
        assert!(r.key_valid_at(l2.id(), KeyRole::Ledger, &t(21)).is_err());
        let events = r.events().to_vec();
        let again = Registry::replay(events.clone()).unwrap();
        assert_eq!(again.anchor(), Some(admin.id()));
        for e in &events {
            assert_eq!(
                RegistryEvent::parse(&e.canonical_bytes().unwrap()).unwrap(),
                *e
            );
        }
    }

    #[test]
    fn refuses_bad_events() {
        let admin = LedgerKey::from_secret(&[1; 32]);
        let l1 = LedgerKey::from_secret(&[2; 32]);
        let (mut r, _) = Registry::genesis(&admin, t(0)).unwrap();
        // A non-admin cannot add keys.
        let mut r2 = r.clone();
        r2.add_key(&l1, KeyRole::Ledger, &admin, t(1)).unwrap();
        let other = LedgerKey::from_secret(&[4; 32]);
        assert!(r2.add_key(&other, KeyRole::Ledger, &l1, t(2)).is_err());
        // The same key cannot be both the ledger key and an approver key.
        assert!(r2.add_key(&l1, KeyRole::Approver, &admin, t(2)).is_err());
        // A replaced public key breaks the event's signature and the chain.
        r.add_key(&l1, KeyRole::Ledger, &admin, t(1)).unwrap();
        let mut events = r.events().to_vec();
        if let KeyChange::Added {
            public_key,
            key_id: kid,
            ..
        } = &mut events[1].change
        {
            *public_key = other.public_hex();
            *kid = other.id().into();
        }
        let err = Registry::replay(events).unwrap_err();
        assert!(
            matches!(err, LedgerError::BadRegistryEvent { seq: 1, .. }),
            "{err}"
        );
        // A genesis that is not self-signed admin is refused.
        let mut fresh = Registry::default();
        assert!(
            fresh
                .append(
                    KeyChange::Added {
                        key_id: l1.id().into(),
                        public_key: l1.public_hex(),
                        role: KeyRole::Ledger
                    },
                    &l1,
                    t(0)
                )
                .is_err()
        );
    }
}
