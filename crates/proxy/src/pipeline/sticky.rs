//! Remembered blocks, per session and message, so a resent message gets the same block back.
//!
//! Clients resend the conversation every turn, without MetaClaw's blocks. Putting back
//! exactly the block each message got the first time keeps every byte before the newest
//! user message identical to the previous request, which is what keeps the provider's
//! prompt cache warm. The first block stored for a key wins and never changes.
//!
//! Memory is a bounded window over the store: each session keeps its most recently used
//! blocks (at most [`Limits::session_blocks`] and [`Limits::session_bytes`]), all sessions
//! together at most [`Limits::total_bytes`] in at most [`Limits::sessions`] sessions. Every
//! block is saved to the store as well; a block that left memory is read back from it for
//! exactly the keys a request resends and memory lacks. So neither a conversation of
//! 100,000 turns nor a client opening a new conversation on every request grows memory.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::seams::{Injection, StickyStore};

/// What memory may hold; the store holds everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Sessions with blocks in memory.
    pub sessions: usize,
    /// Blocks one session keeps in memory: a client resending up to this many user
    /// messages is served without reading the store.
    pub session_blocks: usize,
    /// Bytes of blocks one session keeps in memory.
    pub session_bytes: usize,
    /// Bytes of blocks all sessions keep in memory together.
    pub total_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            // A cache in front of the store, sized so a tray app stays small: the busiest
            // sessions' recent blocks fit, the rest are read back when resent.
            sessions: 1024,
            session_blocks: 256,
            session_bytes: 2 << 20,
            total_bytes: 4 << 20,
        }
    }
}

/// What an entry costs beyond its strings: the map slot, the `Arc` and the string headers.
const ENTRY_OVERHEAD: usize = 128;

/// A limit once exceeded is brought back to 7/8 of itself, so trimming (a sort or a
/// selection) runs once per many inserts rather than on every one.
fn low_water(limit: usize) -> usize {
    limit - limit / 8
}

struct Entry {
    injection: Arc<Injection>,
    /// When it was last used, on the [`Sticky`] clock.
    used: u64,
    bytes: usize,
}

#[derive(Default)]
struct Window {
    blocks: HashMap<String, Entry>,
    bytes: usize,
    /// The session left [`Sticky`]'s map: its bytes no longer count there, so nothing more
    /// is kept here (a request still holding it saves new blocks to the store only).
    detached: bool,
}

/// One session's blocks in memory.
#[derive(Default)]
pub struct SessionBlocks {
    window: Mutex<Window>,
    /// When it was last used, on the [`Sticky`] clock.
    last_used: AtomicU64,
}

impl SessionBlocks {
    fn lock(&self) -> MutexGuard<'_, Window> {
        self.window.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Blocks held in memory for this session.
    pub fn len(&self) -> usize {
        self.lock().blocks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

pub struct Sticky {
    store: Arc<dyn StickyStore>,
    sessions: Mutex<HashMap<String, Arc<SessionBlocks>>>,
    /// A logical clock for least-recently-used eviction.
    clock: AtomicU64,
    /// Bytes of blocks held by the sessions in `sessions`.
    bytes: AtomicUsize,
    /// Blocks held by the sessions in `sessions`.
    blocks: AtomicUsize,
    limits: Limits,
}

impl Sticky {
    pub fn new(store: Arc<dyn StickyStore>) -> Self {
        Self::with_limits(store, Limits::default())
    }

    pub fn with_limits(store: Arc<dyn StickyStore>, limits: Limits) -> Self {
        let limits = Limits {
            sessions: limits.sessions.max(1),
            session_blocks: limits.session_blocks.max(1),
            session_bytes: limits.session_bytes.min(limits.total_bytes / 2),
            total_bytes: limits.total_bytes,
        };
        Sticky {
            store,
            sessions: Mutex::new(HashMap::new()),
            clock: AtomicU64::new(0),
            bytes: AtomicUsize::new(0),
            blocks: AtomicUsize::new(0),
            limits,
        }
    }

    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::Relaxed)
    }

