//! One thing that can open a window: sleep hours, the user being idle, a meeting.

use std::fmt;

use jiff::{Timestamp, ZonedDateTime};
use serde::{Deserialize, Serialize};

use crate::clock::describe_time;

/// Why a window is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    Sleep,
    Idle,
    Calendar,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reason::Sleep => "sleep",
            Reason::Idle => "idle",
            Reason::Calendar => "calendar",
        })
    }
}

/// What a source says now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Reading {
    /// The user is away; `until` is when the source expects them back (the end of the sleep
    /// hours or of the meeting), `None` when it cannot know (idle).
    Open {
        until: Option<Timestamp>,
    },
    Closed,
    /// The source cannot tell (no display, calendar unreachable, token revoked): counts as
    /// closed; `detail` says why, for status.
    Unavailable {
        detail: String,
    },
}

/// A window a source expects to open later, for "next window".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Upcoming {
    pub reason: Reason,
    pub starts: Timestamp,
    pub ends: Option<Timestamp>,
}

impl Upcoming {
    /// "tonight 23:00 (sleep)", "tomorrow 10:00 (calendar)", for status lines.
    pub fn describe(&self, now: &ZonedDateTime) -> String {
        let when = describe_time(self.starts, now);
        let local = self.starts.to_zoned_datetime(now.time_zone().clone());
        // "tonight" reads better than a bare time for an evening window later today.
        let tonight = local.date() == now.date() && local.hour() >= 18;
        if tonight {
            format!("tonight {when} ({})", self.reason)
        } else {
            format!("{when} ({})", self.reason)
        }
    }
}

pub trait Source: Send + Sync {
    fn reason(&self) -> Reason;

    /// Its reading at `now`. Must be cheap and never block on I/O: sources that poll
    /// (the calendar) read their cache here.
    fn read(&self, now: Timestamp) -> Reading;

    /// The next window this source can predict that starts strictly after `now` (tonight's
    /// sleep hours, the next meeting); `None` for sources that cannot predict (idle). The
    /// scheduler calls it again from a returned window's start to look further ahead (past a
    /// pause), so a source must return a later window each time.
    fn next(&self, now: Timestamp) -> Option<Upcoming>;
}
