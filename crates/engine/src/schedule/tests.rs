//! The service under a fake clock and a source the test sets: the return of the user
//! stopping a long step, pause and resume persisting, a corrupt pause file, the gate.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use metaclaw_schedule::clock::FakeClock;
use metaclaw_schedule::machine::Event;
use metaclaw_schedule::pause::PauseFile;
use metaclaw_schedule::source::{Reading, Reason, Source, Upcoming};
use tokio_util::sync::CancellationToken;

use super::gate::{Done, Held, run_in_windows};
use super::{Gate, SourcesInfo, Windows};
use crate::supervise::Supervisor;

/// A source whose reading the test sets (the user away or back).
#[derive(Clone)]
struct Settable {
    reason: Reason,
    reading: Arc<Mutex<Reading>>,
}

impl Settable {
    fn new(reason: Reason, reading: Reading) -> Settable {
        Settable {
            reason,
            reading: Arc::new(Mutex::new(reading)),
        }
    }

    fn set(&self, reading: Reading) {
        *self.reading.lock().unwrap() = reading;
    }
}

impl Source for Settable {
    fn reason(&self) -> Reason {
        self.reason
    }

    fn read(&self, _now: Timestamp) -> Reading {
        self.reading.lock().unwrap().clone()
    }

    fn next(&self, _now: Timestamp) -> Option<Upcoming> {
        None
    }
}

const AWAY: Reading = Reading::Open { until: None };

struct Fixture {
    _dir: tempfile::TempDir,
    clock: FakeClock,
    idle: Settable,
    pause_file: PauseFile,
}

impl Fixture {
    fn new(reading: Reading) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let pause_file = PauseFile::new(dir.path().join("scheduler/pause.json"));
        Fixture {
            _dir: dir,
            clock: FakeClock::new("2026-12-03T10:00:00Z".parse().unwrap(), TimeZone::UTC),
            idle: Settable::new(Reason::Idle, reading),
            pause_file,
        }
    }

    fn windows(&self) -> Windows {
        Windows::new(
            Arc::new(self.clock.clone()),
            vec![Box::new(self.idle.clone())],
            Duration::from_secs(15 * 60),
            self.pause_file.clone(),
            SourcesInfo::default(),
        )
    }
}

