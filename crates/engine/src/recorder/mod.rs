//! The recorder: finished turns and session events go from the proxy to SQLite.
//!
//! The proxy side ([`RecorderHandle`]) only ever `try_send`s into a bounded queue, so a slow
//! disk can never stall a request; when the queue is full the turn is dropped and counted.
//! One dedicated OS thread ([`RecorderWorker`]) owns the database connection, converts
//! turns (assembling streamed replies) and writes whatever is queued in one transaction.

mod convert;
mod handle;
mod worker;

#[cfg(test)]
mod tests;

use std::path::Path;
use std::sync::mpsc;

use serde::{Deserialize, Serialize};

use metaclaw_proxy::seams::{SessionEvent, TurnRecord};
use metaclaw_store::{NewBlock, Store, StoreError};

pub use handle::RecorderHandle;
pub use worker::RecorderWorker;

/// Messages from the handles to the worker, processed in order.
enum Message {
    Turn(Box<TurnRecord>),
    Event(SessionEvent),
    /// A context block given to a message, remembered for prompt-cache stickiness.
    Block(NewBlock),
    /// Answered once everything queued before it is committed.
    Flush(mpsc::Sender<()>),
    /// The proxy went quiet: the connection's page cache is given back.
    Release,
    /// Commit everything queued before it, then stop.
    Shutdown,
}

#[derive(Debug, thiserror::Error)]
pub enum RecorderError {
    #[error("cannot open the recorder's database: {0}")]
    Store(#[from] StoreError),
    #[error("cannot start the recorder thread: {0}")]
    Spawn(std::io::Error),
    #[error("the recorder has stopped")]
    Stopped,
}

/// Turns lost on their way to the database, and why, as status shows them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecorderHealth {
    /// Dropped because the recorder's queue was full (a slow or stuck disk).
    pub dropped_queue_full: u64,
    pub last_dropped_at_ms: Option<i64>,
    /// Not written: the database refused them (disk full, read-only, deleted …).
    pub failed_writes: u64,
    pub last_write_error: Option<String>,
    pub last_write_error_at_ms: Option<i64>,
    /// The database file was deleted or replaced while running: nothing is recorded until
    /// MetaClaw restarts.
    pub database_problem: Option<String>,
}

/// Opens the database at `db_path` and starts the recorder thread with a queue of
/// `capacity` messages. The handle is cheap to clone and is what the proxy gets as its
/// `TurnSink`; the worker is kept by whoever shuts the engine down.
pub fn start(
    db_path: &Path,
    capacity: usize,
) -> Result<(RecorderHandle, RecorderWorker), RecorderError> {
    let store = Store::open(db_path)?;
    if let Ok(Some(saved)) = store.state_get(worker::LEARNING_CALLS_KEY) {
        crate::llm::calls::restore_today(&saved);
    }
    let (handle, queue) = handle::channel(capacity);
    let file = worker::DbFile::of(db_path);
    let worker = RecorderWorker::spawn(store, queue, handle.clone(), file)?;
    Ok((handle, worker))
}
