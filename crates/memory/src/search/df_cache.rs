//! Document frequencies remembered between searches.
//!
//! Counting each query term's documents (up to [`DF_CAP`]) was half of a search's time in
//! a 100,000-unit library, and the same words come back in every request. What a count may
//! be trusted for after the index changes differs:
//! - a term at the cap stays there while units are added (a write adds at most one
//!   document per term), so that verdict is kept across writes, for [`CAPPED_TTL`] (so
//!   deletions show too);
//! - a smaller count decides whether a term is searched at all and how it ranks, and one
//!   write can change it, so it is dropped whenever the index changes.
//!
//! A change is seen in the FTS5 structure record (row 10 of the index's `_data` table),
//! which every commit touching the index rewrites, whichever process made it. Bounded:
//! [`MAX_ENTRIES`] counts per database, [`MAX_DATABASES`] databases.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension};

use super::stats::DF_CAP;

/// How long a capped count is trusted.
const CAPPED_TTL: Duration = Duration::from_secs(600);
/// Most counts remembered per index; past it, they are all forgotten.
const MAX_ENTRIES: usize = 4096;
/// Most databases remembered; past it, the least recently used is forgotten.
const MAX_DATABASES: usize = 8;
/// The indexes whose structure is watched.
const TABLES: [&str; 2] = ["memory_fts", "memory_fts_cjk"];

#[derive(Default)]
struct Entry {
    /// Each index's structure record when the counts were taken.
    structures: [Vec<u8>; 2],
    /// Per index (as in [`TABLES`]): piece → count and when it was taken.
    counts: [HashMap<String, (u64, Instant)>; 2],
    used: Option<Instant>,
}

static CACHE: Mutex<Vec<(String, Entry)>> = Mutex::new(Vec::new());

fn cache() -> MutexGuard<'static, Vec<(String, Entry)>> {
    // A panic while holding the lock leaves at worst stale counts, which the next
    // structure check or the TTL clears.
    CACHE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The counts of one database for one search. In-memory databases are not remembered.
pub(super) struct Counts {
    path: Option<String>,
}

impl Counts {
    /// Reads the indexes' structure records and forgets what a change since the last
    /// search invalidated.
    pub fn open(conn: &Connection) -> rusqlite::Result<Counts> {
        let path = conn.path().filter(|p| !p.is_empty()).map(str::to_owned);
        let Some(path) = path else {
            return Ok(Counts { path: None });
        };
        let mut now = [Vec::new(), Vec::new()];
        for (slot, table) in now.iter_mut().zip(TABLES) {
            *slot = conn
                .prepare_cached(&format!("SELECT block FROM {table}_data WHERE id = 10"))?
                .query_row([], |r| r.get::<_, Vec<u8>>(0))
                .optional()?
                .unwrap_or_default();
        }
        let mut all = cache();
        let at = match all.iter().position(|(p, _)| *p == path) {
            Some(at) => at,
            None => {
                if all.len() >= MAX_DATABASES
                    && let Some(oldest) = all
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, (_, e))| e.used)
                        .map(|(i, _)| i)
                {
                    all.swap_remove(oldest);
                }
                all.push((path.clone(), Entry::default()));
                all.len() - 1
            }
        };
        let entry = &mut all[at].1;
        if entry.structures != now {
            for counts in &mut entry.counts {
                counts.retain(|_, (df, _)| *df >= DF_CAP);
            }
            entry.structures = now;
        }
        entry.used = Some(Instant::now());
        Ok(Counts { path: Some(path) })
    }

    /// The remembered count of `piece` in `table`, if still trusted.
    pub fn get(&self, table: &str, piece: &str) -> Option<u64> {
        let path = self.path.as_deref()?;
        let index = TABLES.iter().position(|t| *t == table)?;
        let all = cache();
        let (_, entry) = all.iter().find(|(p, _)| p == path)?;
        let (df, at) = entry.counts[index].get(piece)?;
        (at.elapsed() < CAPPED_TTL).then_some(*df)
    }

    /// Remembers the count of `piece` in `table`.
    pub fn put(&self, table: &str, piece: &str, df: u64) {
        let Some(path) = self.path.as_deref() else {
            return;
        };
        let Some(index) = TABLES.iter().position(|t| *t == table) else {
            return;
        };
        let mut all = cache();
        if let Some((_, entry)) = all.iter_mut().find(|(p, _)| p == path) {
            let counts = &mut entry.counts[index];
            if counts.len() >= MAX_ENTRIES {
                counts.clear();
            }
            counts.insert(piece.to_owned(), (df, Instant::now()));
        }
    }
}
