//! Sleep hours in wall-clock time: across midnight, and on the nights clocks change.
#![allow(clippy::unwrap_used, clippy::panic)]

mod support;

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use metaclaw_schedule::ScheduleError;
use metaclaw_schedule::clock::FakeClock;
use metaclaw_schedule::sleep::{SleepHours, parse_hhmm};
use metaclaw_schedule::source::{Reading, Reason, Source};
use support::{local, ts, tz};

fn sleep(zone: &str, start: (u8, u8), end: (u8, u8)) -> SleepHours {
    let clock = FakeClock::new(Timestamp::UNIX_EPOCH, tz(zone));
    SleepHours::new(start, end, Arc::new(clock)).unwrap()
}

fn open_until(s: &SleepHours, at: Timestamp) -> Option<Timestamp> {
    match s.read(at) {
        Reading::Open { until } => Some(until.unwrap()),
        Reading::Closed => None,
        other => panic!("unexpected reading {other:?}"),
    }
}

#[test]
fn across_midnight() {
    let berlin = tz("Europe/Berlin");
    let s = sleep("Europe/Berlin", (23, 0), (7, 0));
    let end = local(&berlin, "2026-12-04T07:00");
    assert_eq!(open_until(&s, local(&berlin, "2026-12-03T22:59")), None);
    assert_eq!(
        open_until(&s, local(&berlin, "2026-12-03T23:00")),
        Some(end)
    );
    assert_eq!(
        open_until(&s, local(&berlin, "2026-12-04T00:00")),
        Some(end)
    );
    assert_eq!(
        open_until(&s, local(&berlin, "2026-12-04T06:59")),
        Some(end)
    );
    assert_eq!(open_until(&s, local(&berlin, "2026-12-04T07:00")), None);
    assert_eq!(s.reason(), Reason::Sleep);
}

#[test]
fn next_window_is_tonight_then_tomorrow_night() {
    let berlin = tz("Europe/Berlin");
    let s = sleep("Europe/Berlin", (23, 0), (7, 0));
    let next = s.next(local(&berlin, "2026-12-03T12:00")).unwrap();
    assert_eq!(next.reason, Reason::Sleep);
    assert_eq!(next.starts, local(&berlin, "2026-12-03T23:00"));
    assert_eq!(next.ends, Some(local(&berlin, "2026-12-04T07:00")));
    // During the night, the next one is the following night.
    let next = s.next(local(&berlin, "2026-12-04T02:00")).unwrap();
    assert_eq!(next.starts, local(&berlin, "2026-12-04T23:00"));
    // Exactly at a start, that window is not "next".
    let next = s.next(local(&berlin, "2026-12-03T23:00")).unwrap();
    assert_eq!(next.starts, local(&berlin, "2026-12-04T23:00"));
}

#[test]
fn same_day_window() {
    let utc = tz("UTC");
    let s = sleep("UTC", (13, 0), (14, 30));
    assert_eq!(open_until(&s, local(&utc, "2026-12-03T12:59")), None);
    assert_eq!(
        open_until(&s, local(&utc, "2026-12-03T13:00")),
        Some(local(&utc, "2026-12-03T14:30"))
    );
    assert_eq!(open_until(&s, local(&utc, "2026-12-03T14:30")), None);
    assert_eq!(open_until(&s, local(&utc, "2026-12-03T23:30")), None);
}

/// The night of `start`..`end` as (opens, closes), checked around both edges.
fn night(zone: &str, start_local: &str, end_local: &str) -> (Timestamp, Timestamp) {
    let z = tz(zone);
    let s = sleep(zone, (23, 0), (7, 0));
    let (start, end) = (local(&z, start_local), local(&z, end_local));
    let one_sec = SignedDuration::from_secs(1);
    assert_eq!(open_until(&s, start - one_sec), None);
    assert_eq!(open_until(&s, start), Some(end));
    assert_eq!(open_until(&s, end - one_sec), Some(end));
    assert_eq!(open_until(&s, end), None);
    (start, end)
}

#[test]
fn spring_forward_night_is_an_hour_shorter() {
    let (start, end) = night("America/New_York", "2026-03-07T23:00", "2026-03-08T07:00");
    assert_eq!(start, ts("2026-03-08T04:00:00Z"));
    assert_eq!(end, ts("2026-03-08T11:00:00Z"));
    assert_eq!(start.duration_until(end), SignedDuration::from_hours(7));

    let (start, end) = night("Europe/Berlin", "2026-03-28T23:00", "2026-03-29T07:00");
    assert_eq!(start, ts("2026-03-28T22:00:00Z"));
    assert_eq!(end, ts("2026-03-29T05:00:00Z"));
    assert_eq!(start.duration_until(end), SignedDuration::from_hours(7));
}

