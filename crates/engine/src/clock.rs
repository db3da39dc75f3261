//! Wall-clock time as the engine stores and reports it: Unix milliseconds. A clock set
//! before 1970 reads as 0, one past the year 292 million as `i64::MAX`.

use std::time::{SystemTime, UNIX_EPOCH};

pub fn unix_ms(at: SystemTime) -> i64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// [`unix_ms`] of now.
pub fn now_ms() -> i64 {
    unix_ms(SystemTime::now())
}
