//! Live tokens seen in the last moment, so that an agent sending many requests (the proxy: one
//! per model turn) does not cost a database lookup on each. Only live tokens are kept, keyed by
//! the presented token's SHA-256, each for at most the configured time-to-live; unknown and
//! revoked tokens always go to the database. A revocation made through this process empties
//! the cache at once; one made elsewhere (another node, `airlock token revoke` on the same
//! store) takes effect here within the time-to-live. A time-to-live of zero turns it off.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::auth::Caller;

/// More distinct live tokens than this in one time-to-live: the cache starts afresh rather
/// than grow (a deployment has far fewer agents; the bound is against memory, not for speed).
const MAX_ENTRIES: usize = 4096;

#[derive(Debug, Clone, Default)]
pub(crate) struct TokenCache {
    ttl: Duration,
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    map: HashMap<String, (Caller, Instant)>,
    /// Counts revocations: a lookup that began before one must not store its answer.
    generation: u64,
}

/// Taken before a database lookup; storing its answer needs it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ticket {
    at: Instant,
    generation: u64,
}

impl TokenCache {
    pub(crate) fn new(ttl: Duration) -> TokenCache {
        TokenCache {
            ttl,
            inner: Arc::default(),
        }
    }

    pub(crate) fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The caller cached for `hash`, if it was seen live less than the time-to-live ago.
    pub(crate) fn get(&self, hash: &str) -> Option<Caller> {
        if self.ttl.is_zero() {
            return None;
        }
        // A poisoned lock means a panic while it was held: answer from the database instead.
        let inner = self.inner.lock().ok()?;
        let (caller, at) = inner.map.get(hash)?;
        (at.elapsed() < self.ttl).then(|| caller.clone())
    }

    /// Taken just before looking a token up in the database.
    pub(crate) fn ticket(&self) -> Option<Ticket> {
        if self.ttl.is_zero() {
            return None;
        }
        let inner = self.inner.lock().ok()?;
        Some(Ticket {
            at: Instant::now(),
            generation: inner.generation,
        })
    }

    /// Remembers that the database said `hash` is a live token of `caller`, unless a
    /// revocation happened since the lookup began (its answer may predate the revocation).
    pub(crate) fn put(&self, hash: &str, caller: &Caller, ticket: Ticket) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        if inner.generation != ticket.generation {
            return;
        }
        if inner.map.len() >= MAX_ENTRIES && !inner.map.contains_key(hash) {
            let ttl = self.ttl;
            inner.map.retain(|_, (_, at)| at.elapsed() < ttl);
            if inner.map.len() >= MAX_ENTRIES {
                inner.map.clear();
            }
        }
        inner
            .map
            .insert(hash.to_string(), (caller.clone(), ticket.at));
    }

    /// Forgets every token and refuses answers of lookups already under way: called after a
    /// revocation, which names a token by id, not by hash.
    pub(crate) fn clear(&self) {
        let mut inner = match self.inner.lock() {
            Ok(inner) => inner,
            // Nothing may survive a revocation: take the map back from the poisoned lock.
            Err(poisoned) => poisoned.into_inner(),
        };
        inner.map.clear();
        inner.generation = inner.generation.wrapping_add(1);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner.lock().map(|m| m.map.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Role;

    fn caller(n: usize) -> Caller {
        Caller {
            token_id: format!("tok_{n}"),
            name: format!("agent-{n}"),
            role: Role::Agent,
        }
    }

    #[test]
    fn an_entry_lives_for_the_ttl_only() {
        let c = TokenCache::new(Duration::from_millis(50));
        let t = c.ticket().expect("a ticket");
        c.put("h1", &caller(1), t);
        assert_eq!(c.get("h1"), Some(caller(1)));
        assert_eq!(c.get("h2"), None);
        // A lookup that began long ago is already stale when stored.
        let slow = c.ticket().expect("a ticket");
        std::thread::sleep(Duration::from_millis(60));
        c.put("h3", &caller(3), slow);
        assert_eq!(c.get("h3"), None);
        assert_eq!(c.get("h1"), None);
    }

    #[test]
    fn zero_ttl_keeps_nothing() {
        let c = TokenCache::new(Duration::ZERO);
        assert!(c.ticket().is_none());
        assert_eq!(c.get("h1"), None);
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn clear_forgets_everything_and_clones_share_it() {
        let c = TokenCache::new(Duration::from_secs(60));
        let other = c.clone();
        c.put("h1", &caller(1), c.ticket().expect("a ticket"));
        assert_eq!(other.get("h1"), Some(caller(1)));
        other.clear();
        assert_eq!(c.get("h1"), None);
    }

    #[test]
    fn a_lookup_begun_before_a_revocation_is_not_stored() {
        let c = TokenCache::new(Duration::from_secs(60));
        let before = c.ticket().expect("a ticket");
        c.clear();
        c.put("h1", &caller(1), before);
        assert_eq!(c.get("h1"), None);
        c.put("h1", &caller(1), c.ticket().expect("a ticket"));
        assert_eq!(c.get("h1"), Some(caller(1)));
    }

    #[test]
    fn the_map_stays_bounded() {
        let c = TokenCache::new(Duration::from_secs(60));
        for n in 0..MAX_ENTRIES + 10 {
            c.put(&format!("h{n}"), &caller(n), c.ticket().expect("a ticket"));
        }
        assert!(c.len() <= MAX_ENTRIES, "{}", c.len());
        let last = MAX_ENTRIES + 9;
        assert_eq!(c.get(&format!("h{last}")), Some(caller(last)));
    }
}