#[test]
fn fall_back_night_is_an_hour_longer() {
    let (start, end) = night("America/New_York", "2026-10-31T23:00", "2026-11-01T07:00");
    assert_eq!(start, ts("2026-11-01T03:00:00Z"));
    assert_eq!(end, ts("2026-11-01T12:00:00Z"));
    assert_eq!(start.duration_until(end), SignedDuration::from_hours(9));

    let (start, end) = night("Europe/Berlin", "2026-10-24T23:00", "2026-10-25T07:00");
    assert_eq!(start, ts("2026-10-24T21:00:00Z"));
    assert_eq!(end, ts("2026-10-25T06:00:00Z"));
    assert_eq!(start.duration_until(end), SignedDuration::from_hours(9));
}

#[test]
fn start_inside_a_gap_opens_when_the_clocks_jump() {
    // New York, 2026-03-08: 02:00 EST jumps to 03:00 EDT (07:00Z); 02:30 never happens.
    let s = sleep("America/New_York", (2, 30), (7, 0));
    let jump = ts("2026-03-08T07:00:00Z");
    let before = ts("2026-03-08T06:59:59Z"); // 01:59:59 EST
    assert_eq!(open_until(&s, before), None);
    assert_eq!(s.next(before).unwrap().starts, jump);
    assert_eq!(open_until(&s, jump), Some(ts("2026-03-08T11:00:00Z")));
    // Not 03:30 EDT, which is what adding the gap to 02:30 would give.
    assert_eq!(
        open_until(&s, ts("2026-03-08T07:15:00Z")),
        Some(ts("2026-03-08T11:00:00Z"))
    );
}

#[test]
fn end_inside_a_gap_closes_when_the_clocks_jump() {
    let s = sleep("America/New_York", (23, 0), (2, 30));
    let jump = ts("2026-03-08T07:00:00Z");
    assert_eq!(open_until(&s, ts("2026-03-08T06:30:00Z")), Some(jump));
    assert_eq!(open_until(&s, jump), None);
}

#[test]
fn start_inside_a_fold_is_the_first_occurrence() {
    // New York, 2026-11-01: 01:00–02:00 happens twice (EDT 05:00Z, then EST 06:00Z).
    let s = sleep("America/New_York", (1, 30), (7, 0));
    let end = ts("2026-11-01T12:00:00Z");
    assert_eq!(open_until(&s, ts("2026-11-01T05:29:59Z")), None);
    assert_eq!(open_until(&s, ts("2026-11-01T05:30:00Z")), Some(end));
    // The second 01:30 is still inside the same window.
    assert_eq!(open_until(&s, ts("2026-11-01T06:30:00Z")), Some(end));
}

#[test]
fn end_inside_a_fold_does_not_reopen_in_the_repeated_hour() {
    let s = sleep("America/New_York", (23, 0), (1, 30));
    let first = ts("2026-11-01T05:30:00Z"); // 01:30 EDT
    assert_eq!(open_until(&s, ts("2026-11-01T05:00:00Z")), Some(first));
    assert_eq!(open_until(&s, first), None);
    // 01:00 and 01:29 EST read as inside 23:00–01:30 on the wall clock, but the night
    // already ended.
    assert_eq!(open_until(&s, ts("2026-11-01T06:00:00Z")), None);
    assert_eq!(open_until(&s, ts("2026-11-01T06:29:00Z")), None);
}

#[test]
fn equal_start_and_end_are_rejected_clearly() {
    let clock = Arc::new(FakeClock::new(Timestamp::UNIX_EPOCH, tz("UTC")));
    let err = SleepHours::new((23, 0), (23, 0), clock).unwrap_err();
    assert!(matches!(err, ScheduleError::EmptySleepWindow { .. }));
    let message = err.to_string();
    assert!(message.contains("both 23:00"), "{message}");
    assert!(message.contains("different times"), "{message}");
}

#[test]
fn out_of_range_times_are_rejected() {
    let clock = Arc::new(FakeClock::new(Timestamp::UNIX_EPOCH, tz("UTC")));
    for (start, end) in [((24, 0), (7, 0)), ((23, 0), (7, 60))] {
        let err = SleepHours::new(start, end, clock.clone()).unwrap_err();
        assert!(matches!(err, ScheduleError::InvalidTime { .. }), "{err}");
    }
    let err = SleepHours::new((23, 0), (7, 60), clock).unwrap_err();
    assert!(
        err.to_string().starts_with("sleep end time \"07:60\""),
        "{err}"
    );
}

#[test]
fn parses_times_from_config() {
    assert_eq!(parse_hhmm("sleep start", "23:00").unwrap(), (23, 0));
    assert_eq!(parse_hhmm("sleep end", " 7:05 ").unwrap(), (7, 5));
    // YAML 1.1 reads an unquoted 23:00 as 1380; that is not a time.
    for bad in [
        "1380", "24:00", "23:60", "23:5", "23:005", "-1:00", "ab:cd", "",
    ] {
        let err = parse_hhmm("sleep start", bad).unwrap_err();
        assert!(
            err.to_string().contains(&format!("{bad:?}")),
            "{bad}: {err}"
        );
    }
}
