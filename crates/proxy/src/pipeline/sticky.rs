//! Remembered blocks, per session and message, so a resent message gets the same block back.
//!
//! Clients resend the whole conversation every turn, without MetaClaw's blocks. Putting back
//! exactly the block each message got the first time keeps every byte before the newest
//! user message identical to the previous request, which is what keeps the provider's
//! prompt cache warm. The first block stored for a key wins and never changes.
//!
//! Memory holds the blocks of at most [`MAX_SESSIONS`] recently used sessions; an evicted
//! session's blocks are read back from the store when it returns, so a client that opens a
//! new conversation on every request cannot grow memory without bound.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::OnceCell;

use crate::seams::{Injection, StickyStore};

/// Sessions whose blocks stay in memory.
pub const MAX_SESSIONS: usize = 2048;

/// One open session's blocks, loaded from the store on first use.
#[derive(Default)]
pub struct SessionBlocks {
    loaded: OnceCell<()>,
    blocks: Mutex<HashMap<String, Arc<Injection>>>,
    /// When it was last used, on the [`Sticky`] clock.
    last_used: AtomicU64,
}

impl SessionBlocks {
    pub fn get(&self, key: &str) -> Option<Arc<Injection>> {
        self.lock().get(key).cloned()
    }

    /// Keeps the first injection for `key`; returns the one in force and whether it is new.
    fn insert_first(&self, key: &str, injection: Injection) -> (Arc<Injection>, bool) {
        let mut blocks = self.lock();
        if let Some(existing) = blocks.get(key) {
            return (existing.clone(), false);
        }
        let injection = Arc::new(injection);
        blocks.insert(key.to_string(), injection.clone());
        (injection, true)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Injection>>> {
        self.blocks.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

pub struct Sticky {
    store: Arc<dyn StickyStore>,
    sessions: Mutex<HashMap<String, Arc<SessionBlocks>>>,
    /// A logical clock for least-recently-used eviction.
    clock: AtomicU64,
}

impl Sticky {
    pub fn new(store: Arc<dyn StickyStore>) -> Self {
        Sticky {
            store,
            sessions: Mutex::new(HashMap::new()),
            clock: AtomicU64::new(0),
        }
    }

    /// The session's blocks, loading what an earlier run remembered the first time.
    pub async fn session(&self, session_id: &str) -> Arc<SessionBlocks> {
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        let entry = {
            let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
            if !sessions.contains_key(session_id) && sessions.len() >= MAX_SESSIONS {
                evict_least_recent(&mut sessions);
            }
            sessions.entry(session_id.to_string()).or_default().clone()
        };
        entry.last_used.store(now, Ordering::Relaxed);
        entry
            .loaded
            .get_or_init(|| async {
                for (key, injection) in self.store.load(session_id).await {
                    entry.insert_first(&key, injection);
                }
            })
            .await;
        entry
    }

    /// Remembers `injection` for `key` unless a block is already there; returns the one in
    /// force (a concurrent turn of the same session may have stored its block first).
    pub fn remember(
        &self,
        session_id: &str,
        blocks: &SessionBlocks,
        key: &str,
        injection: Injection,
    ) -> Arc<Injection> {
        let (kept, new) = blocks.insert_first(key, injection);
        if new {
            self.store.save(session_id, key, &kept);
        }
        kept
    }

    /// Drops a session's blocks from memory once it ended; the store keeps them, so a
    /// conversation resumed later still gets its blocks back.
    pub fn forget(&self, session_id: &str) {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session_id);
    }

    pub fn open_sessions(&self) -> usize {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// Sessions dropped from memory at once when it is full: one scan per this many new
/// sessions instead of one per session.
const EVICT_BATCH: usize = MAX_SESSIONS / 8;

/// Drops the [`EVICT_BATCH`] least recently used sessions: a linear selection, run once per
/// batch of new sessions, cheaper than keeping an ordered structure up to date every turn.
fn evict_least_recent(sessions: &mut HashMap<String, Arc<SessionBlocks>>) {
    let mut by_age: Vec<(u64, &String)> = sessions
        .iter()
        .map(|(id, b)| (b.last_used.load(Ordering::Relaxed), id))
        .collect();
    let n = EVICT_BATCH.min(by_age.len());
    if n == 0 {
        return;
    }
    by_age.select_nth_unstable(n - 1);
    let oldest: Vec<String> = by_age[..n].iter().map(|(_, id)| (*id).clone()).collect();
    for id in oldest {
        sessions.remove(&id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seams::BoxFuture;

    #[derive(Default)]
    struct Recorded(Mutex<Vec<(String, String, String)>>);

    impl StickyStore for Recorded {
        fn load<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Vec<(String, Injection)>> {
            let rows: Vec<_> = self
                .0
                .lock()
                .unwrap()
                .iter()
                .filter(|(s, _, _)| s == session_id)
                .map(|(_, k, b)| {
                    (
                        k.clone(),
                        Injection {
                            block: b.clone(),
                            skills: vec![],
                        },
                    )
                })
                .collect();
            Box::pin(async move { rows })
        }
        fn save(&self, session_id: &str, key: &str, injection: &Injection) {
            self.0
                .lock()
                .unwrap()
                .push((session_id.into(), key.into(), injection.block.clone()));
        }
    }

    fn inj(b: &str) -> Injection {
        Injection {
            block: b.into(),
            skills: vec![],
        }
    }

    #[tokio::test]
    async fn first_block_wins_and_survives_forgetting() {
        let store = Arc::new(Recorded::default());
        let sticky = Sticky::new(store.clone());
        let s = sticky.session("s1").await;
        assert_eq!(sticky.remember("s1", &s, "k", inj("A")).block, "A");
        assert_eq!(sticky.remember("s1", &s, "k", inj("B")).block, "A");
        assert_eq!(store.0.lock().unwrap().len(), 1, "only the first is saved");

        sticky.forget("s1");
        assert_eq!(sticky.open_sessions(), 0);
        let again = sticky.session("s1").await;
        assert_eq!(
            again.get("k").unwrap().block,
            "A",
            "reloaded from the store"
        );
        assert!(sticky.session("s2").await.get("k").is_none());
    }

    #[tokio::test]
    async fn memory_keeps_the_most_recent_sessions_and_the_store_the_rest() {
        let store = Arc::new(Recorded::default());
        let sticky = Sticky::new(store.clone());
        let first = sticky.session("s0").await;
        sticky.remember("s0", &first, "k", inj("A"));
        for i in 1..=MAX_SESSIONS {
            sticky.session(&format!("s{i}")).await;
        }
        // s0 was the least recently used, so it left memory with the oldest batch; its block
        // comes back from the store.
        assert_eq!(sticky.open_sessions(), MAX_SESSIONS - EVICT_BATCH + 1);
        assert!(sticky.sessions.lock().unwrap().get("s0").is_none());
        assert!(
            sticky
                .sessions
                .lock()
                .unwrap()
                .get(&format!("s{MAX_SESSIONS}"))
                .is_some()
        );
        assert_eq!(sticky.session("s0").await.get("k").unwrap().block, "A");
    }
}