    fn lock_sessions(&self) -> MutexGuard<'_, HashMap<String, Arc<SessionBlocks>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The session's blocks in memory (none yet for a session memory does not hold).
    pub fn session(&self, session_id: &str) -> Arc<SessionBlocks> {
        let now = self.tick();
        let entry = {
            let mut sessions = self.lock_sessions();
            if !sessions.contains_key(session_id) && sessions.len() >= self.limits.sessions {
                let keep = low_water(self.limits.sessions);
                self.evict_sessions(&mut sessions, None, |n, _| n <= keep);
            }
            sessions.entry(session_id.to_string()).or_default().clone()
        };
        entry.last_used.store(now, Ordering::Relaxed);
        entry
    }

    /// The blocks remembered for `keys`, in the same order (`None` where a key has none):
    /// from memory, and for the keys memory lacks, from the store.
    pub async fn recall(
        &self,
        session_id: &str,
        session: &SessionBlocks,
        keys: &[String],
    ) -> Vec<Option<Arc<Injection>>> {
        let now = self.tick();
        let mut found: Vec<Option<Arc<Injection>>> = {
            let mut window = session.lock();
            keys.iter()
                .map(|key| {
                    window.blocks.get_mut(key).map(|e| {
                        e.used = now;
                        e.injection.clone()
                    })
                })
                .collect()
        };
        let mut missing: Vec<String> = keys
            .iter()
            .zip(&found)
            .filter(|(_, f)| f.is_none())
            .map(|(k, _)| k.clone())
            .collect();
        missing.sort_unstable();
        missing.dedup();
        if missing.is_empty() {
            return found;
        }
        let loaded = self.store.load(session_id, &missing).await;
        if loaded.is_empty() {
            return found;
        }
        let mut back: HashMap<String, Arc<Injection>> = HashMap::with_capacity(loaded.len());
        for (key, injection) in loaded {
            let (kept, _) = self.keep(session, &key, injection);
            back.insert(key, kept);
        }
        for (key, slot) in keys.iter().zip(found.iter_mut()) {
            if slot.is_none() {
                *slot = back.get(key).cloned();
            }
        }
        found
    }

    /// Remembers `injection` for `key` unless a block is already there; returns the one in
    /// force (a concurrent turn of the same session may have stored its block first).
    pub fn remember(
        &self,
        session_id: &str,
        session: &SessionBlocks,
        key: &str,
        injection: Injection,
    ) -> Arc<Injection> {
        let (kept, new) = self.keep(session, key, injection);
        if new {
            self.store.save(session_id, key, &kept);
        }
        kept
    }

    /// Keeps the first injection for `key` in memory; returns the one in force and whether
    /// it is new. Trims the session, then all sessions, back under their limits.
    fn keep(
        &self,
        session: &SessionBlocks,
        key: &str,
        injection: Injection,
    ) -> (Arc<Injection>, bool) {
        let now = self.tick();
        let (kept, new, over_total) = {
            let mut window = session.lock();
            if let Some(existing) = window.blocks.get_mut(key) {
                existing.used = now;
                return (existing.injection.clone(), false);
            }
            let bytes = entry_bytes(key, &injection);
            let injection = Arc::new(injection);
            if window.detached {
                return (injection, true);
            }
            window.blocks.insert(
                key.to_string(),
                Entry {
                    injection: injection.clone(),
                    used: now,
                    bytes,
                },
            );
            window.bytes += bytes;
            let mut added = (1_isize, bytes as isize);
            if window.blocks.len() > self.limits.session_blocks
                || window.bytes > self.limits.session_bytes
            {
                let (n, b) = trim_window(&mut window, &self.limits);
                added = (added.0 - n as isize, added.1 - b as isize);
            }
            self.count(added);
            let over = self.bytes.load(Ordering::Relaxed) > self.limits.total_bytes;
            (injection, true, over)
        };
        if over_total {
            let keep = low_water(self.limits.total_bytes);
            let mut sessions = self.lock_sessions();
            self.evict_sessions(&mut sessions, Some(session), |_, bytes| bytes <= keep);
        }
        (kept, new)
    }

