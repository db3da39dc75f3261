//! The scheduler in words, for status lines: "open (sleep) until 07:00", "next window:
//! tonight 23:00 (sleep)", "after the pause ends at 18:00".

use jiff::ZonedDateTime;
use metaclaw_schedule::clock::{Clock, SystemClock, describe_time};
use metaclaw_schedule::source::{Reading, Reason, Upcoming};

use super::view::{SchedulerStatus, Words};

/// `metaclaw scheduler status`, line by line, at this process's clock and time zone.
pub fn status_lines(s: &SchedulerStatus) -> Vec<String> {
    status_lines_at(s, &SystemClock.now_zoned())
}

pub fn status_lines_at(s: &SchedulerStatus, now: &ZonedDateTime) -> Vec<String> {
    let mut lines = vec![
        format!("training windows: {}", state(s, now)),
        format!("  {}", next_window(s, now)),
    ];
    let sleep = match &s.sources.sleep_hours {
        Some(hours) => format!("{hours} ({})", reading(s, Reason::Sleep, now)),
        None => "off".to_string(),
    };
    lines.push(format!("  sleep hours:  {sleep}"));
    let idle = if s.running {
        format!(
            "after {} min without keyboard or mouse ({}; {})",
            s.sources.idle_threshold_minutes,
            s.sources.idle_probe.as_deref().unwrap_or("unknown"),
            reading(s, Reason::Idle, now)
        )
    } else {
        format!(
            "after {} min without keyboard or mouse (read while MetaClaw runs)",
            s.sources.idle_threshold_minutes
        )
    };
    lines.push(format!("  idle:         {idle}"));
    if s.running {
        lines.push(format!("  idle source:  {}", idle_source(s)));
    }
    let calendar = match (s.running, s.sources.calendar) {
        (true, true) => format!(
            "meetings you accepted ({})",
            reading(s, Reason::Calendar, now)
        ),
        (true, false) => "off (metaclaw scheduler calendar connect)".to_string(),
        (false, _) => "read while MetaClaw runs".to_string(),
    };
    lines.push(format!("  calendar:     {calendar}"));
    let pause = match &s.pause {
        None => "none".to_string(),
        Some(p) => match p.until {
            Some(t) => format!(
                "until {} (since {})",
                describe_time(t, now),
                describe_time(p.since, now)
            ),
            None => format!("until resumed (since {})", describe_time(p.since, now)),
        },
    };
    lines.push(format!("  pause:        {pause}"));
    if let Some(problem) = &s.pause_problem {
        lines.push(format!("  pause file:   {problem}"));
    }
    lines.push(format!(
        "  min window:   {} min for a step",
        s.min_window_minutes
    ));
    lines.push(format!(
        "  background learning: {}",
        if s.gate_background_learning {
            "waits for a window (scheduler.gate_background_learning)"
        } else {
            "runs whenever there is work"
        }
    ));
    for problem in &s.sources.problems {
        lines.push(format!("  problem:      {problem}"));
    }
    if !s.running {
        lines.push(
            "MetaClaw is not running: this is the sleep hours and the pause only; idle and calendar are read only while it runs".to_string(),
        );
    }
    lines
}

/// One source's last reading in words ("open until 07:00", "closed").
fn reading(s: &SchedulerStatus, reason: Reason, now: &ZonedDateTime) -> String {
    match s
        .readings
        .iter()
        .find(|r| r.reason == reason)
        .map(|r| &r.reading)
    {
        Some(Reading::Open { until: Some(t) }) => format!("open until {}", describe_time(*t, now)),
        Some(Reading::Open { until: None }) => "open now".to_string(),
        Some(Reading::Closed) => "closed".to_string(),
        Some(Reading::Unavailable { detail }) => format!("unavailable: {detail}"),
        None => "not read yet".to_string(),
    }
}

/// The words again, in this process's time zone and at its clock (the CLI renders what the
/// engine sent for the user's terminal).
pub fn render_now(status: &SchedulerStatus) -> Words {
    let now = SystemClock.now_zoned();
    Words {
        state: state(status, &now),
        next_window: next_window(status, &now),
        idle: idle_source(status),
    }
}

/// Where keyboard idle is read, in words, and why not from a better source.
pub fn idle_source(s: &SchedulerStatus) -> String {
    if !s.running {
        return String::new();
    }
    let from = match s.sources.idle_probe.as_deref() {
        Some("gnome-idle-monitor") => "keyboard idle from GNOME's idle monitor",
        Some("freedesktop-screensaver") => "keyboard idle from the desktop's screen saver service",
        Some("ext-idle-notify") => "keyboard idle from the Wayland compositor (ext-idle-notify)",
        Some("x11") => "keyboard idle from the X server",
        Some("logind") => "keyboard idle from logind's session idle hint",
        Some("last-request") => {
            "no desktop reports keyboard idle here: the time since the agent's last request stands in"
        }
        Some(other) => other,
        None => "idle source unknown",
    };
    match s.sources.idle_passed_over.as_slice() {
        [] => from.to_owned(),
        passed => format!("{from} (not available: {})", passed.join("; ")),
    }
}

pub fn state(s: &SchedulerStatus, now: &ZonedDateTime) -> String {
    let mut line = match s.state.as_str() {
        "open" => format!("open ({}){}", reasons(&s.reasons), until(s, now)),
        "running" => format!(
            "open ({}){}, running a step ({})",
            reasons(&s.reasons),
            until(s, now),
            s.owner.as_deref().unwrap_or("unknown")
        ),
        "paused" => match s.until {
            Some(t) => format!("paused until {}", describe_time(t, now)),
            None => "paused until resumed".to_string(),
        },
        _ => "waiting for a window".to_string(),
    };
    if let Some(owner) = &s.stopping {
        line.push_str(&format!(", a step is stopping ({owner})"));
    }
    line
}

