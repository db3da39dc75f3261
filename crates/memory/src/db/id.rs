//! Unit ids: 12 hex digits of unix ms then 8 random hex digits, so ids sort by creation
//! time and two units made in the same millisecond still differ.

use rusqlite::Connection;

/// A fresh id for a unit created at `now_ms`. Randomness comes from SQLite's
/// `randomblob`, which saves a dependency.
pub(crate) fn new_id(conn: &Connection, now_ms: i64) -> rusqlite::Result<String> {
    let random: String = conn.query_row("SELECT lower(hex(randomblob(4)))", [], |r| r.get(0))?;
    Ok(format!("{:012x}{random}", now_ms.max(0)))
}
