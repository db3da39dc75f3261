//! Time as the scheduler sees it: an instant plus the local time zone, so sleep hours are
//! read in the user's wall-clock time (DST included) and tests can move both.

use std::sync::{Arc, Mutex};

use jiff::tz::TimeZone;
use jiff::{Timestamp, ZonedDateTime};

pub trait Clock: Send + Sync {
    fn now(&self) -> Timestamp;
    fn time_zone(&self) -> TimeZone;

    fn now_zoned(&self) -> ZonedDateTime {
        self.now().to_zoned_datetime(self.time_zone())
    }
}

/// The machine's clock and time zone (`TZ`, else `/etc/localtime`, else UTC).
#[derive(Debug, Clone, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }

    fn time_zone(&self) -> TimeZone {
        TimeZone::system()
    }
}

/// A clock tests move by hand. Clones share the time.
#[derive(Debug, Clone)]
pub struct FakeClock {
    now: Arc<Mutex<Timestamp>>,
    tz: TimeZone,
}

impl FakeClock {
    pub fn new(now: Timestamp, tz: TimeZone) -> Self {
        FakeClock {
            now: Arc::new(Mutex::new(now)),
            tz,
        }
    }

    pub fn set(&self, now: Timestamp) {
        if let Ok(mut t) = self.now.lock() {
            *t = now;
        }
    }

    pub fn advance(&self, by: std::time::Duration) {
        if let Ok(mut t) = self.now.lock()
            && let Ok(next) = t.checked_add(jiff::SignedDuration::try_from(by).unwrap_or_default())
        {
            *t = next;
        }
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Timestamp {
        self.now
            .lock()
            .map(|t| *t)
            .unwrap_or_else(|p| *p.into_inner())
    }

    fn time_zone(&self) -> TimeZone {
        self.tz.clone()
    }
}
