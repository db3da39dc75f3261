//! `metaclaw pause | resume | scheduler status | next-window` through the real binary: the
//! pause survives a restart, a pause made while stopped is picked up at start, and the
//! next-window wording for sleep hours set relative to now. Every child runs with TZ=UTC.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::process::Output;
use std::time::{SystemTime, UNIX_EPOCH};

use common::daemon::{Home, free_port, stdout};
use serde_json::Value;

const DAY: u64 = 24 * 3600;

fn home(scheduler: &str) -> (Home, u16) {
    let port = free_port();
    let home = Home::new(&format!("proxy:\n  port: {port}\n{scheduler}"));
    (home, port)
}

fn run(home: &Home, args: &[&str]) -> Output {
    home.cmd("file", args).env("TZ", "UTC").output().unwrap()
}

fn ok(home: &Home, args: &[&str]) -> String {
    let o = run(home, args);
    assert!(o.status.success(), "metaclaw {args:?}: {o:?}");
    stdout(&o)
}

/// `start --daemon` with TZ=UTC (the shared helper keeps the caller's zone).
fn start(home: &Home) {
    ok(home, &["start", "--daemon"]);
}

fn status_json(home: &Home) -> Value {
    serde_json::from_str(&ok(home, &["scheduler", "status", "--json"])).unwrap()
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// `HH:MM` (UTC) of `secs` since the epoch.
fn hhmm(secs: u64) -> String {
    let of_day = secs % DAY;
    format!("{:02}:{:02}", of_day / 3600, (of_day % 3600) / 60)
}

/// How the CLI names a time `at` seen from `now` (both UTC): today, tonight (18:00 on),
/// or tomorrow.
/// A window's start as status lines say it: "tonight" for an evening later today.
fn said(now: u64, at: u64) -> String {
    let hm = said_time(now, at);
    if at / DAY == now / DAY && (at % DAY) / 3600 >= 18 {
        format!("tonight {hm}")
    } else {
        hm
    }
}

/// An end ("until …") as status lines say it: the time today, else "tomorrow".
fn said_time(now: u64, at: u64) -> String {
    let hm = hhmm(at);
    if at / DAY == now / DAY {
        hm
    } else {
        format!("tomorrow {hm}")
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pause_for_a_duration_survives_stop_and_start_and_resume_ends_it() {
    let (home, _port) = home("");
    start(&home);

    let out = ok(&home, &["pause", "--for", "2h"]);
    assert!(out.contains("Learning paused until"), "{out}");
    let before = status_json(&home);
    assert_eq!(before["running"], true, "{before}");
    assert_eq!(before["state"], "paused", "{before}");
    let until = before["pause"]["until"].as_str().unwrap().to_string();
    assert!(home.path().join("scheduler/pause.json").exists());

    ok(&home, &["stop"]);
    start(&home);
    let after = status_json(&home);
    assert_eq!(after["running"], true, "{after}");
    assert_eq!(after["state"], "paused", "{after}");
    assert_eq!(after["pause"]["until"], until.as_str(), "{after}");
    assert_eq!(after["pause"]["since"], before["pause"]["since"], "{after}");
    // Shown in the general status too.
    let general = ok(&home, &["status"]);
    assert!(
        general
            .lines()
            .any(|l| l.starts_with("  learning:") && l.contains("paused until")),
        "{general}"
    );

    let out = ok(&home, &["resume"]);
    assert!(out.contains("Learning resumed"), "{out}");
    let resumed = status_json(&home);
    assert_ne!(resumed["state"], "paused", "{resumed}");
    assert_eq!(resumed["pause"], Value::Null, "{resumed}");
    assert!(!home.path().join("scheduler/pause.json").exists());
    // And the engine does not bring it back at the next start.
    ok(&home, &["stop"]);
    start(&home);
    assert_ne!(status_json(&home)["state"], "paused");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pause_made_while_stopped_is_picked_up_at_start() {
    let (home, _port) = home("");
    let at = now_secs() + 90 * 60;
    let out = ok(&home, &["pause", "--until", &hhmm(at)]);
    assert!(out.contains("not running"), "{out}");
    assert!(
        out.contains(&format!("paused until {}", said_time(now_secs(), at))),
        "{out}"
    );

    let offline = status_json(&home);
    assert_eq!(offline["running"], false, "{offline}");
    assert_eq!(offline["state"], "paused", "{offline}");
    let until = offline["pause"]["until"].as_str().unwrap().to_string();
    assert!(until.contains(&format!("T{}:00Z", hhmm(at))), "{until}");
    let text = ok(&home, &["scheduler", "status"]);
    assert!(text.contains("paused until"), "{text}");
    assert!(
        text.contains("idle and calendar are read only while it runs"),
        "{text}"
    );

    start(&home);
    let running = status_json(&home);
    assert_eq!(running["running"], true, "{running}");
    assert_eq!(running["state"], "paused", "{running}");
    assert_eq!(running["pause"]["until"], until.as_str(), "{running}");

    // Resume while stopped removes the file; the next start is not paused.
    ok(&home, &["stop"]);
    let out = ok(&home, &["resume"]);
    assert!(out.contains("the pause is removed"), "{out}");
    start(&home);
    let fresh = status_json(&home);
    assert_ne!(fresh["state"], "paused", "{fresh}");
}

#[tokio::test(flavor = "multi_thread")]
async fn next_window_names_the_coming_sleep_hours_running_or_not() {
    let now = now_secs();
    let (starts, ends) = (now + 2 * 3600, now + 5 * 3600);
    let (home, _port) = home(&format!(
        "scheduler:\n  sleep_start: '{}'\n  sleep_end: '{}'\n",
        hhmm(starts),
        hhmm(ends)
    ));
    let expected = format!("next window: {} (sleep)", said(now, starts));

    let out = ok(&home, &["scheduler", "next-window"]);
    assert_eq!(out.lines().next(), Some(expected.as_str()), "{out}");
    assert!(
        out.contains("idle and calendar are read only while it runs"),
        "{out}"
    );

    start(&home);
    let out = ok(&home, &["scheduler", "next-window"]);
    assert_eq!(out.trim_end(), expected, "{out}");

    // Paused past the start: the window counts from the pause's end.
    ok(&home, &["pause", "--for", "3h"]);
    let out = ok(&home, &["scheduler", "next-window"]);
    assert!(
        out.starts_with("next window: after the pause ends at ") && out.contains("(sleep)"),
        "{out}"
    );
    ok(&home, &["pause"]);
    let out = ok(&home, &["scheduler", "next-window"]);
    assert!(out.contains("none while paused"), "{out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn inside_the_sleep_hours_the_window_is_open_now() {
    let now = now_secs();
    let (home, _port) = home(&format!(
        "scheduler:\n  sleep_start: '{}'\n  sleep_end: '{}'\n",
        hhmm(now - 3600),
        hhmm(now + 2 * 3600)
    ));
    start(&home);
    let out = ok(&home, &["scheduler", "next-window"]);
    let expected = format!(
        "next window: now (sleep) until {}",
        said_time(now, now + 2 * 3600 - (now + 2 * 3600) % 60)
    );
    assert_eq!(out.trim_end(), expected, "{out}");
    let status = ok(&home, &["scheduler", "status"]);
    assert!(
        status.starts_with("training windows: open (sleep)"),
        "{status}"
    );
}

#[test]
fn bad_pause_input_is_a_usage_error() {
    let (home, _port) = home("");
    let o = run(&home, &["pause", "--for", "2x"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not a duration"),
        "{o:?}"
    );
    let o = run(&home, &["pause", "--until", "25:00"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let o = run(&home, &["pause", "--for", "1h", "--until", "18:00"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    // Nothing was saved.
    assert!(!home.path().join("scheduler/pause.json").exists());
}