#[tokio::test]
async fn a_long_step_stops_within_seconds_of_the_user_returning() {
    let f = Fixture::new(AWAY);
    let windows = f.windows();
    let step = windows.try_start_step("test.trainer").unwrap();
    let told_to_stop = step.token();
    assert_eq!(windows.snapshot().phase_name(), "running");
    // Only a tick publishes a snapshot from here on: one stamped with this time is the
    // ticker's.
    let first_tick: Timestamp = "2026-12-03T10:00:01Z".parse().unwrap();
    f.clock.set(first_tick);
    let stop_ticking = CancellationToken::new();
    let tasks = Supervisor::new(stop_ticking.clone());
    windows.spawn_ticker(&tasks, Duration::from_secs(10));
    // The fake step: works until told to stop, then reports (drops the guard).
    let work = tasks.spawn_answering("step", async move {
        step.stopped().await;
        drop(step);
    });
    // Wait for the ticker's immediate first tick to finish, with the user away, so the
    // close below is seen by a later one.
    let mut polls = 0;
    while windows.snapshot().at != first_tick {
        polls += 1;
        assert!(polls < 500, "the ticker did not tick within 5 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        !told_to_stop.is_cancelled(),
        "the step was told to stop while the user was away"
    );
    assert_eq!(windows.snapshot().phase_name(), "running");

    f.idle.set(Reading::Closed);
    let stopped = tokio::time::timeout(Duration::from_secs(5), work).await;
    assert!(
        stopped.is_ok(),
        "the step was not told to stop within 5 s of the user returning"
    );
    assert_eq!(windows.snapshot().phase_name(), "waiting");
    stop_ticking.cancel();
    assert!(tasks.join(Duration::from_secs(5)).await.is_empty());
}

#[tokio::test]
async fn no_step_while_closed_and_one_at_a_time() {
    let f = Fixture::new(Reading::Closed);
    let windows = f.windows();
    let refused = windows.try_start_step("a").unwrap_err();
    assert!(refused.to_string().contains("no window"), "{refused}");

    f.idle.set(AWAY);
    windows.tick();
    let first = windows.try_start_step("a").unwrap();
    let busy = windows.try_start_step("b").unwrap_err();
    assert!(busy.to_string().contains("already running (a)"), "{busy}");
    drop(first);
    assert!(
        windows.try_start_step("b").is_ok(),
        "dropping the guard ends the step"
    );
}

#[tokio::test]
async fn pause_persists_stops_the_step_and_resume_clears() {
    let f = Fixture::new(AWAY);
    let windows = f.windows();
    let mut events = windows.events();
    let step = windows.try_start_step("test.trainer").unwrap();
    let until: Timestamp = "2026-12-03T18:00:00Z".parse().unwrap();

    windows.pause(Some(until)).await.unwrap();
    assert!(step.is_stopped(), "pausing stops the running step");
    let saved = f.pause_file.load().unwrap().unwrap();
    assert_eq!(saved.until, Some(until));
    // The file holds the pause in force, start included.
    assert_eq!(Some(saved), windows.snapshot().pause);
    let mut seen = Vec::new();
    while let Ok(e) = events.try_recv() {
        seen.push(e);
    }
    assert!(
        seen.contains(&Event::Paused { until: Some(until) }),
        "{seen:?}"
    );
    drop(step);

    // A restart reads the same pause back.
    let again = f.windows();
    assert_eq!(again.snapshot().phase_name(), "paused");
    assert_eq!(again.snapshot().pause.unwrap().until, Some(until));
    assert!(again.try_start_step("x").is_err());

    windows.resume().await.unwrap();
    assert_eq!(f.pause_file.load().unwrap(), None);
    assert_eq!(windows.snapshot().phase_name(), "open");
}

#[tokio::test]
async fn a_corrupt_pause_file_keeps_learning_paused_until_resumed() {
    let f = Fixture::new(AWAY);
    std::fs::create_dir_all(f.pause_file.path().parent().unwrap()).unwrap();
    std::fs::write(f.pause_file.path(), "{not json").unwrap();
    let windows = f.windows();
    assert_eq!(windows.snapshot().phase_name(), "paused");
    let problem = windows.pause_problem().unwrap();
    assert!(problem.contains("pause.json"), "{problem}");
    // Left for the user to look at.
    assert_eq!(
        std::fs::read_to_string(f.pause_file.path()).unwrap(),
        "{not json"
    );
    windows.resume().await.unwrap();
    assert_eq!(windows.pause_problem(), None);
    assert_eq!(windows.snapshot().phase_name(), "open");
}

#[tokio::test]
async fn gated_work_waits_for_a_window_and_stops_when_it_closes() {
    let f = Fixture::new(Reading::Closed);
    let windows = f.windows();
    let held: Arc<Held<String>> = Arc::new(Held::default());
    let ran = Arc::new(Mutex::new(Vec::<String>::new()));
    let calls = Arc::new(AtomicUsize::new(0));
    let (ran2, calls2) = (ran.clone(), calls.clone());
    run_in_windows(
        &Supervisor::detached(),
        Gate::new(windows.clone()),
        "test.consolidation",
        held.clone(),
        move |scope: String, stop| {
            let (ran, calls) = (ran2.clone(), calls2.clone());
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                // "slow" stops at its first safe point: at the window's close.
                if scope == "slow" {
                    stop.stopped().await;
                    return Done::Again;
                }
                ran.lock().unwrap().push(scope);
                Done::Yes
            }
        },
    );
    held.add("a".into());
    held.add("b".into());
    // Closed: nothing runs. The gate wakes on snapshot changes; give it a few.
    for _ in 0..5 {
        windows.tick();
        tokio::task::yield_now().await;
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0, "work ran while closed");

    f.idle.set(AWAY);
    windows.tick();
    let done = tokio::time::timeout(Duration::from_secs(5), async {
        while ran.lock().unwrap().len() < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(done.is_ok(), "held work did not run once the window opened");
    assert_eq!(*ran.lock().unwrap(), ["a", "b"]);

    // Work in progress when the window closes comes back for the next window.
    held.add("slow".into());
    let started = tokio::time::timeout(Duration::from_secs(5), async {
        while calls.load(Ordering::SeqCst) < 3 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(started.is_ok());
    f.idle.set(Reading::Closed);
    windows.tick();
    let held_again = tokio::time::timeout(Duration::from_secs(5), async {
        while held.is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(
        held_again.is_ok(),
        "stopped work was not kept for the next window"
    );
    assert_eq!(windows.snapshot().phase_name(), "waiting");
}

#[tokio::test]
async fn ungated_work_runs_at_once() {
    let held: Arc<Held<u32>> = Arc::new(Held::default());
    let ran = Arc::new(AtomicUsize::new(0));
    let ran2 = ran.clone();
    run_in_windows(
        &Supervisor::detached(),
        Gate::ungated(),
        "test",
        held.clone(),
        move |_, _| {
            let ran = ran2.clone();
            async move {
                ran.fetch_add(1, Ordering::SeqCst);
                Done::Yes
            }
        },
    );
    held.add(1);
    let done = tokio::time::timeout(Duration::from_secs(5), async {
        while ran.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(done.is_ok());
}

trait PhaseName {
    fn phase_name(&self) -> &'static str;
}

impl PhaseName for metaclaw_schedule::machine::Snapshot {
    fn phase_name(&self) -> &'static str {
        use metaclaw_schedule::machine::Phase;
        match self.phase {
            Phase::Waiting => "waiting",
            Phase::Open { .. } => "open",
            Phase::Running { .. } => "running",
            Phase::Paused { .. } => "paused",
        }
    }
}