    fn count(&self, (blocks, bytes): (isize, isize)) {
        add_signed(&self.blocks, blocks);
        add_signed(&self.bytes, bytes);
    }

    /// Drops a session's blocks from memory once it ended; the store keeps them, so a
    /// conversation resumed later still gets its blocks back.
    pub fn forget(&self, session_id: &str) {
        let removed = self.lock_sessions().remove(session_id);
        if let Some(session) = removed {
            self.detach(&session);
        }
    }

    /// The proxy went quiet: every session's blocks leave memory (the store keeps them and
    /// gives them back, byte for byte, when a message is resent) and the store lets go of
    /// what speeds up its reads. The memory they held can then be given back to the system.
    pub fn release_memory(&self) {
        let sessions = std::mem::take(&mut *self.lock_sessions());
        for session in sessions.values() {
            self.detach(session);
        }
        self.store.release();
    }

    /// Stops counting a session that left the map.
    fn detach(&self, session: &SessionBlocks) {
        let mut window = session.lock();
        window.detached = true;
        let freed = (window.blocks.len(), window.bytes);
        window.blocks = HashMap::new();
        window.bytes = 0;
        drop(window);
        self.count((-(freed.0 as isize), -(freed.1 as isize)));
    }

    /// Drops least recently used sessions until `enough(sessions left, bytes left)`; the
    /// most recently used one and `spare` (the session being served) always stay.
    fn evict_sessions(
        &self,
        sessions: &mut HashMap<String, Arc<SessionBlocks>>,
        spare: Option<&SessionBlocks>,
        enough: impl Fn(usize, usize) -> bool,
    ) {
        let mut by_age: Vec<(u64, String)> = sessions
            .iter()
            .filter(|(_, s)| spare.is_none_or(|spare| !std::ptr::eq(Arc::as_ptr(s), spare)))
            .map(|(id, s)| (s.last_used.load(Ordering::Relaxed), id.clone()))
            .collect();
        by_age.sort_unstable();
        by_age.pop();
        for (_, id) in by_age {
            if enough(sessions.len(), self.bytes.load(Ordering::Relaxed)) {
                break;
            }
            if let Some(session) = sessions.remove(&id) {
                self.detach(&session);
            }
        }
    }

    pub fn open_sessions(&self) -> usize {
        self.lock_sessions().len()
    }

    /// Blocks held in memory across all sessions.
    pub fn blocks_in_memory(&self) -> usize {
        self.blocks.load(Ordering::Relaxed)
    }

    /// Bytes of blocks held in memory across all sessions (estimated).
    pub fn bytes_in_memory(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }
}

fn entry_bytes(key: &str, injection: &Injection) -> usize {
    key.len()
        + injection.block.len()
        + injection.skills.iter().map(String::len).sum::<usize>()
        + ENTRY_OVERHEAD
}

fn add_signed(counter: &AtomicUsize, delta: isize) {
    if delta >= 0 {
        counter.fetch_add(delta.unsigned_abs(), Ordering::Relaxed);
    } else {
        counter.fetch_sub(delta.unsigned_abs(), Ordering::Relaxed);
    }
}

/// Drops the session's least recently used blocks until both its limits are back at their
/// low water marks; returns how many blocks and bytes left memory.
fn trim_window(window: &mut Window, limits: &Limits) -> (usize, usize) {
    let (max_n, max_bytes) = (
        low_water(limits.session_blocks),
        low_water(limits.session_bytes),
    );
    let mut by_age: Vec<(u64, String)> = window
        .blocks
        .iter()
        .map(|(k, e)| (e.used, k.clone()))
        .collect();
    by_age.sort_unstable();
    // The newest block always stays, whatever its size.
    by_age.pop();
    let (mut n, mut bytes) = (0, 0);
    for (_, key) in by_age {
        if window.blocks.len() <= max_n && window.bytes <= max_bytes {
            break;
        }
        if let Some(e) = window.blocks.remove(&key) {
            window.bytes -= e.bytes;
            n += 1;
            bytes += e.bytes;
        }
    }
    (n, bytes)
}

#[cfg(test)]
mod tests;