pub fn next_window(s: &SchedulerStatus, now: &ZonedDateTime) -> String {
    let body = match s.state.as_str() {
        "open" | "running" => format!("now ({}){}", reasons(&s.reasons), until(s, now)),
        "paused" => match s.until {
            None => "none while paused (until resumed: `metaclaw resume`)".to_string(),
            Some(end) => {
                let ends = describe_time(end, now);
                match &s.next {
                    Some(next) if next.starts <= end => {
                        format!("after the pause ends at {ends} ({})", next.reason)
                    }
                    Some(next) => {
                        format!(
                            "after the pause ends at {ends}, then {}",
                            upcoming(next, now)
                        )
                    }
                    None => format!("after the pause ends at {ends} (none predicted)"),
                }
            }
        },
        _ => match &s.next {
            Some(next) => upcoming(next, now),
            None => "none predicted".to_string(),
        },
    };
    format!("next window: {body}")
}

/// "tonight 23:00 (sleep)", "tomorrow 14:00 (calendar) until 15:00": a meeting's end is
/// worth saying, a night's is not.
fn upcoming(next: &Upcoming, now: &ZonedDateTime) -> String {
    let mut line = next.describe(now);
    if let (Reason::Calendar, Some(end)) = (next.reason, next.ends) {
        // Said from the meeting's start: "until 15:00", not "until tomorrow 15:00".
        let starts = next.starts.to_zoned_datetime(now.time_zone().clone());
        line.push_str(&format!(" until {}", describe_time(end, &starts)));
    }
    line
}

fn until(s: &SchedulerStatus, now: &ZonedDateTime) -> String {
    s.until
        .map(|t| format!(" until {}", describe_time(t, now)))
        .unwrap_or_default()
}

fn reasons(reasons: &[Reason]) -> String {
    reasons
        .iter()
        .map(Reason::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use jiff::Timestamp;
    use jiff::tz::TimeZone;
    use metaclaw_schedule::pause::Pause;

    use super::*;
    use crate::schedule::view::SourcesInfoView;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn status(state: &str) -> SchedulerStatus {
        SchedulerStatus {
            state: state.into(),
            reasons: vec![],
            since: None,
            until: None,
            owner: None,
            stopping: None,
            readings: vec![],
            next: None,
            pause: None,
            pause_problem: None,
            min_window_minutes: 15,
            sources: SourcesInfoView::default(),
            gate_background_learning: false,
            running: true,
            at: ts("2026-12-03T10:00:00Z"),
            text: Words {
                state: String::new(),
                next_window: String::new(),
                idle: String::new(),
            },
        }
    }

    fn now() -> ZonedDateTime {
        ts("2026-12-03T10:00:00Z").to_zoned_datetime(TimeZone::UTC)
    }

    #[test]
    fn next_window_wording() {
        let mut s = status("waiting");
        s.next = Some(Upcoming {
            reason: Reason::Sleep,
            starts: ts("2026-12-03T23:00:00Z"),
            ends: Some(ts("2026-12-04T07:00:00Z")),
        });
        assert_eq!(
            next_window(&s, &now()),
            "next window: tonight 23:00 (sleep)"
        );

        s.next = Some(Upcoming {
            reason: Reason::Calendar,
            starts: ts("2026-12-04T14:00:00Z"),
            ends: Some(ts("2026-12-04T15:00:00Z")),
        });
        assert_eq!(
            next_window(&s, &now()),
            "next window: tomorrow 14:00 (calendar) until 15:00"
        );

        let mut open = status("open");
        open.reasons = vec![Reason::Idle];
        assert_eq!(next_window(&open, &now()), "next window: now (idle)");
        assert_eq!(state(&open, &now()), "open (idle)");

        let mut paused = status("paused");
        paused.until = Some(ts("2026-12-03T18:00:00Z"));
        paused.pause = Some(Pause {
            since: ts("2026-12-03T09:00:00Z"),
            until: paused.until,
        });
        paused.next = Some(Upcoming {
            reason: Reason::Sleep,
            starts: ts("2026-12-03T23:00:00Z"),
            ends: None,
        });
        assert_eq!(
            next_window(&paused, &now()),
            "next window: after the pause ends at 18:00, then tonight 23:00 (sleep)"
        );
        assert_eq!(state(&paused, &now()), "paused until 18:00");
        paused.next = Some(Upcoming {
            reason: Reason::Sleep,
            starts: ts("2026-12-03T18:00:00Z"),
            ends: Some(ts("2026-12-04T07:00:00Z")),
        });
        assert_eq!(
            next_window(&paused, &now()),
            "next window: after the pause ends at 18:00 (sleep)"
        );
        paused.until = None;
        assert_eq!(
            next_window(&paused, &now()),
            "next window: none while paused (until resumed: `metaclaw resume`)"
        );
    }

    #[test]
    fn status_lines_say_what_is_read_only_while_running() {
        let mut s = status("waiting");
        s.running = false;
        s.sources.sleep_hours = Some("23:00–07:00".into());
        let lines = status_lines_at(&s, &now()).join("\n");
        assert!(lines.contains("sleep hours:  23:00–07:00"), "{lines}");
        assert!(
            lines.contains("idle and calendar are read only while it runs"),
            "{lines}"
        );
        s.running = true;
        let lines = status_lines_at(&s, &now()).join("\n");
        assert!(!lines.contains("read only while it runs"), "{lines}");
    }
}
