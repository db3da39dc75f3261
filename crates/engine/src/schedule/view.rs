//! What `GET /api/scheduler` answers and `metaclaw scheduler status` reads: the state of the
//! window, each source's reading, the pause, the next window, and the same in words.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use metaclaw_schedule::machine::{Phase, Snapshot};
use metaclaw_schedule::pause::Pause;
use metaclaw_schedule::source::{Reading, Reason, Upcoming};
use serde::{Deserialize, Serialize};

use super::service::SourcesInfo;
use super::text;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedulerStatus {
    /// `waiting`, `open`, `running` (a step holds the window) or `paused`.
    pub state: String,
    /// Why the window is open (empty otherwise).
    pub reasons: Vec<Reason>,
    /// When the window opened, or the pause began.
    pub since: Option<Timestamp>,
    /// When the window is expected to close, or the pause to end (`None`: unknown, or
    /// until resumed).
    pub until: Option<Timestamp>,
    /// The owner of the running step.
    pub owner: Option<String>,
    /// A step told to stop that has not reported back yet.
    pub stopping: Option<String>,
    pub readings: Vec<SourceView>,
    /// The next window a step could use (never inside the pause).
    pub next: Option<Upcoming>,
    pub pause: Option<Pause>,
    /// Why the saved pause could not be read (learning is paused until resumed).
    pub pause_problem: Option<String>,
    pub min_window_minutes: u64,
    pub sources: SourcesInfoView,
    /// `scheduler.gate_background_learning`.
    pub gate_background_learning: bool,
    /// False when computed by the CLI from the config, MetaClaw not running (sleep hours
    /// and the pause only).
    pub running: bool,
    pub at: Timestamp,
    /// The same in words, in the engine's time zone.
    pub text: Words,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceView {
    pub reason: Reason,
    #[serde(flatten)]
    pub reading: Reading,
}

/// [`SourcesInfo`] as sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SourcesInfoView {
    pub sleep_hours: Option<String>,
    pub idle_threshold_minutes: u32,
    pub idle_probe: Option<String>,
    /// Why each better idle source was passed over, best first.
    #[serde(default)]
    pub idle_passed_over: Vec<String>,
    pub calendar: bool,
    pub problems: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Words {
    /// "open (sleep) until 07:00", "waiting for a window", "paused until 18:00".
    pub state: String,
    /// "next window: tonight 23:00 (sleep)".
    pub next_window: String,
    /// Where keyboard idle is read: "keyboard idle from GNOME's idle monitor".
    #[serde(default)]
    pub idle: String,
}

pub struct Extra<'a> {
    pub info: &'a SourcesInfo,
    pub pause_problem: Option<String>,
    pub gate: bool,
    pub running: bool,
    pub tz: TimeZone,
}

impl SchedulerStatus {
    pub fn new(snapshot: &Snapshot, extra: Extra<'_>) -> SchedulerStatus {
        let (state, reasons, since, until, owner) = match &snapshot.phase {
            Phase::Waiting => ("waiting", vec![], None, None, None),
            Phase::Open {
                reasons,
                since,
                until,
            } => ("open", reasons.clone(), Some(*since), *until, None),
            Phase::Running {
                reasons,
                since,
                until,
                owner,
                ..
            } => (
                "running",
                reasons.clone(),
                Some(*since),
                *until,
                Some(owner.clone()),
            ),
            Phase::Paused { since, until } => ("paused", vec![], Some(*since), *until, None),
        };
        let mut status = SchedulerStatus {
            state: state.to_string(),
            reasons,
            since,
            until,
            owner,
            stopping: snapshot.stopping.clone(),
            readings: snapshot
                .readings
                .iter()
                .map(|r| SourceView {
                    reason: r.reason,
                    reading: r.reading.clone(),
                })
                .collect(),
            next: snapshot.next.clone(),
            pause: snapshot.pause.clone(),
            pause_problem: extra.pause_problem,
            min_window_minutes: snapshot.min_window_minutes,
            sources: SourcesInfoView {
                sleep_hours: extra.info.sleep_hours.clone(),
                idle_threshold_minutes: extra.info.idle_threshold_minutes,
                idle_probe: extra.info.idle_probe.clone(),
                idle_passed_over: extra.info.idle_passed_over.clone(),
                calendar: extra.info.calendar,
                problems: extra.info.problems.clone(),
            },
            gate_background_learning: extra.gate,
            running: extra.running,
            at: snapshot.at,
            text: Words {
                state: String::new(),
                next_window: String::new(),
                idle: String::new(),
            },
        };
        let now = snapshot.at.to_zoned_datetime(extra.tz);
        status.text = Words {
            state: text::state(&status, &now),
            next_window: text::next_window(&status, &now),
            idle: text::idle_source(&status),
        };
        status
    }
}
