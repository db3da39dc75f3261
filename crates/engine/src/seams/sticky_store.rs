//! Remembered context blocks in SQLite: written through the recorder's queue, read back on a
//! blocking thread for exactly the keys the proxy's memory no longer holds — and only for
//! keys a fixed-size filter says may be on disk, so the newest message of a turn (new, most
//! of the time) never touches the database.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use metaclaw_proxy::seams::{BoxFuture, Injection, StickyStore};
use metaclaw_store::{NewBlock, Store, StoreError};

use crate::clock::unix_ms;
use crate::recorder::RecorderHandle;

/// Blocks older than this are deleted at start: a provider's prompt cache lives minutes to
/// an hour, so a conversation resumed after weeks gains nothing from its old bytes.
const KEEP: Duration = Duration::from_secs(30 * 24 * 3600);

/// Page cache of the read connection, KiB: reads are primary-key lookups of a few pages.
const READER_CACHE_KIB: i64 = 512;

pub struct SqliteSticky {
    db: PathBuf,
    recorder: RecorderHandle,
    /// The (session, message) pairs that may have a block in the database (or queued for it).
    saved: Mutex<SavedKeys>,
    /// One read connection, opened on first use and kept.
    reader: Arc<Mutex<Option<Store>>>,
}

impl SqliteSticky {
    /// Prunes old blocks and learns which ones are left. Blocking: call off the runtime.
    pub fn open(db: PathBuf, recorder: RecorderHandle) -> Result<Self, StoreError> {
        let mut store = Store::open(&db)?;
        let cutoff = unix_ms(SystemTime::now()) - i64::try_from(KEEP.as_millis()).unwrap_or(0);
        let pruned = store.prune_injected_blocks(cutoff)?;
        if pruned > 0 {
            tracing::debug!(pruned, "old remembered context blocks deleted");
        }
        let mut saved = SavedKeys::new();
        store.each_injected_block_key(|session, key| saved.insert(session, key))?;
        Ok(SqliteSticky {
            db,
            recorder,
            saved: Mutex::new(saved),
            reader: Arc::new(Mutex::new(None)),
        })
    }

    fn saved(&self) -> std::sync::MutexGuard<'_, SavedKeys> {
        self.saved.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl StickyStore for SqliteSticky {
    fn load<'a>(
        &'a self,
        session_id: &'a str,
        keys: &'a [String],
    ) -> BoxFuture<'a, Vec<(String, Injection)>> {
        let maybe: Vec<String> = {
            let saved = self.saved();
            keys.iter()
                .filter(|k| saved.may_contain(session_id, k))
                .cloned()
                .collect()
        };
        if maybe.is_empty() {
            return Box::pin(async { Vec::new() });
        }
        let db = self.db.clone();
        let reader = self.reader.clone();
        let session = session_id.to_string();
        Box::pin(async move {
            let rows = tokio::task::spawn_blocking(move || {
                let mut guard = reader.lock().unwrap_or_else(PoisonError::into_inner);
                if guard.is_none() {
                    let store = Store::open_read_only(&db)?;
                    store
                        .connection()
                        .pragma_update(None, "cache_size", -READER_CACHE_KIB)?;
                    *guard = Some(store);
                }
                match guard.as_ref() {
                    Some(store) => store.injected_blocks_for(&session, &maybe),
                    None => Ok(Vec::new()),
                }
            })
            .await;
            match rows {
                Ok(Ok(rows)) => rows
                    .into_iter()
                    .map(|(key, stored)| (key, decode(&stored)))
                    .collect(),
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "remembered context blocks unavailable");
                    Vec::new()
                }
                Err(e) => {
                    tracing::warn!(error = %e, "remembered context blocks unavailable");
                    Vec::new()
                }
            }
        })
    }

    fn release(&self) {
        // Closed here, reopened by the next read that needs it.
        let closed = self
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(closed);
    }

    fn save(&self, session_id: &str, key: &str, injection: &Injection) {
        // Marked before it is queued: a read never skips a block that is on its way.
        self.saved().insert(session_id, key);
        let block = serde_json::to_string(injection).unwrap_or_default();
        self.recorder.remember_block(NewBlock {
            session_id: session_id.to_string(),
            message_key: key.to_string(),
            block,
            at_ms: unix_ms(SystemTime::now()),
        });
    }
}

/// Stored as JSON (block + skill names); anything else is taken as the block's plain text.
fn decode(stored: &str) -> Injection {
    serde_json::from_str(stored).unwrap_or_else(|_| Injection {
        block: stored.to_string(),
        skills: Vec::new(),
    })
}

/// Bits of [`SavedKeys`]: 512 KiB, about 1% false positives at 400,000 stored blocks.
const FILTER_BITS: u64 = 1 << 22;
const FILTER_HASHES: u64 = 4;

/// Which (session, message) pairs may have a stored block: a Bloom filter of fixed size,
/// where a set of every pair (or of every session) would grow with use. A wrong "maybe" costs
/// one primary-key lookup; there is never a wrong "no", since every pair is added before its
/// block is queued. It fills up only after millions of blocks, and is rebuilt at each start
/// from what the 30-day pruning left.
struct SavedKeys {
    bits: Vec<u64>,
}

impl SavedKeys {
    fn new() -> Self {
        SavedKeys {
            bits: vec![0; (FILTER_BITS / 64) as usize],
        }
    }

    /// Bit positions by double hashing one 64-bit hash of the pair.
    fn positions(session: &str, key: &str) -> impl Iterator<Item = usize> {
        let mut h = DefaultHasher::new();
        session.hash(&mut h);
        key.hash(&mut h);
        let x = h.finish();
        let (a, b) = (x & 0xffff_ffff, (x >> 32) | 1);
        (0..FILTER_HASHES).map(move |i| (a.wrapping_add(i.wrapping_mul(b)) % FILTER_BITS) as usize)
    }

    fn insert(&mut self, session: &str, key: &str) {
        for p in Self::positions(session, key) {
            self.bits[p / 64] |= 1 << (p % 64);
        }
    }

    fn may_contain(&self, session: &str, key: &str) -> bool {
        Self::positions(session, key).all(|p| self.bits[p / 64] & (1 << (p % 64)) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_never_forgets_a_saved_pair_and_rarely_invents_one() {
        let mut saved = SavedKeys::new();
        for i in 0..100_000 {
            saved.insert(&format!("s{}", i % 1000), &format!("k{i}"));
        }
        for i in 0..100_000 {
            assert!(saved.may_contain(&format!("s{}", i % 1000), &format!("k{i}")));
        }
        let wrong = (0..100_000)
            .filter(|i| saved.may_contain(&format!("s{}", i % 1000), &format!("new{i}")))
            .count();
        assert!(wrong < 100, "{wrong} false positives in 100,000");
        assert_eq!(saved.bits.len() * 8, 512 * 1024, "fixed size");
    }
}
