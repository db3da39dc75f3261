//! The window state machine: reads every source on each tick, opens and closes the window,
//! hands out at most one step at a time, and tells that step to stop the moment the window
//! closes or the user pauses. The user's pause overrides every source.
//!
//! Nothing here sleeps or spawns: the caller ticks it (every few seconds) and publishes the
//! events it returns, so all of it runs under a fake clock in tests.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::pause::Pause;
use crate::source::{Reading, Reason, Source, Upcoming};

mod report;

pub use report::{CloseReason, Event, NotNow, Phase, Refusal, Snapshot, SourceReading};

/// How many predicted windows per source `next_window` looks through to get past a pause
/// and short windows: a year of nights, with room to spare.
const LOOKAHEAD: usize = 400;

/// Permission to run one step. Stop promptly and cleanly (keep the partial batch) when
/// `stop` is cancelled, then report back with [`Scheduler::step_done`] either way.
#[derive(Debug, Clone)]
pub struct Step {
    pub id: u64,
    pub stop: CancellationToken,
}

#[derive(Debug, Clone)]
struct Window {
    reasons: Vec<Reason>,
    since: Timestamp,
    until: Option<Timestamp>,
    /// The source whose end `until` is, to name it when refusing a step.
    until_reason: Option<Reason>,
}

#[derive(Debug)]
struct Running {
    id: u64,
    owner: String,
    started: Timestamp,
    stop: CancellationToken,
    /// Told to stop, not reported back yet: no other step may start meanwhile.
    stopping: bool,
}

pub struct Scheduler {
    clock: Arc<dyn Clock>,
    sources: Vec<Box<dyn Source>>,
    min_window: Duration,
    pause: Option<Pause>,
    /// The last tick's readings, one per source.
    readings: Vec<Reading>,
    window: Option<Window>,
    step: Option<Running>,
    next_id: u64,
    /// Events from calls that return none (`try_start_step`), handed out by the next call
    /// that does, so none is lost.
    outbox: VecDeque<Event>,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler")
            .field(
                "sources",
                &self.sources.iter().map(|s| s.reason()).collect::<Vec<_>>(),
            )
            .field("min_window", &self.min_window)
            .field("pause", &self.pause)
            .field("window", &self.window)
            .field("step", &self.step)
            .finish_non_exhaustive()
    }
}

impl Scheduler {
    /// `pause` is the saved one, if any; an already expired one is dropped. The window
    /// stays closed until the first [`tick`](Self::tick).
    pub fn new(
        clock: Arc<dyn Clock>,
        sources: Vec<Box<dyn Source>>,
        min_window: Duration,
        pause: Option<Pause>,
    ) -> Scheduler {
        let now = clock.now();
        Scheduler {
            pause: pause.filter(|p| p.is_active(now)),
            clock,
            sources,
            min_window,
            readings: Vec::new(),
            window: None,
            step: None,
            next_id: 1,
            outbox: VecDeque::new(),
        }
    }

    /// Reads every source now, ends an expired pause, and opens or closes the window. A
    /// close cancels the running step's token.
    pub fn tick(&mut self) -> Vec<Event> {
        let now = self.clock.now();
        if self.pause.as_ref().is_some_and(|p| !p.is_active(now)) {
            self.pause = None;
            self.outbox.push_back(Event::Resumed);
        }
        self.readings = self.sources.iter().map(|s| s.read(now)).collect();
        if self.pause.is_some() {
            // The window was closed when the pause began and stays closed.
            return self.drain();
        }
        match (self.window.take(), self.open_window(now)) {
            (None, Some(open)) => {
                self.outbox.push_back(Event::Opened {
                    reasons: open.reasons.clone(),
                    until: open.until,
                });
                self.window = Some(open);
            }
            (Some(was), Some(open)) => {
                self.window = Some(Window {
                    since: was.since,
                    ..open
                });
            }
            (Some(was), None) => {
                let why = self.close_reason(&was, now);
                self.outbox.push_back(Event::Closed { why });
                self.stop_step(why);
            }
            (None, None) => {}
        }
        self.drain()
    }

