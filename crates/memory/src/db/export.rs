//! JSONL export: one [`MemoryUnit`] per line with its serde field names, which are the
//! stable export format (import reads the same shape).

use std::io::Write;

use rusqlite::Connection;

use super::row::{COLUMNS, unit_from_row};
use crate::MemoryError;

/// Writes the units of `scope` (or every scope), oldest first; archived and superseded
/// ones only with `include_inactive`. Returns how many lines were written.
pub fn export_jsonl(
    conn: &Connection,
    scope: Option<&str>,
    include_inactive: bool,
    out: &mut impl Write,
) -> Result<u64, MemoryError> {
    let scope_filter = if scope.is_some() {
        "scope = ?1"
    } else {
        "?1 IS NULL"
    };
    let status_filter = if include_inactive {
        ""
    } else {
        " AND status = 'active'"
    };
    let sql = format!(
        "SELECT {COLUMNS} FROM memory_units WHERE {scope_filter}{status_filter}
         ORDER BY created_ms, id"
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([scope])?;
    let mut written = 0;
    while let Some(row) = rows.next()? {
        let unit = unit_from_row(row)?;
        serde_json::to_writer(&mut *out, &unit).map_err(std::io::Error::from)?;
        out.write_all(b"\n")?;
        written += 1;
    }
    out.flush()?;
    Ok(written)
}
