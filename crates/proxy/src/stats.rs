//! Counters for `metaclaw status`: requests served and the last error, read without locks on
//! the hot path (the error slot is written only on failures).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

#[derive(Default)]
pub struct Stats {
    requests: AtomicU64,
    errors: AtomicU64,
    last_error: Mutex<Option<(SystemTime, String)>>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct StatsSnapshot {
    pub requests: u64,
    pub errors: u64,
    pub last_error: Option<String>,
    pub last_error_at_ms: Option<u64>,
}

impl Stats {
    pub fn request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    pub fn error(&self, message: &str) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut slot) = self.last_error.lock() {
            *slot = Some((SystemTime::now(), message.to_string()));
        }
    }

    pub fn snapshot(&self) -> StatsSnapshot {
        let last = self.last_error.lock().ok().and_then(|s| s.clone());
        StatsSnapshot {
            requests: self.requests.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            last_error_at_ms: last.as_ref().and_then(|(t, _)| {
                t.duration_since(SystemTime::UNIX_EPOCH)
                    .ok()
                    .map(|d| d.as_millis() as u64)
            }),
            last_error: last.map(|(_, m)| m),
        }
    }
}