    /// Starts a step for `owner` if the window is open, not paused, no step is running (or
    /// still stopping), and the window is expected to last `min_window`. A window with no
    /// known end (idle) qualifies: the idle threshold has already passed. Queues
    /// `StepStarted` for the next call that returns events (or [`drain_events`](Self::drain_events)).
    pub fn try_start_step(&mut self, owner: &str) -> Result<Step, NotNow> {
        let now = self.clock.now();
        let refuse = |why| {
            Err(NotNow::new(
                why,
                now.to_zoned_datetime(self.clock.time_zone()),
            ))
        };
        if let Some(pause) = self.pause_at(now) {
            return refuse(Refusal::Paused { until: pause.until });
        }
        if let Some(step) = &self.step {
            return refuse(Refusal::Busy {
                owner: step.owner.clone(),
                stopping: step.stopping,
            });
        }
        let Some(window) = &self.window else {
            return refuse(Refusal::NoWindow {
                next: self.next_window(),
            });
        };
        if let (Some(until), Some(reason)) = (window.until, window.until_reason) {
            let left = now.duration_until(until);
            if left < SignedDuration::try_from(self.min_window).unwrap_or(SignedDuration::MAX) {
                return refuse(Refusal::TooShort {
                    reason,
                    ends: until,
                    left,
                    needs: self.min_window,
                });
            }
        }
        let id = self.next_id;
        self.next_id += 1;
        let stop = CancellationToken::new();
        self.step = Some(Running {
            id,
            owner: owner.to_string(),
            started: now,
            stop: stop.clone(),
            stopping: false,
        });
        self.outbox.push_back(Event::StepStarted {
            owner: owner.to_string(),
        });
        Ok(Step { id, stop })
    }

    /// The owner of step `id` finished it or stopped as told. `StepFinished` only for a
    /// step that was not told to stop (that one already produced `StepStopped`). An
    /// unknown or old id changes nothing.
    pub fn step_done(&mut self, id: u64) -> Vec<Event> {
        if let Some(step) = self.step.take_if(|s| s.id == id)
            && !step.stopping
        {
            self.outbox
                .push_back(Event::StepFinished { owner: step.owner });
        }
        self.drain()
    }

    /// Pauses until `until` (`None`: until resumed): closes the window and stops the
    /// running step now. Pausing again replaces the end and keeps the start. An end that
    /// has already passed pauses nothing.
    pub fn pause(&mut self, until: Option<Timestamp>) -> Vec<Event> {
        let now = self.clock.now();
        if until.is_some_and(|u| u <= now) {
            return self.drain();
        }
        let since = self.pause_at(now).map_or(now, |p| p.since);
        self.pause = Some(Pause { since, until });
        if self.window.take().is_some() {
            self.outbox.push_back(Event::Closed {
                why: CloseReason::Paused,
            });
        }
        self.stop_step(CloseReason::Paused);
        self.outbox.push_back(Event::Paused { until });
        self.drain()
    }

    /// Ends the pause; the sources are read again at the next tick.
    pub fn resume(&mut self) -> Vec<Event> {
        if self.pause.take().is_some() {
            self.outbox.push_back(Event::Resumed);
        }
        self.drain()
    }

    /// The pause in force now (an expired one is none), to save or show.
    pub fn pause_state(&self) -> Option<Pause> {
        self.pause_at(self.clock.now()).cloned()
    }

    pub fn is_open(&self) -> bool {
        self.window.is_some()
    }

    pub fn min_window(&self) -> Duration {
        self.min_window
    }

    /// Events queued since the last call that returned some (`StepStarted`).
    pub fn drain_events(&mut self) -> Vec<Event> {
        self.drain()
    }

    /// The earliest window the sources predict that would let a step run (`min_window`
    /// long), never starting before the pause ends (none during an open-ended pause). A
    /// window already open that outlasts the pause counts from the pause's end.
    pub fn next_window(&self) -> Option<Upcoming> {
        let now = self.clock.now();
        let from = match self.pause_at(now) {
            Some(Pause { until: None, .. }) => return None,
            Some(Pause {
                until: Some(until), ..
            }) => *until,
            None => now,
        };
        self.sources
            .iter()
            .filter_map(|source| {
                let ongoing = match source.read(now) {
                    Reading::Open { until: Some(end) } if from > now => Some(Upcoming {
                        reason: source.reason(),
                        starts: from,
                        ends: Some(end),
                    }),
                    _ => None,
                };
                ongoing
                    .filter(|u| self.long_enough(u))
                    .or_else(|| self.predict(source.as_ref(), now, from))
            })
            .min_by_key(|u| u.starts)
    }

