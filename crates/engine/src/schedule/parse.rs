//! What the user types for a pause: a duration (`30m`, `2h`, `1h30m`, `1d`) or a time to
//! pause until (`18:00`, the next one; `2026-12-24T09:00`, local; or RFC 3339 with an
//! offset). Shared by the CLI and the admin API so both accept the same words.

use jiff::civil::{DateTime, Time};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};

/// Longer pauses are almost certainly typos; "until resumed" covers the rest.
const MAX_DAYS: i64 = 366;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error(
        "{0:?} is not a duration: use a number with a unit, like 30m, 2h, 1h30m or 1d (d = days, h = hours, m = minutes)"
    )]
    Duration(String),
    #[error("a pause must last at least a minute (got {0:?})")]
    TooShort(String),
    #[error(
        "{0:?} is longer than {MAX_DAYS} days; pause without a duration to pause until resumed"
    )]
    TooLong(String),
    #[error(
        "{0:?} is not a time: use HH:MM (the next one, local time), a local date and time like 2026-12-24T09:00, or RFC 3339 like 2026-12-24T09:00:00+01:00"
    )]
    Time(String),
    #[error("{0} is in the past")]
    Past(String),
    #[error("give a duration (for) or an end time (until), not both")]
    Both,
}

/// When a pause asked for as `--for D` or `--until T` (at most one) ends: `None` is until
/// resumed.
pub fn pause_end(
    duration: Option<&str>,
    until_text: Option<&str>,
    now: Timestamp,
    tz: &TimeZone,
) -> Result<Option<Timestamp>, ParseError> {
    match (duration, until_text) {
        (Some(_), Some(_)) => Err(ParseError::Both),
        (Some(d), None) => {
            let d = self::duration(d)?;
            now.checked_add(d)
                .map(Some)
                .map_err(|_| ParseError::TooLong(d.to_string()))
        }
        (None, Some(t)) => until(t, now, tz).map(Some),
        (None, None) => Ok(None),
    }
}

/// [`pause_end`] at this machine's clock and time zone.
pub fn pause_end_now(
    duration: Option<&str>,
    until_text: Option<&str>,
) -> Result<Option<Timestamp>, ParseError> {
    use metaclaw_schedule::clock::{Clock, SystemClock};
    pause_end(
        duration,
        until_text,
        SystemClock.now(),
        &SystemClock.time_zone(),
    )
}

/// `30m`, `2h`, `1h30m`, `1d`, `1d 2h` (spaces ignored, units d/h/m, case-insensitive).
pub fn duration(text: &str) -> Result<SignedDuration, ParseError> {
    let bad = || ParseError::Duration(text.to_string());
    let compact: String = text
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    if compact.is_empty() {
        return Err(bad());
    }
    let mut minutes: i64 = 0;
    let mut number = String::new();
    let mut last_unit = u8::MAX;
    for c in compact.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        // Units in decreasing order, each at most once: "1h30m", not "30m1h" or "1h1h".
        let (rank, per) = match c {
            'd' => (0, 24 * 60),
            'h' => (1, 60),
            'm' => (2, 1),
            _ => return Err(bad()),
        };
        if number.is_empty() || (last_unit != u8::MAX && rank <= last_unit) {
            return Err(bad());
        }
        let n: i64 = number.parse().map_err(|_| bad())?;
        minutes = n
            .checked_mul(per)
            .and_then(|m| minutes.checked_add(m))
            .ok_or_else(|| ParseError::TooLong(text.to_string()))?;
        number.clear();
        last_unit = rank;
    }
    if !number.is_empty() {
        return Err(bad());
    }
    if minutes < 1 {
        return Err(ParseError::TooShort(text.to_string()));
    }
    if minutes > MAX_DAYS * 24 * 60 {
        return Err(ParseError::TooLong(text.to_string()));
    }
    Ok(SignedDuration::from_mins(minutes))
}

/// When a pause given as a time ends, seen from `now` in `tz`: `HH:MM` is the next such
/// local time (tomorrow's if it has passed today); a local date-time (`T` or a space
/// between) is read in `tz`; RFC 3339 with an offset is taken as is. In a DST gap the
/// later valid time is used.
pub fn until(text: &str, now: Timestamp, tz: &TimeZone) -> Result<Timestamp, ParseError> {
    let t = text.trim();
    let bad = || ParseError::Time(text.to_string());
    let at = if let Ok(ts) = t.parse::<Timestamp>() {
        ts
    } else if let Some(time) = time_of_day(t) {
        next_at(time, now, tz).ok_or_else(bad)?
    } else {
        let dt: DateTime = t.replacen(' ', "T", 1).parse().map_err(|_| bad())?;
        tz.to_zoned_datetime(dt).map_err(|_| bad())?.timestamp()
    };
    if at <= now {
        return Err(ParseError::Past(text.trim().to_string()));
    }
    Ok(at)
}

