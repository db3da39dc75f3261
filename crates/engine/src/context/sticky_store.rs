//! Remembered context blocks in SQLite: written through the recorder's queue, read once per
//! session on a blocking thread — and only for sessions that have blocks on disk, so the
//! first turn of a new conversation (most of them) never touches the database.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use metaclaw_proxy::seams::{BoxFuture, Injection, StickyStore};
use metaclaw_store::{NewBlock, Store, StoreError};

use crate::recorder::{RecorderHandle, unix_ms};

/// Blocks older than this are deleted at start: a provider's prompt cache lives minutes to
/// an hour, so a conversation resumed after weeks gains nothing from its old bytes.
const KEEP: Duration = Duration::from_secs(30 * 24 * 3600);

pub struct SqliteSticky {
    db: PathBuf,
    recorder: RecorderHandle,
    /// Sessions with blocks in the database (or queued for it).
    on_disk: Mutex<HashSet<String>>,
    /// One read connection, opened on first use and kept.
    reader: Arc<Mutex<Option<Store>>>,
}

impl SqliteSticky {
    /// Prunes old blocks and learns which sessions have some. Blocking: call off the runtime.
    pub fn open(db: PathBuf, recorder: RecorderHandle) -> Result<Self, StoreError> {
        let mut store = Store::open(&db)?;
        let cutoff = unix_ms(SystemTime::now()) - i64::try_from(KEEP.as_millis()).unwrap_or(0);
        let pruned = store.prune_injected_blocks(cutoff)?;
        if pruned > 0 {
            tracing::debug!(pruned, "old remembered context blocks deleted");
        }
        let on_disk = store.sessions_with_blocks()?.into_iter().collect();
        Ok(SqliteSticky {
            db,
            recorder,
            on_disk: Mutex::new(on_disk),
            reader: Arc::new(Mutex::new(None)),
        })
    }

    fn has_blocks(&self, session_id: &str) -> bool {
        self.on_disk
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(session_id)
    }
}

impl StickyStore for SqliteSticky {
    fn load<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Vec<(String, Injection)>> {
        if !self.has_blocks(session_id) {
            return Box::pin(async { Vec::new() });
        }
        let db = self.db.clone();
        let reader = self.reader.clone();
        let session = session_id.to_string();
        Box::pin(async move {
            let rows = tokio::task::spawn_blocking(move || {
                let mut guard = reader.lock().unwrap_or_else(PoisonError::into_inner);
                if guard.is_none() {
                    *guard = Some(Store::open_read_only(&db)?);
                }
                match guard.as_ref() {
                    Some(store) => store.injected_blocks(&session),
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

    fn save(&self, session_id: &str, key: &str, injection: &Injection) {
        self.on_disk
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(session_id.to_string());
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