    pub fn snapshot(&self) -> Snapshot {
        let now = self.clock.now();
        let pause = self.pause_at(now).cloned();
        let running = self.step.as_ref().filter(|s| !s.stopping);
        let phase = match (&pause, &self.window, running) {
            (Some(p), _, _) => Phase::Paused {
                since: p.since,
                until: p.until,
            },
            (None, Some(w), Some(step)) => Phase::Running {
                reasons: w.reasons.clone(),
                since: w.since,
                until: w.until,
                owner: step.owner.clone(),
                step_started: step.started,
            },
            (None, Some(w), None) => Phase::Open {
                reasons: w.reasons.clone(),
                since: w.since,
                until: w.until,
            },
            (None, None, _) => Phase::Waiting,
        };
        Snapshot {
            phase,
            readings: self
                .sources
                .iter()
                .zip(&self.readings)
                .map(|(s, r)| SourceReading {
                    reason: s.reason(),
                    reading: r.clone(),
                })
                .collect(),
            next: self.next_window(),
            pause,
            min_window_minutes: self.min_window.as_secs() / 60,
            stopping: self
                .step
                .as_ref()
                .filter(|s| s.stopping)
                .map(|s| s.owner.clone()),
            at: now,
        }
    }

    fn drain(&mut self) -> Vec<Event> {
        self.outbox.drain(..).collect()
    }

    fn pause_at(&self, now: Timestamp) -> Option<&Pause> {
        self.pause.as_ref().filter(|p| p.is_active(now))
    }

    /// The window the current readings make: open if any source is; its end is the latest
    /// known end among the open sources (an idle source alone gives none).
    fn open_window(&self, now: Timestamp) -> Option<Window> {
        let mut window: Option<Window> = None;
        for (source, reading) in self.sources.iter().zip(&self.readings) {
            let Reading::Open { until } = reading else {
                continue;
            };
            let w = window.get_or_insert_with(|| Window {
                reasons: Vec::new(),
                since: now,
                until: None,
                until_reason: None,
            });
            if !w.reasons.contains(&source.reason()) {
                w.reasons.push(source.reason());
            }
            if let Some(end) = *until
                && w.until.is_none_or(|u| end > u)
            {
                w.until = Some(end);
                w.until_reason = Some(source.reason());
            }
        }
        window
    }

    fn close_reason(&self, was: &Window, now: Timestamp) -> CloseReason {
        let idle_closed = self
            .sources
            .iter()
            .zip(&self.readings)
            .any(|(s, r)| s.reason() == Reason::Idle && *r == Reading::Closed);
        if was.reasons.contains(&Reason::Idle) && idle_closed {
            CloseReason::UserReturned
        } else if was.until.is_some_and(|u| now >= u) {
            CloseReason::Ended
        } else {
            CloseReason::SourceClosed
        }
    }

    fn stop_step(&mut self, why: CloseReason) {
        if let Some(step) = self.step.as_mut().filter(|s| !s.stopping) {
            step.stop.cancel();
            step.stopping = true;
            self.outbox.push_back(Event::StepStopped {
                owner: step.owner.clone(),
                why,
            });
        }
    }

    fn long_enough(&self, u: &Upcoming) -> bool {
        let needed = SignedDuration::try_from(self.min_window).unwrap_or(SignedDuration::MAX);
        u.ends
            .is_none_or(|end| u.starts.duration_until(end) >= needed)
    }

    /// The first window `source` predicts after `now` that still lasts `min_window` from
    /// `from` on.
    fn predict(&self, source: &dyn Source, now: Timestamp, from: Timestamp) -> Option<Upcoming> {
        let mut cursor = now;
        for _ in 0..LOOKAHEAD {
            let mut next = source.next(cursor)?;
            if next.starts <= cursor {
                // A source that does not move forward would loop here.
                return None;
            }
            cursor = next.starts;
            if next.starts < from {
                match next.ends {
                    Some(end) if end > from => next.starts = from,
                    _ => continue,
                }
            }
            if self.long_enough(&next) {
                return Some(next);
            }
        }
        None
    }
}

impl Drop for Scheduler {
    /// Nobody gates the work once the scheduler is gone: stop it.
    fn drop(&mut self) {
        if let Some(step) = &self.step {
            step.stop.cancel();
        }
    }
}