/// `H:MM` or `HH:MM` only: jiff would also read `18` or `18:00:30`.
fn time_of_day(t: &str) -> Option<Time> {
    let (h, m) = t.split_once(':')?;
    if h.is_empty() || h.len() > 2 || m.len() != 2 {
        return None;
    }
    let (h, m): (i8, i8) = (h.parse().ok()?, m.parse().ok()?);
    Time::new(h, m, 0, 0).ok()
}

fn next_at(time: Time, now: Timestamp, tz: &TimeZone) -> Option<Timestamp> {
    let today = now.to_zoned_datetime(tz.clone()).date();
    let mut day = today;
    // Two tries: today, else tomorrow (a time in a DST gap still resolves, later).
    for _ in 0..2 {
        let at = tz
            .to_zoned_datetime(day.to_datetime(time))
            .ok()?
            .timestamp();
        if at > now {
            return Some(at);
        }
        day = day.tomorrow().ok()?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn durations() {
        let cases = [
            ("30m", 30),
            ("2h", 120),
            ("1h30m", 90),
            ("1d", 1440),
            ("1d 2h", 1560),
            ("90M", 90),
        ];
        for (text, mins) in cases {
            assert_eq!(
                duration(text),
                Ok(SignedDuration::from_mins(mins)),
                "{text}"
            );
        }
        for bad in ["", "2", "h", "2x", "30m1h", "1h1h", "-5m", "1.5h"] {
            assert!(
                matches!(duration(bad), Err(ParseError::Duration(_))),
                "{bad}: {:?}",
                duration(bad)
            );
        }
        assert_eq!(duration("0m"), Err(ParseError::TooShort("0m".into())));
        assert_eq!(duration("400d"), Err(ParseError::TooLong("400d".into())));
        assert!(matches!(
            duration("99999999999999999999d"),
            Err(ParseError::Duration(_) | ParseError::TooLong(_))
        ));
    }

    #[test]
    fn pause_ends() {
        let tz = TimeZone::UTC;
        let now = ts("2026-12-03T10:00:00Z");
        assert_eq!(pause_end(None, None, now, &tz), Ok(None));
        assert_eq!(
            pause_end(Some("1h30m"), None, now, &tz),
            Ok(Some(ts("2026-12-03T11:30:00Z")))
        );
        assert_eq!(
            pause_end(None, Some("18:00"), now, &tz),
            Ok(Some(ts("2026-12-03T18:00:00Z")))
        );
        assert_eq!(
            pause_end(Some("1h"), Some("18:00"), now, &tz),
            Err(ParseError::Both)
        );
    }

    #[test]
    fn clock_times_are_the_next_one() {
        let tz = TimeZone::UTC;
        let now = ts("2026-12-03T10:00:00Z");
        assert_eq!(until("18:00", now, &tz), Ok(ts("2026-12-03T18:00:00Z")));
        // Passed today: tomorrow's.
        assert_eq!(until("9:30", now, &tz), Ok(ts("2026-12-04T09:30:00Z")));
        // Exactly now is not in the future: tomorrow's.
        assert_eq!(until("10:00", now, &tz), Ok(ts("2026-12-04T10:00:00Z")));
        for bad in ["25:00", "18", "18:00:30", "tomorrow", "12:5"] {
            assert_eq!(
                until(bad, now, &tz),
                Err(ParseError::Time(bad.into())),
                "{bad}"
            );
        }
    }

    #[test]
    fn local_and_offset_date_times() -> Result<(), jiff::Error> {
        let tz = TimeZone::get("Europe/Paris")?;
        let now = ts("2026-12-03T10:00:00Z");
        // 09:00 in Paris in winter is 08:00 UTC.
        assert_eq!(
            until("2026-12-24T09:00", now, &tz),
            Ok(ts("2026-12-24T08:00:00Z"))
        );
        assert_eq!(
            until("2026-12-24 09:00", now, &tz),
            Ok(ts("2026-12-24T08:00:00Z"))
        );
        assert_eq!(
            until("2026-12-24T09:00:00Z", now, &tz),
            Ok(ts("2026-12-24T09:00:00Z"))
        );
        assert_eq!(
            until("2026-12-01T09:00", now, &tz),
            Err(ParseError::Past("2026-12-01T09:00".into()))
        );
        // "18:00" is read in the user's zone: 17:00 UTC.
        assert_eq!(until("18:00", now, &tz), Ok(ts("2026-12-03T17:00:00Z")));
        Ok(())
    }

    #[test]
    fn a_time_in_a_dst_gap_resolves_later() -> Result<(), jiff::Error> {
        // 2027-03-28 02:30 does not exist in Paris (clocks jump 02:00 -> 03:00).
        let tz = TimeZone::get("Europe/Paris")?;
        let now = ts("2027-03-27T12:00:00Z");
        assert_eq!(until("02:30", now, &tz), Ok(ts("2027-03-28T01:30:00Z")));
        Ok(())
    }
}
