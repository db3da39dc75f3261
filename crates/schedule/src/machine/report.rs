//! What the scheduler tells the outside: events for the stream the tray and UI follow, a
//! snapshot for status, and why a step may not start now.

use std::fmt;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp, ZonedDateTime};
use serde::Serialize;

use crate::clock::{describe_duration, describe_time};
use crate::pause::Pause;
use crate::source::{Reading, Reason, Upcoming};

/// Why a window closed or a step was told to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CloseReason {
    /// Its predicted end (the sleep hours', the meeting's) passed.
    Ended,
    /// The idle source saw keyboard or mouse input.
    UserReturned,
    /// A source closed before its predicted end (a meeting cancelled, the source
    /// unavailable).
    SourceClosed,
    /// The user paused.
    Paused,
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CloseReason::Ended => "the window ended",
            CloseReason::UserReturned => "the user returned",
            CloseReason::SourceClosed => "its source closed early",
            CloseReason::Paused => "learning was paused",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Opened {
        reasons: Vec<Reason>,
        until: Option<Timestamp>,
    },
    Closed {
        why: CloseReason,
    },
    StepStarted {
        owner: String,
    },
    StepStopped {
        owner: String,
        why: CloseReason,
    },
    StepFinished {
        owner: String,
    },
    Paused {
        until: Option<Timestamp>,
    },
    Resumed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Phase {
    Waiting,
    Open {
        reasons: Vec<Reason>,
        since: Timestamp,
        until: Option<Timestamp>,
    },
    Running {
        reasons: Vec<Reason>,
        since: Timestamp,
        until: Option<Timestamp>,
        owner: String,
        step_started: Timestamp,
    },
    Paused {
        since: Timestamp,
        until: Option<Timestamp>,
    },
}

/// One source's last reading: `{"reason": "sleep", "state": "open", "until": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceReading {
    pub reason: Reason,
    #[serde(flatten)]
    pub reading: Reading,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    pub phase: Phase,
    /// As of the last tick (empty before the first).
    pub readings: Vec<SourceReading>,
    pub next: Option<Upcoming>,
    pub pause: Option<Pause>,
    pub min_window_minutes: u64,
    /// The owner of a step told to stop that has not reported back yet.
    pub stopping: Option<String>,
    pub at: Timestamp,
}

/// Why a step may not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    NoWindow {
        next: Option<Upcoming>,
    },
    Paused {
        until: Option<Timestamp>,
    },
    /// The window ends before a step could finish.
    TooShort {
        reason: Reason,
        ends: Timestamp,
        left: SignedDuration,
        needs: Duration,
    },
    Busy {
        owner: String,
        stopping: bool,
    },
}

/// A refused step: the [`Refusal`] plus the local time, to say it in a sentence.
#[derive(Debug, Clone)]
pub struct NotNow {
    pub why: Refusal,
    now: ZonedDateTime,
}

impl NotNow {
    pub(crate) fn new(why: Refusal, now: ZonedDateTime) -> NotNow {
        NotNow { why, now }
    }
}

impl fmt::Display for NotNow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let now = &self.now;
        match &self.why {
            Refusal::NoWindow { next: Some(next) } => {
                write!(f, "no window is open; next: {}", next.describe(now))
            }
            Refusal::NoWindow { next: None } => {
                f.write_str("no window is open, and none is predicted")
            }
            Refusal::Paused { until: Some(until) } => {
                write!(f, "paused until {}", describe_time(*until, now))
            }
            Refusal::Paused { until: None } => f.write_str("paused until resumed"),
            Refusal::TooShort {
                reason,
                ends,
                left,
                needs,
            } => write!(
                f,
                "the {reason} window ends at {}, in {}, less than the {} a step needs",
                describe_time(*ends, now),
                describe_duration(*left),
                describe_duration(SignedDuration::try_from(*needs).unwrap_or(SignedDuration::MAX)),
            ),
            Refusal::Busy {
                owner,
                stopping: false,
            } => write!(f, "a step is already running ({owner})"),
            Refusal::Busy {
                owner,
                stopping: true,
            } => write!(f, "a step is still stopping ({owner})"),
        }
    }
}

impl std::error::Error for NotNow {}
