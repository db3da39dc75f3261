//! The scheduler as a service: one state machine behind a lock that is never held across an
//! `await`, ticked every couple of seconds, publishing its latest snapshot (`watch`) and
//! every event (`broadcast`) for the admin API, the tray and the gate.
//!
//! Nothing here waits on chat, and chat never waits on this: the proxy only touches an
//! atomic (`LastActivity`), and a tick reads cached sources.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use jiff::Timestamp;
use metaclaw_schedule::clock::Clock;
use metaclaw_schedule::machine::{Event, NotNow, Phase, Scheduler, Snapshot};
use metaclaw_schedule::pause::PauseFile;
use metaclaw_schedule::source::{Source, Upcoming};
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use super::step::StepGuard;
use crate::supervise::Supervisor;

/// How often sources are read while a window is open: the user returning closes it within
/// this.
pub const TICK: Duration = Duration::from_secs(2);
/// The longest pause between readings while no window is open: a window opens at most this
/// late, which a window of 15 minutes or more does not notice, and a tray app at rest wakes
/// five times less often than it would every [`TICK`].
pub const WAITING_TICK: Duration = Duration::from_secs(10);
/// Events kept for a slow subscriber before it is told it lagged (it then gets a snapshot).
const EVENT_BACKLOG: usize = 256;

/// What the sources are, for status (the machine only knows their readings).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct SourcesInfo {
    /// `"23:00–07:00"`, or `None` when the sleep hours could not be used.
    pub sleep_hours: Option<String>,
    pub idle_threshold_minutes: u32,
    /// The idle source in use: `"gnome-idle-monitor"`, `"freedesktop-screensaver"`,
    /// `"ext-idle-notify"`, `"x11"`, `"logind"` or `"last-request"`.
    pub idle_probe: Option<String>,
    /// Why each better idle source was passed over (`"<name>: <why>"`, best first).
    pub idle_passed_over: Vec<String>,
    /// Whether calendar meetings are read (on and connected).
    pub calendar: bool,
    /// Sources that could not be set up, and why (a bad sleep-hours config…).
    pub problems: Vec<String>,
}

/// The training-window service. Cheap to clone; every clone is the same scheduler.
#[derive(Clone)]
pub struct Windows {
    inner: Arc<Inner>,
}

pub(super) struct Inner {
    machine: Mutex<Scheduler>,
    pub(super) clock: Arc<dyn Clock>,
    pause_file: PauseFile,
    /// Pause and resume persist, then apply; one at a time so the file and the machine
    /// agree on which came last.
    persisting: tokio::sync::Mutex<()>,
    snapshot: watch::Sender<Snapshot>,
    events: broadcast::Sender<Event>,
    info: SourcesInfo,
    /// Why the saved pause could not be read, while that still matters.
    pause_problem: Mutex<Option<String>>,
}

#[derive(Debug, thiserror::Error)]
pub enum PauseError {
    #[error("{0}")]
    Save(String),
    #[error("internal task failed: {0}")]
    Task(String),
}

impl Windows {
    /// The service over `sources`, with the pause saved in `pause_file`. A pause file that
    /// cannot be read pauses learning until the user resumes (see [`super::load_pause`]).
    /// Call [`Windows::spawn_ticker`] to keep it current; until then it is as of the
    /// first tick, done here.
    pub fn new(
        clock: Arc<dyn Clock>,
        sources: Vec<Box<dyn Source>>,
        min_window: Duration,
        pause_file: PauseFile,
        info: SourcesInfo,
    ) -> Windows {
        let (pause, problem) = super::load_pause(&pause_file, clock.as_ref());
        let mut machine = Scheduler::new(clock.clone(), sources, min_window, pause);
        machine.tick();
        let snapshot = machine.snapshot();
        let (events, _) = broadcast::channel(EVENT_BACKLOG);
        Windows {
            inner: Arc::new(Inner {
                machine: Mutex::new(machine),
                clock,
                pause_file,
                persisting: tokio::sync::Mutex::new(()),
                snapshot: watch::Sender::new(snapshot),
                events,
                info,
                pause_problem: Mutex::new(problem),
            }),
        }
    }

    /// Ticks every [`TICK`] until the engine stops (restarted if it panics). Step owners watch shutdown themselves (their
    /// work ends with the process); the last snapshot stays as it was.
    /// `waiting` is the pause between readings while no window is open (at most
    /// [`WAITING_TICK`], at least [`TICK`]).
    pub fn spawn_ticker(&self, tasks: &Supervisor, waiting: Duration) {
        let windows = self.clone();
        let shutdown = tasks.shutdown_token();
        let waiting = waiting.clamp(TICK, WAITING_TICK);
        tasks.spawn_restarting("training-window ticker", move || {
            let (windows, shutdown) = (windows.clone(), shutdown.clone());
            ticker(windows, shutdown, waiting)
        });
    }

    /// A window is open or a step is stopping: the user's return must be seen within a
    /// [`TICK`].
    fn watching_closely(&self) -> bool {
        let snapshot = self.inner.snapshot.borrow();
        snapshot.stopping.is_some()
            || matches!(snapshot.phase, Phase::Open { .. } | Phase::Running { .. })
    }

    /// Reads the sources now and publishes what changed.
    pub fn tick(&self) {
        let (events, snapshot) = {
            let mut m = self.inner.lock();
            (m.tick(), m.snapshot())
        };
        self.inner.publish(events, snapshot);
    }

