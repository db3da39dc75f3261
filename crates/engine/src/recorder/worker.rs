//! The recorder thread: drains the queue in batches, one transaction per batch of turns.

use std::path::{Path, PathBuf};
use std::sync::PoisonError;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use metaclaw_proxy::seams::SessionEvent;
use metaclaw_store::{NewBlock, NewTurn, Store};

use super::convert::new_turn;
use super::handle::{RecorderHandle, weight};
use super::{Message, RecorderError};
use crate::clock::unix_ms;

/// Where today's learning calls are kept across a restart (see `llm::calls`).
pub(super) const LEARNING_CALLS_KEY: &str = "learning_calls.today";

/// Most messages taken from the queue per transaction.
const MAX_BATCH: usize = 256;

/// How long the first queued turn waits for company before its transaction commits.
const LINGER: Duration = Duration::from_millis(25);

/// Niceness of the recorder thread (0 is normal, 19 the lowest priority).
#[cfg(target_os = "linux")]
const RECORDER_NICE: i32 = 10;

/// Owns the recorder thread. Shutting it down (or dropping it) commits everything queued.
pub struct RecorderWorker {
    handle: RecorderHandle,
    thread: Option<JoinHandle<()>>,
}

/// The database file the recorder opened. SQLite keeps writing to a file deleted under it
/// (and a file put in its place is never read), so those writes would be lost without a
/// word: each batch first checks the file at the path is still the one opened.
pub(super) struct DbFile {
    path: PathBuf,
    id: Option<(u64, u64)>,
}

impl DbFile {
    /// The file now at `path`.
    pub(super) fn of(path: &Path) -> Option<DbFile> {
        Some(DbFile {
            path: path.to_path_buf(),
            id: Some(file_id(path)?),
        })
    }

    /// Why writing there would lose the turns, if it would.
    fn problem(&self) -> Option<String> {
        let name = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match file_id(&self.path) {
            None => Some(format!(
                "the database file {name} was deleted while MetaClaw was running; nothing is recorded until it restarts"
            )),
            Some(id) if Some(id) != self.id => Some(format!(
                "the database file {name} was replaced while MetaClaw was running; nothing is recorded until it restarts"
            )),
            Some(_) => None,
        }
    }
}

#[cfg(unix)]
fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|_| (0, 0))
}

impl RecorderWorker {
    pub(super) fn spawn(
        store: Store,
        queue: Receiver<Message>,
        handle: RecorderHandle,
        file: Option<DbFile>,
    ) -> Result<RecorderWorker, RecorderError> {
        let worker_handle = handle.clone();
        let thread = thread::Builder::new()
            .name("metaclaw-recorder".to_owned())
            .spawn(move || run(store, &queue, &worker_handle, file.as_ref()))
            .map_err(RecorderError::Spawn)?;
        Ok(RecorderWorker {
            handle,
            thread: Some(thread),
        })
    }

    /// Commits everything queued so far, then stops the thread and waits for it.
    pub fn shutdown(mut self) -> Result<(), RecorderError> {
        self.stop()
    }

    fn stop(&mut self) -> Result<(), RecorderError> {
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        // A failed send means the thread already ended; joining tells how.
        let sent = self.handle.send_control(Message::Shutdown);
        thread.join().map_err(|_| RecorderError::Stopped)?;
        sent
    }
}

impl Drop for RecorderWorker {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            tracing::error!(error = %e, "recorder did not shut down cleanly");
        }
    }
}

fn run(
    mut store: Store,
    queue: &Receiver<Message>,
    handle: &RecorderHandle,
    file: Option<&DbFile>,
) {
    lower_priority();
    let mut pending = Pending {
        file,
        ..Pending::default()
    };
    let mut calls_saved = crate::llm::calls::version();
    let mut converting = true;
    while let Some(first) = next_message(&mut store, queue, &mut converting) {
        // Linger briefly so a busy proxy's turns share one transaction instead of paying a
        // commit each; flushes and shutdown are still answered at once.
        let deadline = Instant::now() + LINGER;
        let mut next = Some(first);
        let mut taken = 0;
        while let Some(message) = next.take() {
            taken += 1;
            match message {
                Message::Turn(record) => {
                    let shared = handle.shared();
                    shared.depth.fetch_sub(1, Ordering::Relaxed);
                    shared.bytes.fetch_sub(weight(&record), Ordering::Relaxed);
                    pending.turns.push(new_turn(*record));
                }
                // Events and control messages keep their place relative to the turns.
                Message::Block(block) => pending.blocks.push(block),
                Message::Event(event) => {
                    pending.write(&mut store, handle);
                    apply_event(&mut store, &event);
                }
                Message::Flush(done) => {
                    pending.write(&mut store, handle);
                    save_learning_usage(&mut store);
                    // The asker may have stopped waiting; nothing to do then.
                    let _ = done.send(());
                }
                Message::Release => {
                    pending.write(&mut store, handle);
                    if let Err(e) = store.connection().execute_batch("PRAGMA shrink_memory") {
                        tracing::debug!("recorder: page cache not released: {e}");
                    }
                }
                Message::Shutdown => {
                    pending.write(&mut store, handle);
                    save_learning_calls(&mut store, &mut calls_saved);
                    save_learning_usage(&mut store);
                    tracing::debug!("recorder stopped");
                    return;
                }
            }
            if taken >= MAX_BATCH {
                break;
            }
            next = queue
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .ok();
        }
        pending.write(&mut store, handle);
        save_learning_calls(&mut store, &mut calls_saved);
        save_learning_usage(&mut store);
    }
}

