//! The window state machine under a fake clock and fake sources.
#![allow(clippy::unwrap_used, clippy::panic)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use metaclaw_schedule::clock::FakeClock;
use metaclaw_schedule::machine::{CloseReason, Event, Phase, Refusal, Scheduler, SourceReading};
use metaclaw_schedule::pause::Pause;
use metaclaw_schedule::sleep::SleepHours;
use metaclaw_schedule::source::{Reading, Reason, Upcoming};
use serde_json::json;
use support::{FakeSource, ts, tz};

const MIN: Duration = Duration::from_secs(15 * 60);

fn clock_at(at: &str) -> FakeClock {
    FakeClock::new(ts(at), tz("UTC"))
}

fn sleep_source(clock: &FakeClock) -> Box<SleepHours> {
    Box::new(SleepHours::new((23, 0), (7, 0), Arc::new(clock.clone())).unwrap())
}

fn scheduler(
    clock: &FakeClock,
    sources: Vec<Box<dyn metaclaw_schedule::source::Source>>,
) -> Scheduler {
    Scheduler::new(Arc::new(clock.clone()), sources, MIN, None)
}

#[test]
fn min_window_refuses_a_step_10_minutes_before_the_end() {
    let clock = clock_at("2026-12-03T06:45:00Z");
    let mut s = scheduler(&clock, vec![sleep_source(&clock)]);
    assert_eq!(
        s.tick(),
        vec![Event::Opened {
            reasons: vec![Reason::Sleep],
            until: Some(ts("2026-12-03T07:00:00Z")),
        }]
    );
    clock.set(ts("2026-12-03T06:50:00Z"));
    assert_eq!(s.tick(), vec![]);
    let refused = s.try_start_step("rl").unwrap_err();
    assert_eq!(
        refused.to_string(),
        "the sleep window ends at 07:00, in 10 min, less than the 15 min a step needs"
    );
    assert!(matches!(
        refused.why,
        Refusal::TooShort {
            reason: Reason::Sleep,
            ..
        }
    ));
}

#[test]
fn min_window_allows_a_step_20_minutes_before_the_end() {
    let clock = clock_at("2026-12-03T06:40:00Z");
    let mut s = scheduler(&clock, vec![sleep_source(&clock)]);
    s.tick();
    let step = s.try_start_step("rl").unwrap();
    assert!(!step.stop.is_cancelled());
    assert_eq!(
        s.drain_events(),
        vec![Event::StepStarted { owner: "rl".into() }]
    );
    // The window ends: the step is told to stop.
    clock.set(ts("2026-12-03T07:00:00Z"));
    assert_eq!(
        s.tick(),
        vec![
            Event::Closed {
                why: CloseReason::Ended
            },
            Event::StepStopped {
                owner: "rl".into(),
                why: CloseReason::Ended
            },
        ]
    );
    assert!(step.stop.is_cancelled());
}

#[test]
fn an_idle_window_with_no_known_end_allows_a_step() {
    let clock = clock_at("2026-12-03T14:00:00Z");
    let idle = FakeSource::new(Reason::Idle);
    let mut s = scheduler(&clock, vec![idle.boxed()]);
    assert!(
        s.try_start_step("rl").is_err(),
        "closed before any source opens"
    );
    idle.open(None);
    assert_eq!(
        s.tick(),
        vec![Event::Opened {
            reasons: vec![Reason::Idle],
            until: None
        }]
    );
    let step = s.try_start_step("rl").unwrap();
    assert_eq!(step.id, 1);
    let busy = s.try_start_step("other").unwrap_err();
    assert_eq!(busy.to_string(), "a step is already running (rl)");
    assert_eq!(
        s.step_done(step.id),
        vec![
            Event::StepStarted { owner: "rl".into() },
            Event::StepFinished { owner: "rl".into() },
        ]
    );
    assert!(!step.stop.is_cancelled());
    assert_eq!(s.try_start_step("rl").unwrap().id, 2);
}

