//! The sending side: never blocks on the hot path.

use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Instant, SystemTime};

use bytes::Bytes;
use metaclaw_proxy::seams::{ReplyCapture, SessionEvent, TurnRecord, TurnSink};
use metaclaw_store::NewBlock;

use super::{Message, RecorderError, RecorderHealth};
use crate::clock::unix_ms;

const WARN_EVERY_MS: u64 = 1000;

/// Bytes of turns (requests and replies) the queue may hold. Agents resend their whole
/// history, so one turn can be hundreds of kilobytes: a count alone would let a stalled disk
/// hold gigabytes. 4 MiB is dozens of such turns, more than an agent sends in the time one
/// transaction takes; only a disk that stalls (or a load no agent produces) fills it, and
/// what it then sheds is counted in status.
pub(super) const MAX_QUEUED_BYTES: usize = 4 * 1024 * 1024;

/// What a queued turn weighs, counted the same way when it enters and leaves the queue.
pub(super) fn weight(turn: &TurnRecord) -> usize {
    let reply = match &turn.reply {
        ReplyCapture::Json(b) => b.len(),
        ReplyCapture::Sse(chunks) => chunks.iter().map(Bytes::len).sum(),
        ReplyCapture::None => 0,
    };
    turn.request.len().saturating_add(reply)
}

/// Where the proxy hands finished turns and session events. Clones share one queue.
#[derive(Clone)]
pub struct RecorderHandle {
    tx: SyncSender<Message>,
    shared: Arc<Shared>,
}

/// Counters shared by the handles and the worker.
pub(super) struct Shared {
    /// Turns queued but not yet taken by the worker.
    pub(super) depth: AtomicUsize,
    /// What the queued turns weigh ([`weight`]).
    pub(super) bytes: AtomicUsize,
    dropped: AtomicU64,
    /// When a turn was last dropped for a full queue (ms since the epoch; 0 never).
    dropped_at_ms: AtomicI64,
    pub(super) failed: AtomicU64,
    /// Why turns were last lost on the way to the database, and when.
    pub(super) last_failure: Mutex<Option<(String, i64)>>,
    /// The database can no longer be written (its file was deleted or replaced).
    pub(super) database_problem: Mutex<Option<String>>,
    started: Instant,
    /// Milliseconds after `started` before which no new "queue full" warning is logged.
    next_warn_ms: AtomicU64,
}

/// Creates the queue; the receiver goes to the worker.
pub(super) fn channel(capacity: usize) -> (RecorderHandle, Receiver<Message>) {
    let (tx, rx) = mpsc::sync_channel(capacity);
    let shared = Arc::new(Shared {
        depth: AtomicUsize::new(0),
        bytes: AtomicUsize::new(0),
        dropped: AtomicU64::new(0),
        dropped_at_ms: AtomicI64::new(0),
        failed: AtomicU64::new(0),
        last_failure: Mutex::new(None),
        database_problem: Mutex::new(None),
        started: Instant::now(),
        next_warn_ms: AtomicU64::new(0),
    });
    (RecorderHandle { tx, shared }, rx)
}

impl RecorderHandle {
    /// Turns dropped because the queue was full or the recorder had stopped.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// Turns the database refused to store.
    pub fn failed(&self) -> u64 {
        self.shared.failed.load(Ordering::Relaxed)
    }

    /// Turns lost on their way to the database and why, for status.
    pub fn health(&self) -> RecorderHealth {
        let shared = &self.shared;
        let dropped_at = shared.dropped_at_ms.load(Ordering::Relaxed);
        let failure = shared
            .last_failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        RecorderHealth {
            dropped_queue_full: self.dropped(),
            last_dropped_at_ms: (dropped_at > 0).then_some(dropped_at),
            failed_writes: self.failed(),
            last_write_error: failure.as_ref().map(|(e, _)| e.clone()),
            last_write_error_at_ms: failure.map(|(_, at)| at),
            database_problem: shared
                .database_problem
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        }
    }

    /// Blocks until everything queued before this call is committed. Not for the hot path.
    pub fn flush(&self) -> Result<(), RecorderError> {
        let (done, wait) = mpsc::channel();
        self.send_control(Message::Flush(done))?;
        wait.recv().map_err(|_| RecorderError::Stopped)
    }

    /// The proxy went quiet: asks the worker to give back its connection's page cache (up to
    /// 2 MB, refilled from disk by the next turns). Skipped when the queue is full: then the
    /// proxy is not quiet.
    pub fn release_memory(&self) {
        let _ = self.tx.try_send(Message::Release);
    }

    /// Queues a remembered block; dropped (and logged) when the queue is full, which costs
    /// stickiness after a restart, never the request.
    pub fn remember_block(&self, block: NewBlock) {
        if self.tx.try_send(Message::Block(block)).is_err() {
            self.warn_dropped("a remembered context block");
        }
    }

    pub(super) fn shared(&self) -> &Shared {
        &self.shared
    }

    /// `turns` turns were not recorded because of `reason`.
    pub(super) fn lost(&self, turns: usize, reason: String) {
        let shared = &self.shared;
        shared
            .failed
            .fetch_add(u64::try_from(turns).unwrap_or(u64::MAX), Ordering::Relaxed);
        *shared
            .last_failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some((reason, unix_ms(SystemTime::now())));
    }

    /// Control messages wait for room: they come from shutdown paths and tests, which
    /// want the guarantee more than the latency.
    pub(super) fn send_control(&self, message: Message) -> Result<(), RecorderError> {
        self.tx.send(message).map_err(|_| RecorderError::Stopped)
    }

    fn warn_dropped(&self, what: &str) {
        let shared = &self.shared;
        let now = u64::try_from(shared.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let next = shared.next_warn_ms.load(Ordering::Relaxed);
        let due = now >= next
            && shared
                .next_warn_ms
                .compare_exchange(
                    next,
                    now.saturating_add(WARN_EVERY_MS),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok();
        if due {
            tracing::warn!(
                dropped_turns = self.dropped(),
                "recorder queue full or stopped; dropping {what}"
            );
        }
    }
}

impl TurnSink for RecorderHandle {
    fn turn_finished(&self, turn: TurnRecord) {
        let shared = &self.shared;
        let weight = weight(&turn);
        // Counted before sending so the worker's decrement can never run first. An empty
        // queue takes any turn, however heavy, so one huge request is still recorded.
        shared.depth.fetch_add(1, Ordering::Relaxed);
        let held = shared.bytes.fetch_add(weight, Ordering::Relaxed);
        let too_heavy = held > 0 && held.saturating_add(weight) > MAX_QUEUED_BYTES;
        if too_heavy || self.tx.try_send(Message::Turn(Box::new(turn))).is_err() {
            shared.depth.fetch_sub(1, Ordering::Relaxed);
            shared.bytes.fetch_sub(weight, Ordering::Relaxed);
            shared.dropped.fetch_add(1, Ordering::Relaxed);
            shared
                .dropped_at_ms
                .store(unix_ms(SystemTime::now()), Ordering::Relaxed);
            self.warn_dropped("a turn");
        }
    }

    fn queue_depth(&self) -> usize {
        self.shared.depth.load(Ordering::Relaxed)
    }

    fn session_event(&self, event: &SessionEvent) {
        if self.tx.try_send(Message::Event(event.clone())).is_err() {
            self.warn_dropped("a session event");
        }
    }
}