    /// Pauses learning until `until` (`None`: until resumed), overriding every source and
    /// stopping a running step. Confirmed only once saved, so a pause the API confirmed
    /// survives a crash; the file holds exactly the pause in force (same start). If saving
    /// fails the pause is undone and the error returned.
    pub async fn pause(&self, until: Option<Timestamp>) -> Result<Snapshot, PauseError> {
        let _one = self.inner.persisting.lock().await;
        let (mut events, pause, before) = {
            let mut m = self.inner.lock();
            let before = m.pause_state();
            let events = m.pause(until);
            (events, m.pause_state(), before)
        };
        let saved = match pause {
            Some(pause) => {
                let file = self.inner.pause_file.clone();
                tokio::task::spawn_blocking(move || file.save(&pause))
                    .await
                    .map_err(|e| PauseError::Task(e.to_string()))
                    .and_then(|r| r.map_err(|e| PauseError::Save(e.to_string())))
            }
            // An end already past pauses nothing.
            None => Ok(()),
        };
        if let Err(e) = saved {
            let snapshot = {
                let mut m = self.inner.lock();
                events.extend(match before {
                    Some(p) => m.pause(p.until),
                    None => m.resume(),
                });
                events.extend(m.tick());
                m.snapshot()
            };
            self.inner.publish(events, snapshot);
            return Err(e);
        }
        self.inner.set_pause_problem(None);
        let snapshot = self.inner.lock().snapshot();
        self.inner.publish(events, snapshot.clone());
        tracing::info!(until = ?until, "learning paused");
        Ok(snapshot)
    }

    /// Ends the pause (the file is removed first); the sources decide again at once.
    pub async fn resume(&self) -> Result<Snapshot, PauseError> {
        let _one = self.inner.persisting.lock().await;
        let file = self.inner.pause_file.clone();
        tokio::task::spawn_blocking(move || file.clear())
            .await
            .map_err(|e| PauseError::Task(e.to_string()))?
            .map_err(|e| PauseError::Save(e.to_string()))?;
        self.inner.set_pause_problem(None);
        let (events, snapshot) = {
            let mut m = self.inner.lock();
            let mut events = m.resume();
            events.extend(m.tick());
            (events, m.snapshot())
        };
        self.inner.publish(events, snapshot.clone());
        tracing::info!("learning resumed");
        Ok(snapshot)
    }

    /// Permission to run one step of slow learning now, or why not. Hold the guard while
    /// working; stop when [`StepGuard::stopped`] fires. Dropping the guard reports the step
    /// done. Never waits.
    pub fn try_start_step(&self, owner: &str) -> Result<StepGuard, NotNow> {
        let (step, events, snapshot) = {
            let mut m = self.inner.lock();
            let step = m.try_start_step(owner)?;
            (step, m.drain_events(), m.snapshot())
        };
        self.inner.publish(events, snapshot);
        Ok(StepGuard::new(step, Arc::downgrade(&self.inner)))
    }

    /// The latest snapshot (as of the last tick or change).
    pub fn snapshot(&self) -> Snapshot {
        self.inner.snapshot.borrow().clone()
    }

    /// Follows the snapshot: wakes on every change that matters (not on every tick).
    pub fn watch(&self) -> watch::Receiver<Snapshot> {
        self.inner.snapshot.subscribe()
    }

    /// Every event from now on.
    pub fn events(&self) -> broadcast::Receiver<Event> {
        self.inner.events.subscribe()
    }

    pub fn next_window(&self) -> Option<Upcoming> {
        self.inner.lock().next_window()
    }

    pub fn info(&self) -> &SourcesInfo {
        &self.inner.info
    }

    /// Why the saved pause could not be read (learning is paused until resumed meanwhile).
    pub fn pause_problem(&self) -> Option<String> {
        self.inner
            .pause_problem
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn now(&self) -> Timestamp {
        self.inner.clock.now()
    }

    pub fn time_zone(&self) -> jiff::tz::TimeZone {
        self.inner.clock.time_zone()
    }
}

impl Inner {
    pub(super) fn lock(&self) -> MutexGuard<'_, Scheduler> {
        // The machine has no invariant a panic elsewhere could break halfway.
        self.machine.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn publish(&self, events: Vec<Event>, snapshot: Snapshot) {
        for e in events {
            tracing::info!(event = ?e, "training window");
            // No subscriber is fine.
            let _ = self.events.send(e);
        }
        // Every tick makes a new `at`; subscribers wake only when something else changed.
        self.snapshot.send_if_modified(|current| {
            let changed = !same_but_time(current, &snapshot);
            *current = snapshot;
            changed
        });
    }

    fn set_pause_problem(&self, problem: Option<String>) {
        *self
            .pause_problem
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = problem;
    }
}

fn same_but_time(a: &Snapshot, b: &Snapshot) -> bool {
    a.phase == b.phase
        && a.readings == b.readings
        && a.next == b.next
        && a.pause == b.pause
        && a.stopping == b.stopping
}

/// The ticker's loop until `shutdown`: every [`TICK`] while a window is open, every
/// `waiting` otherwise.
async fn ticker(windows: Windows, shutdown: CancellationToken, waiting: Duration) {
    loop {
        // Reading a desktop's idle time is a round trip that could stall: never on a
        // runtime worker.
        let w = windows.clone();
        if let Err(e) = tokio::task::spawn_blocking(move || w.tick()).await {
            tracing::warn!(error = %e, "training-window tick failed");
        }
        let pause = if windows.watching_closely() {
            TICK
        } else {
            waiting
        };
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            () = shutdown.cancelled() => break,
        }
    }
}
