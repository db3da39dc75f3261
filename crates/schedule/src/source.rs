//! One thing that can open a window: sleep hours, the user being idle, a meeting.

use std::fmt;

use jiff::Timestamp;
use serde::Serialize;

/// Why a window is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Upcoming {
    pub reason: Reason,
    pub starts: Timestamp,
    pub ends: Option<Timestamp>,
}

pub trait Source: Send + Sync {
    fn reason(&self) -> Reason;

    /// Its reading at `now`. Must be cheap and never block on I/O: sources that poll
    /// (the calendar) read their cache here.
    fn read(&self, now: Timestamp) -> Reading;

    /// The next window this source can predict after `now` (sleep hours, the next
    /// meeting); `None` for sources that cannot predict (idle).
    fn next(&self, now: Timestamp) -> Option<Upcoming>;
}