/// Turns stored before schema v9 to convert per batch: a few hundred milliseconds at most,
/// which a turn arriving meanwhile waits for in the queue (never on the request path).
const CONVERT_BATCH: usize = 200;

/// The next message; while earlier turns are left to convert to the compact layout, one
/// batch of them is converted each time the queue is empty. `None` once every sender is gone.
fn next_message(
    store: &mut Store,
    queue: &Receiver<Message>,
    converting: &mut bool,
) -> Option<Message> {
    while *converting {
        match queue.try_recv() {
            Ok(message) => return Some(message),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) => match store.convert_turns(CONVERT_BATCH) {
                Ok(Some(n)) => tracing::debug!(turns = n, "earlier turns converted"),
                Ok(None) => *converting = false,
                Err(e) => {
                    // Left as they are (readable); the next start tries again.
                    tracing::warn!(error = %e, "earlier turns not converted to the compact layout");
                    *converting = false;
                }
            },
        }
    }
    queue.recv().ok()
}

/// Adds learning's calls since the last batch to the per-day counts; kept for the next batch
/// when the database refuses them.
fn save_learning_usage(store: &mut Store) {
    let rows = crate::llm::calls::take_unsaved();
    if rows.is_empty() {
        return;
    }
    if let Err(e) = store.add_learning_usage(&rows) {
        tracing::debug!(error = %e, "learning usage not saved; retried with the next batch");
        crate::llm::calls::put_back(rows);
    }
}

/// The engine's one writer also keeps today's learning calls, when they changed: one small
/// row, written after a batch of turns and at shutdown.
fn save_learning_calls(store: &mut Store, saved: &mut u64) {
    let now = crate::llm::calls::version();
    if now == *saved {
        return;
    }
    match store.state_set(LEARNING_CALLS_KEY, &crate::llm::calls::saved_today()) {
        Ok(()) => *saved = now,
        Err(e) => tracing::debug!(error = %e, "today's learning calls not saved"),
    }
}

/// Recording is background work: on a busy machine the threads serving agents go first.
fn lower_priority() {
    // On Linux, niceness is per thread and this call applies to the calling thread only.
    #[cfg(target_os = "linux")]
    if let Err(e) = rustix::process::setpriority_process(None, RECORDER_NICE) {
        tracing::debug!(error = %e, "could not lower the recorder thread's priority");
    }
}

/// What is waiting for the next transaction.
#[derive(Default)]
struct Pending<'f> {
    turns: Vec<NewTurn>,
    blocks: Vec<NewBlock>,
    file: Option<&'f DbFile>,
}

impl Pending<'_> {
    fn write(&mut self, store: &mut Store, handle: &RecorderHandle) {
        if (!self.turns.is_empty() || !self.blocks.is_empty())
            && let Some(problem) = self.file.and_then(DbFile::problem)
        {
            if !self.turns.is_empty() {
                tracing::error!(turns = self.turns.len(), "{problem}; turns not recorded");
                handle.lost(self.turns.len(), problem.clone());
            }
            *handle
                .shared()
                .database_problem
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(problem);
            self.turns.clear();
            self.blocks.clear();
            return;
        }
        write_turns(store, &mut self.turns, handle);
        if !self.blocks.is_empty() {
            if let Err(e) = store.put_injected_blocks(&self.blocks) {
                tracing::warn!(error = %e, blocks = self.blocks.len(), "context blocks not remembered");
            }
            self.blocks.clear();
        }
    }
}

/// Writes the pending turns in one transaction. If the batch is refused, each turn is
/// retried alone so one bad row cannot take the others down with it.
fn write_turns(store: &mut Store, pending: &mut Vec<NewTurn>, handle: &RecorderHandle) {
    if pending.is_empty() {
        return;
    }
    if let Err(e) = store.insert_turns(pending) {
        tracing::warn!(error = %e, turns = pending.len(), "batch write failed; retrying turns one by one");
        for turn in pending.iter() {
            if let Err(e) = store.insert_turns(std::slice::from_ref(turn)) {
                handle.lost(1, format!("the database refused the write: {e}"));
                tracing::error!(error = %e, session_id = %turn.session_id, "turn not recorded");
            }
        }
    }
    pending.clear();
}

fn apply_event(store: &mut Store, event: &SessionEvent) {
    let result = match event {
        SessionEvent::Started {
            session_id,
            scope,
            at,
        } => store.session_started(session_id, scope, unix_ms(*at)),
        SessionEvent::Ended {
            session_id,
            reason,
            at,
            ..
        } => store
            .session_ended(session_id, reason.as_str(), unix_ms(*at))
            .map(|ended| {
                if !ended {
                    tracing::debug!(%session_id, "end of an unknown or already ended session");
                }
            }),
    };
    if let Err(e) = result {
        tracing::error!(error = %e, "session event not recorded");
    }
}
