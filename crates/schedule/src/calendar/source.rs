//! The calendar as a [`Source`]: reads the cache the poller fills, never the network.

use std::sync::{Arc, RwLock};

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::{BusyBlock, CalendarError, HORIZON};
use crate::source::{Reading, Reason, Source, Upcoming};

/// What the last fetch found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CalendarState {
    /// Busy blocks from the last successful fetch, in time order.
    pub blocks: Vec<BusyBlock>,
    /// When the last fetch succeeded.
    pub fetched_at: Option<Timestamp>,
    /// Why the last fetch failed, if it did.
    pub error: Option<String>,
}

/// Cheap to clone; clones (and the poller) share the cache.
#[derive(Debug, Clone, Default)]
pub struct CalendarSource {
    state: Arc<RwLock<CalendarState>>,
}

impl CalendarSource {
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of the cache, for status.
    pub fn state(&self) -> CalendarState {
        self.state
            .read()
            .map(|s| s.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    pub fn set_blocks(&self, blocks: Vec<BusyBlock>, fetched_at: Timestamp) {
        self.update(|s| {
            s.blocks = blocks;
            s.fetched_at = Some(fetched_at);
            s.error = None;
        });
    }

    pub fn set_error(&self, error: &CalendarError) {
        let text = error.to_string();
        self.update(|s| s.error = Some(text));
    }

    fn update(&self, f: impl FnOnce(&mut CalendarState)) {
        match self.state.write() {
            Ok(mut s) => f(&mut s),
            Err(p) => f(&mut p.into_inner()),
        }
    }
}

impl Source for CalendarSource {
    fn reason(&self) -> Reason {
        Reason::Calendar
    }

    fn read(&self, now: Timestamp) -> Reading {
        let Ok(state) = self.state.read() else {
            return Reading::Unavailable {
                detail: "the calendar cache is unreadable".into(),
            };
        };
        if let Some(e) = &state.error {
            return Reading::Unavailable { detail: e.clone() };
        }
        let Some(fetched_at) = state.fetched_at else {
            return Reading::Unavailable {
                detail: "the calendar has not been read yet".into(),
            };
        };
        // A fetch covers the next 24 hours; past that the cache knows nothing (the machine
        // slept through the polls).
        if now.duration_since(fetched_at) >= SignedDuration::try_from(HORIZON).unwrap_or_default() {
            return Reading::Unavailable {
                detail: format!("the calendar was last read at {fetched_at}"),
            };
        }
        match state.blocks.iter().find(|b| b.start <= now && now < b.end) {
            Some(b) => Reading::Open { until: Some(b.end) },
            None => Reading::Closed,
        }
    }

    fn next(&self, now: Timestamp) -> Option<Upcoming> {
        let state = self.state.read().ok()?;
        if state.error.is_some() {
            return None;
        }
        state
            .blocks
            .iter()
            .find(|b| b.start > now)
            .map(|b| Upcoming {
                reason: Reason::Calendar,
                starts: b.start,
                ends: Some(b.end),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn open_inside_a_block_until_its_end_closed_outside_unavailable_on_error() {
        let source = CalendarSource::new();
        assert!(matches!(
            source.read(ts("2026-03-02T10:30:00Z")),
            Reading::Unavailable { .. }
        ));
        source.set_blocks(
            vec![BusyBlock {
                start: ts("2026-03-02T10:00:00Z"),
                end: ts("2026-03-02T11:30:00Z"),
                titles: vec![],
            }],
            ts("2026-03-02T09:00:00Z"),
        );
        assert_eq!(
            source.read(ts("2026-03-02T10:30:00Z")),
            Reading::Open {
                until: Some(ts("2026-03-02T11:30:00Z"))
            }
        );
        assert_eq!(source.read(ts("2026-03-02T11:30:00Z")), Reading::Closed);
        assert_eq!(source.read(ts("2026-03-02T09:59:59Z")), Reading::Closed);
        assert_eq!(
            source.next(ts("2026-03-02T09:00:00Z")).map(|u| u.starts),
            Some(ts("2026-03-02T10:00:00Z"))
        );
        assert_eq!(source.next(ts("2026-03-02T10:30:00Z")), None);
        assert_eq!(
            source.read(ts("2026-03-03T09:00:00Z")),
            Reading::Unavailable {
                detail: "the calendar was last read at 2026-03-02T09:00:00Z".into()
            },
            "a day-old cache knows nothing"
        );
        source.set_error(&CalendarError::Revoked);
        assert_eq!(
            source.read(ts("2026-03-02T10:30:00Z")),
            Reading::Unavailable {
                detail: CalendarError::Revoked.to_string()
            }
        );
    }
}
