//! Sleep hours: a daily window in the user's wall-clock time, e.g. 23:00–07:00.
//!
//! Each night's window is computed as two instants in the clock's time zone, so DST is
//! exact: the night clocks spring forward is an hour shorter, the night they fall back an
//! hour longer. A wall-clock time that does not exist that night (inside a DST gap) means
//! the moment the clocks jump past it; one that happens twice (inside a fold) means the
//! first time, so a window never reopens during the repeated hour.

use std::sync::Arc;

use jiff::Timestamp;
use jiff::civil::{Date, DateTime};
use jiff::tz::{AmbiguousOffset, TimeZone};

use crate::clock::Clock;
use crate::error::ScheduleError;
use crate::source::{Reading, Reason, Source, Upcoming};

pub struct SleepHours {
    start: (u8, u8),
    end: (u8, u8),
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for SleepHours {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SleepHours({}–{})", hm(self.start), hm(self.end))
    }
}

impl SleepHours {
    /// `start` and `end` as (hour, minute) local wall-clock times; `start > end` crosses
    /// midnight. Equal times are rejected: that window would be empty (or, read the other
    /// way, all day), and neither is what anyone means.
    pub fn new(
        start: (u8, u8),
        end: (u8, u8),
        clock: Arc<dyn Clock>,
    ) -> Result<SleepHours, ScheduleError> {
        check("sleep start", start)?;
        check("sleep end", end)?;
        if start == end {
            return Err(ScheduleError::EmptySleepWindow { at: hm(start) });
        }
        Ok(SleepHours { start, end, clock })
    }

    pub fn start(&self) -> (u8, u8) {
        self.start
    }

    pub fn end(&self) -> (u8, u8) {
        self.end
    }

    /// The window whose start falls on local `date`: `[start, end)` as instants. Empty
    /// (start == end) on a night when both times fall into the same DST gap.
    fn window_starting_on(
        &self,
        tz: &TimeZone,
        date: Date,
    ) -> Result<(Timestamp, Timestamp), jiff::Error> {
        let end_date = if self.start > self.end {
            date.tomorrow()?
        } else {
            date
        };
        let start = first_instant_at_or_after(tz, at(date, self.start))?;
        let end = first_instant_at_or_after(tz, at(end_date, self.end))?;
        Ok((start, end))
    }

    /// The windows starting from the day before `now`'s local date to two days after, in
    /// order: enough to cover any window containing `now` and the next one after it.
    fn windows_around(&self, now: Timestamp) -> Result<Vec<(Timestamp, Timestamp)>, jiff::Error> {
        let tz = self.clock.time_zone();
        let today = tz.to_datetime(now).date();
        let mut day = today.yesterday()?;
        let mut windows = Vec::with_capacity(4);
        for _ in 0..4 {
            windows.push(self.window_starting_on(&tz, day)?);
            day = day.tomorrow()?;
        }
        Ok(windows)
    }
}

impl Source for SleepHours {
    fn reason(&self) -> Reason {
        Reason::Sleep
    }

    fn read(&self, now: Timestamp) -> Reading {
        match self.windows_around(now) {
            Ok(windows) => windows
                .into_iter()
                .find(|&(start, end)| start <= now && now < end)
                .map_or(Reading::Closed, |(_, end)| Reading::Open {
                    until: Some(end),
                }),
            Err(e) => Reading::Unavailable {
                detail: format!("cannot compute the sleep hours at {now}: {e}"),
            },
        }
    }

    fn next(&self, now: Timestamp) -> Option<Upcoming> {
        let windows = self.windows_around(now).ok()?;
        windows
            .into_iter()
            .find(|&(start, end)| start > now && start < end)
            .map(|(starts, ends)| Upcoming {
                reason: Reason::Sleep,
                starts,
                ends: Some(ends),
            })
    }
}

/// Parses "23:00" / "7:05" into (hour, minute), validated. Config stores the times as
/// strings; this is the one place they are read.
pub fn parse_hhmm(which: &'static str, value: &str) -> Result<(u8, u8), ScheduleError> {
    let invalid = || ScheduleError::InvalidTime {
        which,
        value: value.to_string(),
    };
    let (h, m) = value.trim().split_once(':').ok_or_else(invalid)?;
    let digits = |s: &str| !s.is_empty() && s.len() <= 2 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(h) || m.len() != 2 || !digits(m) {
        return Err(invalid());
    }
    let time = (
        h.parse().map_err(|_| invalid())?,
        m.parse().map_err(|_| invalid())?,
    );
    check(which, time).map_err(|_| invalid())?;
    Ok(time)
}

fn check(which: &'static str, (h, m): (u8, u8)) -> Result<(), ScheduleError> {
    if h > 23 || m > 59 {
        return Err(ScheduleError::InvalidTime {
            which,
            value: format!("{h:02}:{m:02}"),
        });
    }
    Ok(())
}

fn hm((h, m): (u8, u8)) -> String {
    format!("{h:02}:{m:02}")
}

fn at(date: Date, (h, m): (u8, u8)) -> DateTime {
    // In range: checked by `new`.
    date.at(h as i8, m as i8, 0, 0)
}

/// The first instant at which the local clock shows `dt` or later: `dt` itself when it
/// exists once, its first occurrence in a fold, and the end of the gap when the clocks
/// jump over it (02:30 on a spring-forward night is 03:00 new time, not 03:30).
fn first_instant_at_or_after(tz: &TimeZone, dt: DateTime) -> Result<Timestamp, jiff::Error> {
    let ambiguous = tz.to_ambiguous_timestamp(dt);
    match ambiguous.offset() {
        AmbiguousOffset::Gap { after, .. } => {
            // Read with the post-gap offset, `dt` lands just before the transition; the
            // next transition from there is the jump itself.
            let before_jump = after.to_timestamp(dt)?;
            match tz.following(before_jump).next() {
                Some(jump) => Ok(jump.timestamp()),
                None => ambiguous.compatible(),
            }
        }
        _ => ambiguous.earlier(),
    }
}
