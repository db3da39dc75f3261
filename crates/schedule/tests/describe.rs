//! Times and spans as the user reads them in status lines and refusals.
#![allow(clippy::unwrap_used, clippy::panic)]

mod support;

use jiff::SignedDuration;
use metaclaw_schedule::clock::{describe_duration, describe_time};
use metaclaw_schedule::source::{Reason, Upcoming};
use support::{local, tz};

#[test]
fn times_relative_to_now_in_the_local_zone() {
    let berlin = tz("Europe/Berlin");
    // Thursday 3 December 2026, 12:00 in Berlin (11:00Z).
    let now = local(&berlin, "2026-12-03T12:00").to_zoned_datetime(berlin.clone());
    let at = |s: &str| describe_time(local(&berlin, s), &now);
    assert_eq!(at("2026-12-03T18:00"), "18:00");
    assert_eq!(at("2026-12-04T07:05"), "tomorrow 07:05");
    assert_eq!(at("2026-12-05T09:00"), "Sat 09:00");
    assert_eq!(at("2026-12-24T09:00"), "2026-12-24 09:00");
    assert_eq!(at("2026-12-02T09:00"), "2026-12-02 09:00");
}

#[test]
fn upcoming_windows_say_tonight_for_the_evening() {
    let berlin = tz("Europe/Berlin");
    let now = local(&berlin, "2026-12-03T12:00").to_zoned_datetime(berlin.clone());
    let window = |reason, s: &str| Upcoming {
        reason,
        starts: local(&berlin, s),
        ends: None,
    };
    assert_eq!(
        window(Reason::Sleep, "2026-12-03T23:00").describe(&now),
        "tonight 23:00 (sleep)"
    );
    assert_eq!(
        window(Reason::Calendar, "2026-12-03T15:00").describe(&now),
        "15:00 (calendar)"
    );
    assert_eq!(
        window(Reason::Calendar, "2026-12-04T10:00").describe(&now),
        "tomorrow 10:00 (calendar)"
    );
}

#[test]
fn spans() {
    let d = SignedDuration::from_secs;
    assert_eq!(describe_duration(d(30)), "less than a minute");
    assert_eq!(describe_duration(d(-30)), "less than a minute");
    assert_eq!(describe_duration(d(10 * 60 + 59)), "10 min");
    assert_eq!(describe_duration(d(2 * 3600)), "2 h");
    assert_eq!(describe_duration(d(2 * 3600 + 5 * 60)), "2 h 5 min");
}
