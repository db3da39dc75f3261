//! Automatic learning triggers waiting in a worker's queue.
//!
//! A trigger for a session whose earlier trigger has not started yet adds nothing: the job
//! reads every turn of the session not yet learned from when it runs. So it is dropped
//! instead of queued, and a long session with a slow learning model cannot fill the queue
//! with copies of one job, nor the log with a warning per turn.

use std::collections::HashSet;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use tokio::sync::mpsc;

pub struct Queued<K> {
    keys: Mutex<HashSet<K>>,
    /// The queue was found full and that was logged; cleared by the next job that fits.
    full: AtomicBool,
}

impl<K> Default for Queued<K> {
    fn default() -> Self {
        Queued {
            keys: Mutex::new(HashSet::new()),
            full: AtomicBool::new(false),
        }
    }
}

impl<K: Hash + Eq + Clone> Queued<K> {
    fn keys(&self) -> std::sync::MutexGuard<'_, HashSet<K>> {
        self.keys.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `job` under `key` unless a job for `key` is already waiting. True when it was
    /// queued. A full queue is logged once per stretch (`what` names the worker).
    pub fn send<J>(&self, tx: &mpsc::Sender<J>, key: K, job: J, what: &str) -> bool {
        if !self.keys().insert(key.clone()) {
            return false;
        }
        if tx.try_send(job).is_err() {
            self.keys().remove(&key);
            if !self.full.swap(true, Ordering::Relaxed) {
                tracing::warn!("{what} queue full; automatic triggers are skipped until it drains");
            }
            return false;
        }
        self.full.store(false, Ordering::Relaxed);
        true
    }

    /// The worker took the job queued under `key`: a later trigger queues a new one (its
    /// turns may come after what the running job reads).
    pub fn started(&self, key: &K) {
        self.keys().remove(key);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.keys().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_trigger_for_a_waiting_session_is_dropped_until_the_first_starts() {
        let (tx, mut rx) = mpsc::channel::<u32>(8);
        let q = Queued::default();
        assert!(q.send(&tx, "s", 1, "test"));
        assert!(!q.send(&tx, "s", 2, "test"), "s already waits");
        assert!(q.send(&tx, "t", 3, "test"), "another session queues");
        assert_eq!(q.len(), 2);
        assert_eq!(rx.try_recv().ok(), Some(1));
        q.started(&"s");
        assert!(q.send(&tx, "s", 4, "test"), "once started, s queues again");
        assert_eq!(rx.try_recv().ok(), Some(3));
        assert_eq!(rx.try_recv().ok(), Some(4));
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn a_job_that_did_not_fit_is_not_counted_as_waiting() {
        let (tx, mut rx) = mpsc::channel::<u32>(1);
        let q = Queued::default();
        assert!(q.send(&tx, "a", 1, "test"));
        assert!(!q.send(&tx, "b", 2, "test"), "the queue is full");
        assert!(!q.send(&tx, "b", 3, "test"));
        assert_eq!(q.len(), 1, "only a waits");
        assert_eq!(rx.try_recv().ok(), Some(1));
        q.started(&"a");
        assert!(
            q.send(&tx, "b", 4, "test"),
            "b was never queued, so it may be now"
        );
        assert_eq!(rx.try_recv().ok(), Some(4));
    }
}
