//! Remembered context blocks in SQLite: written through the recorder's queue, read once per
//! session (the first turn after a restart) on a blocking thread.

use std::path::PathBuf;
use std::time::SystemTime;

use metaclaw_proxy::seams::{BoxFuture, Injection, StickyStore};
use metaclaw_store::{NewBlock, Store};

use crate::recorder::RecorderHandle;

pub struct SqliteSticky {
    db: PathBuf,
    recorder: RecorderHandle,
}

impl SqliteSticky {
    pub fn new(db: PathBuf, recorder: RecorderHandle) -> Self {
        SqliteSticky { db, recorder }
    }
}

impl StickyStore for SqliteSticky {
    fn load<'a>(&'a self, session_id: &'a str) -> BoxFuture<'a, Vec<(String, Injection)>> {
        let db = self.db.clone();
        let session = session_id.to_string();
        Box::pin(async move {
            let rows = tokio::task::spawn_blocking(move || {
                Store::open_read_only(&db).and_then(|s| s.injected_blocks(&session))
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
        let block = serde_json::to_string(injection).unwrap_or_default();
        self.recorder.remember_block(NewBlock {
            session_id: session_id.to_string(),
            message_key: key.to_string(),
            block,
            at_ms: crate::recorder::unix_ms(SystemTime::now()),
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
