//! The CLI's own output: results on stdout, problems on stderr.

use std::io::{ErrorKind, Write};

/// One line of results. A reader that went away (`metaclaw status | head -4`) ends the
/// command quietly, as standard tools do, instead of a panic about a broken pipe.
pub fn line(s: impl std::fmt::Display) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{s}")
        && e.kind() == ErrorKind::BrokenPipe
    {
        std::process::exit(0);
    }
}

pub fn error(s: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr().lock(), "error: {s}");
}

/// Local time to the second, or the raw number when the clock cannot be read.
pub fn local_time(ms: i64) -> String {
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    let utc = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000);
    let offset = time::UtcOffset::current_local_offset().unwrap_or(time::UtcOffset::UTC);
    utc.ok()
        .and_then(|t| t.to_offset(offset).format(&format).ok())
        .unwrap_or_else(|| ms.to_string())
}
