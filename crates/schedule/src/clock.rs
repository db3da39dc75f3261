//! Time as the scheduler sees it: an instant plus the local time zone, so sleep hours are
//! read in the user's wall-clock time (DST included) and tests can move both.

use std::sync::{Arc, Mutex};

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, ZonedDateTime};

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

/// `t` as the user reads it relative to `now` (both in `now`'s time zone): "06:55" today,
/// "tomorrow 07:00", "Sat 09:00" within the week, else "2026-12-24 09:00".
pub fn describe_time(t: Timestamp, now: &ZonedDateTime) -> String {
    let local = t.to_zoned_datetime(now.time_zone().clone());
    let hm = format!("{:02}:{:02}", local.hour(), local.minute());
    let (day, today) = (local.date(), now.date());
    if day == today {
        hm
    } else if today.tomorrow().is_ok_and(|d| d == day) {
        format!("tomorrow {hm}")
    } else if day > today && t.duration_since(now.timestamp()) < SignedDuration::from_hours(24 * 6)
    {
        format!("{} {hm}", local.strftime("%a"))
    } else {
        format!("{} {hm}", local.strftime("%Y-%m-%d"))
    }
}

/// A span for a sentence: "10 min", "2 h 5 min", "less than a minute".
pub fn describe_duration(d: SignedDuration) -> String {
    let minutes = d.as_secs().max(0) / 60;
    match (minutes / 60, minutes % 60) {
        (0, 0) => "less than a minute".to_string(),
        (0, m) => format!("{m} min"),
        (h, 0) => format!("{h} h"),
        (h, m) => format!("{h} h {m} min"),
    }
}