#[test]
fn the_user_returning_cancels_the_step_at_the_next_tick() {
    let clock = clock_at("2026-12-03T14:00:00Z");
    let idle = FakeSource::new(Reason::Idle);
    idle.open(None);
    let mut s = scheduler(&clock, vec![idle.boxed()]);
    s.tick();
    let step = s.try_start_step("rl").unwrap();
    s.drain_events();

    idle.close();
    assert!(!step.stop.is_cancelled(), "nothing happens before a tick");
    assert_eq!(
        s.tick(),
        vec![
            Event::Closed {
                why: CloseReason::UserReturned
            },
            Event::StepStopped {
                owner: "rl".into(),
                why: CloseReason::UserReturned
            },
        ]
    );
    assert!(step.stop.is_cancelled());

    // Until the owner reports back, no other step starts, even in a new window.
    idle.open(None);
    s.tick();
    let err = s.try_start_step("rl").unwrap_err();
    assert_eq!(err.to_string(), "a step is still stopping (rl)");
    assert_eq!(s.snapshot().stopping.as_deref(), Some("rl"));
    // A stopped step reports no StepFinished.
    assert_eq!(s.step_done(step.id), vec![]);
    assert!(s.try_start_step("rl").is_ok());
}

#[test]
fn a_source_still_open_keeps_the_window_and_the_step() {
    let clock = clock_at("2026-12-03T06:30:00Z");
    let idle = FakeSource::new(Reason::Idle);
    idle.open(None);
    let mut s = scheduler(&clock, vec![sleep_source(&clock), idle.boxed()]);
    assert_eq!(
        s.tick(),
        vec![Event::Opened {
            reasons: vec![Reason::Sleep, Reason::Idle],
            until: Some(ts("2026-12-03T07:00:00Z")),
        }]
    );
    let step = s.try_start_step("rl").unwrap();
    clock.set(ts("2026-12-03T07:00:00Z"));
    assert_eq!(s.tick(), vec![Event::StepStarted { owner: "rl".into() }]);
    assert!(!step.stop.is_cancelled());
    match s.snapshot().phase {
        Phase::Running {
            reasons,
            until,
            since,
            ..
        } => {
            assert_eq!(reasons, vec![Reason::Idle]);
            assert_eq!(until, None);
            assert_eq!(since, ts("2026-12-03T06:30:00Z"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_window_lasts_until_the_latest_known_end() {
    let clock = clock_at("2026-12-03T06:00:00Z");
    let meeting = FakeSource::new(Reason::Calendar);
    meeting.open(Some(ts("2026-12-03T08:00:00Z")));
    let mut s = scheduler(&clock, vec![sleep_source(&clock), meeting.boxed()]);
    assert_eq!(
        s.tick(),
        vec![Event::Opened {
            reasons: vec![Reason::Sleep, Reason::Calendar],
            until: Some(ts("2026-12-03T08:00:00Z")),
        }]
    );
    // 06:50: sleep ends in 10 min but the meeting runs to 08:00.
    clock.set(ts("2026-12-03T06:50:00Z"));
    s.tick();
    assert!(s.try_start_step("rl").is_ok());
}

#[test]
fn a_meeting_cancelled_early_closes_as_source_closed() {
    let clock = clock_at("2026-12-03T10:00:00Z");
    let meeting = FakeSource::new(Reason::Calendar);
    meeting.open(Some(ts("2026-12-03T11:00:00Z")));
    let mut s = scheduler(&clock, vec![meeting.boxed()]);
    s.tick();
    meeting.set(Reading::Unavailable {
        detail: "offline".into(),
    });
    assert_eq!(
        s.tick(),
        vec![Event::Closed {
            why: CloseReason::SourceClosed
        }]
    );
}

#[test]
fn pause_cancels_the_step_and_overrides_every_source() {
    let clock = clock_at("2026-12-03T17:00:00Z");
    let idle = FakeSource::new(Reason::Idle);
    idle.open(None);
    let mut s = scheduler(&clock, vec![idle.boxed()]);
    s.tick();
    let step = s.try_start_step("rl").unwrap();
    s.drain_events();
    let until = ts("2026-12-03T18:00:00Z");
    assert_eq!(
        s.pause(Some(until)),
        vec![
            Event::Closed {
                why: CloseReason::Paused
            },
            Event::StepStopped {
                owner: "rl".into(),
                why: CloseReason::Paused
            },
            Event::Paused { until: Some(until) },
        ]
    );
    assert!(step.stop.is_cancelled());
    s.step_done(step.id);
    assert_eq!(
        s.pause_state(),
        Some(Pause {
            since: ts("2026-12-03T17:00:00Z"),
            until: Some(until)
        })
    );
    // Every source open, still no window.
    assert_eq!(s.tick(), vec![]);
    assert!(!s.is_open());
    assert_eq!(
        s.try_start_step("rl").unwrap_err().to_string(),
        "paused until 18:00"
    );

    // The pause ends by itself.
    clock.set(ts("2026-12-03T17:59:59Z"));
    assert_eq!(s.tick(), vec![]);
    clock.set(until);
    assert_eq!(s.pause_state(), None);
    assert_eq!(
        s.tick(),
        vec![
            Event::Resumed,
            Event::Opened {
                reasons: vec![Reason::Idle],
                until: None
            }
        ]
    );
    assert!(s.try_start_step("rl").is_ok());
}

#[test]
fn pausing_again_keeps_the_start_and_resume_reopens_at_the_next_tick() {
    let clock = clock_at("2026-12-03T17:00:00Z");
    let idle = FakeSource::new(Reason::Idle);
    idle.open(None);
    let mut s = scheduler(&clock, vec![idle.boxed()]);
    s.tick();
    s.pause(Some(ts("2026-12-03T18:00:00Z")));
    clock.set(ts("2026-12-03T17:30:00Z"));
    assert_eq!(s.pause(None), vec![Event::Paused { until: None }]);
    assert_eq!(
        s.pause_state(),
        Some(Pause {
            since: ts("2026-12-03T17:00:00Z"),
            until: None
        })
    );
    assert_eq!(
        s.try_start_step("rl").unwrap_err().to_string(),
        "paused until resumed"
    );
    clock.set(ts("2026-12-04T17:30:00Z"));
    assert_eq!(s.tick(), vec![], "an open-ended pause does not expire");

    assert_eq!(s.resume(), vec![Event::Resumed]);
    assert_eq!(s.pause_state(), None);
    assert!(!s.is_open(), "sources are read again at the next tick");
    assert_eq!(
        s.tick(),
        vec![Event::Opened {
            reasons: vec![Reason::Idle],
            until: None
        }]
    );
    assert_eq!(s.resume(), vec![], "resuming when not paused does nothing");
}

#[test]
fn a_pause_that_already_ended_pauses_nothing() {
    let clock = clock_at("2026-12-03T17:00:00Z");
    let saved = Pause {
        since: ts("2026-12-03T09:00:00Z"),
        until: Some(ts("2026-12-03T12:00:00Z")),
    };
    let mut s = Scheduler::new(Arc::new(clock.clone()), vec![], MIN, Some(saved));
    assert_eq!(s.pause_state(), None);
    assert_eq!(s.tick(), vec![], "dropped at start, so no Resumed either");
    assert_eq!(s.pause(Some(ts("2026-12-03T16:00:00Z"))), vec![]);
    assert_eq!(s.pause_state(), None);
}

#[test]
fn a_saved_pause_holds_from_the_start() {
    let clock = clock_at("2026-12-03T17:00:00Z");
    let idle = FakeSource::new(Reason::Idle);
    idle.open(None);
    let saved = Pause {
        since: ts("2026-12-03T09:00:00Z"),
        until: None,
    };
    let mut s = Scheduler::new(
        Arc::new(clock.clone()),
        vec![idle.boxed()],
        MIN,
        Some(saved.clone()),
    );
    assert_eq!(s.tick(), vec![]);
    assert!(!s.is_open());
    assert_eq!(s.pause_state(), Some(saved));
}

#[test]
fn no_window_says_when_the_next_one_is() {
    let clock = clock_at("2026-12-03T12:00:00Z");
    let mut s = scheduler(&clock, vec![sleep_source(&clock)]);
    s.tick();
    let err = s.try_start_step("rl").unwrap_err();
    assert_eq!(
        err.to_string(),
        "no window is open; next: tonight 23:00 (sleep)"
    );
    let mut none = scheduler(&clock, vec![FakeSource::new(Reason::Idle).boxed()]);
    none.tick();
    assert_eq!(
        none.try_start_step("rl").unwrap_err().to_string(),
        "no window is open, and none is predicted"
    );
}

fn upcoming(reason: Reason, starts: &str, ends: &str) -> Upcoming {
    Upcoming {
        reason,
        starts: ts(starts),
        ends: Some(ts(ends)),
    }
}

#[test]
fn next_window_across_sources_and_after_a_pause() {
    let clock = clock_at("2026-12-03T12:00:00Z");
    let meetings = FakeSource::new(Reason::Calendar);
    meetings.predict(&[
        // Too short for a step: skipped.
        (ts("2026-12-03T13:00:00Z"), ts("2026-12-03T13:10:00Z")),
        (ts("2026-12-03T15:00:00Z"), ts("2026-12-03T15:30:00Z")),
        (ts("2026-12-03T20:00:00Z"), ts("2026-12-03T21:00:00Z")),
    ]);
    let mut s = scheduler(
        &clock,
        vec![
            sleep_source(&clock),
            meetings.boxed(),
            FakeSource::new(Reason::Idle).boxed(),
        ],
    );
    assert_eq!(
        s.next_window(),
        Some(upcoming(
            Reason::Calendar,
            "2026-12-03T15:00:00Z",
            "2026-12-03T15:30:00Z"
        ))
    );
    s.pause(Some(ts("2026-12-03T15:20:00Z")));
    assert_eq!(
        s.next_window(),
        Some(upcoming(
            Reason::Calendar,
            "2026-12-03T20:00:00Z",
            "2026-12-03T21:00:00Z"
        )),
        "10 min left of the 15:00 meeting after the pause is too short"
    );
    s.pause(Some(ts("2026-12-03T15:10:00Z")));
    assert_eq!(
        s.next_window(),
        Some(upcoming(
            Reason::Calendar,
            "2026-12-03T15:10:00Z",
            "2026-12-03T15:30:00Z"
        )),
        "a window under way when the pause ends counts from its end"
    );
    s.pause(Some(ts("2026-12-03T22:00:00Z")));
    assert_eq!(
        s.next_window(),
        Some(upcoming(
            Reason::Sleep,
            "2026-12-03T23:00:00Z",
            "2026-12-04T07:00:00Z"
        ))
    );
    s.pause(Some(ts("2026-12-04T01:00:00Z")));
    assert_eq!(
        s.next_window(),
        Some(upcoming(
            Reason::Sleep,
            "2026-12-04T01:00:00Z",
            "2026-12-04T07:00:00Z"
        ))
    );
    s.pause(Some(ts("2026-12-10T12:00:00Z")));
    assert_eq!(
        s.next_window(),
        Some(upcoming(
            Reason::Sleep,
            "2026-12-10T23:00:00Z",
            "2026-12-11T07:00:00Z"
        ))
    );
    s.pause(None);
    assert_eq!(
        s.next_window(),
        None,
        "nothing is predicted during an open-ended pause"
    );
    s.resume();
    assert_eq!(s.next_window().unwrap().starts, ts("2026-12-03T15:00:00Z"));
}

#[test]
fn next_window_counts_an_open_window_from_the_pause_end() {
    let clock = clock_at("2026-12-03T23:30:00Z");
    let mut s = scheduler(&clock, vec![sleep_source(&clock)]);
    s.tick();
    s.pause(Some(ts("2026-12-04T01:00:00Z")));
    assert_eq!(
        s.next_window(),
        Some(upcoming(
            Reason::Sleep,
            "2026-12-04T01:00:00Z",
            "2026-12-04T07:00:00Z"
        ))
    );
    assert_eq!(s.snapshot().next, s.next_window());
}

#[test]
fn snapshot_json_shape() {
    let clock = clock_at("2026-12-03T23:30:00Z");
    let idle = FakeSource::new(Reason::Idle);
    idle.set(Reading::Unavailable {
        detail: "no display".into(),
    });
    let mut s = scheduler(&clock, vec![sleep_source(&clock), idle.boxed()]);
    assert_eq!(
        serde_json::to_value(s.snapshot()).unwrap(),
        json!({
            "phase": {"state": "waiting"},
            "readings": [],
            "next": {"reason": "sleep", "starts": "2026-12-04T23:00:00Z", "ends": "2026-12-05T07:00:00Z"},
            "pause": null,
            "min_window_minutes": 15,
            "stopping": null,
            "at": "2026-12-03T23:30:00Z",
        })
    );
    s.tick();
    s.try_start_step("rl").unwrap();
    clock.set(ts("2026-12-03T23:31:00Z"));
    assert_eq!(
        serde_json::to_value(s.snapshot()).unwrap(),
        json!({
            "phase": {
                "state": "running",
                "reasons": ["sleep"],
                "since": "2026-12-03T23:30:00Z",
                "until": "2026-12-04T07:00:00Z",
                "owner": "rl",
                "step_started": "2026-12-03T23:30:00Z",
            },
            "readings": [
                {"reason": "sleep", "state": "open", "until": "2026-12-04T07:00:00Z"},
                {"reason": "idle", "state": "unavailable", "detail": "no display"},
            ],
            "next": {"reason": "sleep", "starts": "2026-12-04T23:00:00Z", "ends": "2026-12-05T07:00:00Z"},
            "pause": null,
            "min_window_minutes": 15,
            "stopping": null,
            "at": "2026-12-03T23:31:00Z",
        })
    );
    s.pause(Some(ts("2026-12-04T08:00:00Z")));
    let v = serde_json::to_value(s.snapshot()).unwrap();
    assert_eq!(
        v["phase"],
        json!({"state": "paused", "since": "2026-12-03T23:31:00Z", "until": "2026-12-04T08:00:00Z"})
    );
    assert_eq!(
        v["pause"],
        json!({"since": "2026-12-03T23:31:00Z", "until": "2026-12-04T08:00:00Z"})
    );
    assert_eq!(v["stopping"], json!("rl"));
    assert_eq!(
        s.snapshot().readings[0],
        SourceReading {
            reason: Reason::Sleep,
            reading: Reading::Open {
                until: Some(ts("2026-12-04T07:00:00Z"))
            }
        }
    );
    s.resume();
    s.tick();
    let v = serde_json::to_value(s.snapshot()).unwrap();
    assert_eq!(
        v["phase"]["state"],
        json!("open"),
        "stopping step: open, not running"
    );
}

#[test]
fn events_json_shape() {
    let events = [
        Event::Opened {
            reasons: vec![Reason::Sleep, Reason::Calendar],
            until: Some(ts("2026-12-04T07:00:00Z")),
        },
        Event::Closed {
            why: CloseReason::UserReturned,
        },
        Event::StepStarted { owner: "rl".into() },
        Event::StepStopped {
            owner: "rl".into(),
            why: CloseReason::Paused,
        },
        Event::StepFinished { owner: "rl".into() },
        Event::Paused { until: None },
        Event::Resumed,
    ];
    assert_eq!(
        serde_json::to_value(events).unwrap(),
        json!([
            {"event": "opened", "reasons": ["sleep", "calendar"], "until": "2026-12-04T07:00:00Z"},
            {"event": "closed", "why": "user_returned"},
            {"event": "step_started", "owner": "rl"},
            {"event": "step_stopped", "owner": "rl", "why": "paused"},
            {"event": "step_finished", "owner": "rl"},
            {"event": "paused", "until": null},
            {"event": "resumed"},
        ])
    );
}

#[test]
fn dropping_the_scheduler_stops_the_step() {
    let clock = clock_at("2026-12-03T14:00:00Z");
    let idle = FakeSource::new(Reason::Idle);
    idle.open(None);
    let mut s = scheduler(&clock, vec![idle.boxed()]);
    s.tick();
    let step = s.try_start_step("rl").unwrap();
    assert!(!step.stop.is_cancelled());
    drop(s);
    assert!(step.stop.is_cancelled());
}

#[test]
fn stale_step_ids_change_nothing() {
    let clock = clock_at("2026-12-03T14:00:00Z");
    let idle = FakeSource::new(Reason::Idle);
    idle.open(None);
    let mut s = scheduler(&clock, vec![idle.boxed()]);
    s.tick();
    let step = s.try_start_step("rl").unwrap();
    assert_eq!(
        s.step_done(step.id + 7),
        vec![Event::StepStarted { owner: "rl".into() }]
    );
    assert_eq!(
        s.try_start_step("x").unwrap_err().to_string(),
        "a step is already running (rl)"
    );
}

/// Sleep hours 23:00–07:00 in Berlin, under a clock that starts at `at`.
fn berlin_at(at: &str) -> (FakeClock, Scheduler) {
    let clock = FakeClock::new(ts(at), tz("Europe/Berlin"));
    let s = scheduler(&clock, vec![sleep_source(&clock)]);
    (clock, s)
}

fn too_short_left(s: &mut Scheduler) -> jiff::SignedDuration {
    match s.try_start_step("rl").unwrap_err().why {
        Refusal::TooShort { left, .. } => left,
        other => panic!("{other:?}"),
    }
}

#[test]
fn spring_forward_night_opens_and_closes_on_the_wall_clock() {
    // Berlin, 2026-03-29: 02:00 CET jumps to 03:00 CEST (01:00Z); the night is 7 h long.
    let (clock, mut s) = berlin_at("2026-03-28T11:00:00Z");
    assert_eq!(s.tick(), vec![]);
    assert_eq!(
        s.next_window(),
        Some(upcoming(
            Reason::Sleep,
            "2026-03-28T22:00:00Z",
            "2026-03-29T05:00:00Z"
        ))
    );
    clock.set(ts("2026-03-28T21:59:59Z"));
    assert_eq!(s.tick(), vec![]);
    assert_eq!(
        s.try_start_step("rl").unwrap_err().to_string(),
        "no window is open; next: tonight 23:00 (sleep)"
    );

    clock.set(ts("2026-03-28T22:00:00Z"));
    assert_eq!(
        s.tick(),
        vec![Event::Opened {
            reasons: vec![Reason::Sleep],
            until: Some(ts("2026-03-29T05:00:00Z")),
        }]
    );
    // After the jump the window keeps its end, and the next one is the following night.
    clock.set(ts("2026-03-29T01:30:00Z"));
    assert_eq!(s.tick(), vec![]);
    assert_eq!(
        s.next_window(),
        Some(upcoming(
            Reason::Sleep,
            "2026-03-29T21:00:00Z",
            "2026-03-30T05:00:00Z"
        ))
    );

    // 06:50 CEST: 10 real minutes are left, not the 70 an eight-hour night would leave.
    clock.set(ts("2026-03-29T04:50:00Z"));
    assert_eq!(s.tick(), vec![]);
    let refused = s.try_start_step("rl").unwrap_err();
    assert_eq!(
        refused.to_string(),
        "the sleep window ends at 07:00, in 10 min, less than the 15 min a step needs"
    );
    assert!(matches!(
        refused.why,
        Refusal::TooShort { ends, .. } if ends == ts("2026-03-29T05:00:00Z")
    ));

    // 06:40 CEST: 20 minutes left is enough; the step is stopped at 07:00 CEST.
    clock.set(ts("2026-03-29T04:40:00Z"));
    let step = s.try_start_step("rl").unwrap();
    s.drain_events();
    clock.set(ts("2026-03-29T04:59:59Z"));
    assert_eq!(s.tick(), vec![]);
    assert!(!step.stop.is_cancelled());
    clock.set(ts("2026-03-29T05:00:00Z"));
    assert_eq!(
        s.tick(),
        vec![
            Event::Closed {
                why: CloseReason::Ended
            },
            Event::StepStopped {
                owner: "rl".into(),
                why: CloseReason::Ended
            },
        ]
    );
    assert!(step.stop.is_cancelled());
}

#[test]
fn fall_back_night_opens_and_closes_on_the_wall_clock() {
    // Berlin, 2026-10-25: 03:00 CEST falls back to 02:00 CET (01:00Z); the night is 9 h long.
    let (clock, mut s) = berlin_at("2026-10-24T10:00:00Z");
    assert_eq!(s.tick(), vec![]);
    assert_eq!(
        s.next_window(),
        Some(upcoming(
            Reason::Sleep,
            "2026-10-24T21:00:00Z",
            "2026-10-25T06:00:00Z"
        ))
    );
    clock.set(ts("2026-10-24T20:59:59Z"));
    assert_eq!(s.tick(), vec![]);
    clock.set(ts("2026-10-24T21:00:00Z"));
    assert_eq!(
        s.tick(),
        vec![Event::Opened {
            reasons: vec![Reason::Sleep],
            until: Some(ts("2026-10-25T06:00:00Z")),
        }]
    );
    // The repeated hour (02:30 CET, after 02:30 CEST) is still the same night.
    clock.set(ts("2026-10-25T01:30:00Z"));
    assert_eq!(s.tick(), vec![]);
    assert_eq!(
        s.next_window(),
        Some(upcoming(
            Reason::Sleep,
            "2026-10-25T22:00:00Z",
            "2026-10-26T06:00:00Z"
        ))
    );

    // 06:00 CET is eight real hours in, where an eight-hour night would have closed:
    // the window is open with an hour left, so a step starts.
    clock.set(ts("2026-10-25T05:00:00Z"));
    assert_eq!(s.tick(), vec![]);
    let step = s.try_start_step("rl").unwrap();
    s.drain_events();
    assert!(!step.stop.is_cancelled());
    assert_eq!(
        s.step_done(step.id),
        vec![Event::StepFinished { owner: "rl".into() }]
    );

    // 06:50 CET: 10 minutes are left.
    clock.set(ts("2026-10-25T05:50:00Z"));
    assert_eq!(s.tick(), vec![]);
    assert_eq!(too_short_left(&mut s), jiff::SignedDuration::from_mins(10));
    assert_eq!(
        s.try_start_step("rl").unwrap_err().to_string(),
        "the sleep window ends at 07:00, in 10 min, less than the 15 min a step needs"
    );

    clock.set(ts("2026-10-25T06:00:00Z"));
    assert_eq!(
        s.tick(),
        vec![Event::Closed {
            why: CloseReason::Ended
        }]
    );
}
