//! The fallback idle measure: time since the proxy last served a request.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use jiff::Timestamp;

use super::IdleProbe;
use crate::clock::Clock;

/// When the proxy last saw a request, shared between the proxy (which touches it) and the idle
/// probe (which reads it). A clone shares the same instant; an atomic keeps the proxy's hot path
/// lock-free.
#[derive(Debug, Clone)]
pub struct LastActivity {
    millis: Arc<AtomicI64>,
}

impl LastActivity {
    /// Starts at `now` (process start), so "idle" first means a full threshold of silence
    /// after start — not "idle since 1970".
    pub fn new(now: Timestamp) -> Self {
        LastActivity {
            millis: Arc::new(AtomicI64::new(now.as_millisecond())),
        }
    }

    /// Records activity at `now`. Never moves backwards: concurrent requests may touch out of
    /// order, and the latest one is what matters.
    pub fn touch(&self, now: Timestamp) {
        self.millis
            .fetch_max(now.as_millisecond(), Ordering::Relaxed);
    }

    /// The instant of the last activity.
    pub fn last(&self) -> Timestamp {
        Timestamp::from_millisecond(self.millis.load(Ordering::Relaxed))
            .unwrap_or(Timestamp::UNIX_EPOCH)
    }

    /// Time since the last activity; zero if `now` is before it (a clock stepped back).
    pub fn idle_for(&self, now: Timestamp) -> Duration {
        let elapsed = now
            .as_millisecond()
            .saturating_sub(self.millis.load(Ordering::Relaxed));
        Duration::from_millis(u64::try_from(elapsed).unwrap_or(0))
    }
}

/// "Time since the last proxy request": the idle probe where no display exists. Any agent
/// traffic counts as the user here — the best available guess without a keyboard to watch.
#[derive(Clone)]
pub struct RequestIdle {
    pub last: LastActivity,
    pub clock: Arc<dyn Clock>,
}

impl RequestIdle {
    pub fn new(last: LastActivity, clock: Arc<dyn Clock>) -> Self {
        RequestIdle { last, clock }
    }
}

impl fmt::Debug for RequestIdle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestIdle")
            .field("last", &self.last.last())
            .finish_non_exhaustive()
    }
}

impl IdleProbe for RequestIdle {
    fn idle_for(&self) -> Result<Duration, String> {
        Ok(self.last.idle_for(self.clock.now()))
    }

    fn name(&self) -> &'static str {
        "last-request"
    }
}
