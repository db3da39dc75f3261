//! Remembered blocks, per session and message, so a resent message gets the same block back.
//!
//! Clients resend the whole conversation every turn, without MetaClaw's blocks. Putting back
//! exactly the block each message got the first time keeps every byte before the newest
//! user message identical to the previous request, which is what keeps the provider's
//! prompt cache warm. The first block stored for a key wins and never changes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::OnceCell;

use crate::seams::{Injection, StickyStore};

/// One open session's blocks, loaded from the store on first use.
#[derive(Default)]
pub struct SessionBlocks {
    loaded: OnceCell<()>,
    blocks: Mutex<HashMap<String, Arc<Injection>>>,
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
}

impl Sticky {
    pub fn new(store: Arc<dyn StickyStore>) -> Self {
        Sticky {
            store,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// The session's blocks, loading what an earlier run remembered the first time.
    pub async fn session(&self, session_id: &str) -> Arc<SessionBlocks> {
        let entry = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(session_id.to_string())
            .or_default()
            .clone();
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
}
