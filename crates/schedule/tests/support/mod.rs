//! A settable fake source and time helpers shared by the scheduler tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use metaclaw_schedule::source::{Reading, Reason, Source, Upcoming};

/// A source tests set by hand; clones share the state.
#[derive(Clone)]
pub struct FakeSource {
    reason: Reason,
    reading: Arc<Mutex<Reading>>,
    upcoming: Arc<Mutex<Vec<Upcoming>>>,
}

impl FakeSource {
    pub fn new(reason: Reason) -> FakeSource {
        FakeSource {
            reason,
            reading: Arc::new(Mutex::new(Reading::Closed)),
            upcoming: Arc::new(Mutex::new(Vec::new())),
        }
    }

    pub fn set(&self, reading: Reading) {
        *self.reading.lock().unwrap() = reading;
    }

    pub fn open(&self, until: Option<Timestamp>) {
        self.set(Reading::Open { until });
    }

    pub fn close(&self) {
        self.set(Reading::Closed);
    }

    /// Windows this source predicts, as (start, end).
    pub fn predict(&self, windows: &[(Timestamp, Timestamp)]) {
        *self.upcoming.lock().unwrap() = windows
            .iter()
            .map(|&(starts, ends)| Upcoming {
                reason: self.reason,
                starts,
                ends: Some(ends),
            })
            .collect();
    }

    pub fn boxed(&self) -> Box<dyn Source> {
        Box::new(self.clone())
    }
}

impl Source for FakeSource {
    fn reason(&self) -> Reason {
        self.reason
    }

    fn read(&self, _now: Timestamp) -> Reading {
        self.reading.lock().unwrap().clone()
    }

    fn next(&self, now: Timestamp) -> Option<Upcoming> {
        let mut upcoming = self.upcoming.lock().unwrap().clone();
        upcoming.sort_by_key(|u| u.starts);
        upcoming.into_iter().find(|u| u.starts > now)
    }
}

pub fn tz(name: &str) -> TimeZone {
    TimeZone::get(name).unwrap()
}

/// An RFC 3339 instant: "2026-03-08T07:00:00Z".
pub fn ts(s: &str) -> Timestamp {
    s.parse().unwrap()
}

/// The local wall-clock time "2026-03-07T23:00" in `tz` (compatible disambiguation; only
/// used for times that exist once).
pub fn local(tz: &TimeZone, s: &str) -> Timestamp {
    let dt: DateTime = s.parse().unwrap();
    let amb = tz.to_ambiguous_timestamp(dt);
    assert!(!amb.is_ambiguous(), "{s} is ambiguous in the test's zone");
    amb.compatible().unwrap()
}
