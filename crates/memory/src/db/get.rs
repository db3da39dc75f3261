//! Reading units by id, by scope and by fact key.

use rusqlite::{Connection, OptionalExtension, params};

use super::row::{COLUMNS, unit_from_row};
use crate::MemoryError;
use crate::unit::{Kind, MemoryUnit};

/// The unit with this id, whatever its status.
pub fn get(conn: &Connection, id: &str) -> Result<Option<MemoryUnit>, MemoryError> {
    let sql = format!("SELECT {COLUMNS} FROM memory_units WHERE id = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([id], unit_from_row)
        .optional()?)
}

/// Active units of a scope (optionally of one kind), most recently edited first. Units past
/// `expires_ms` are included until consolidation archives them.
pub fn active_in_scope(
    conn: &Connection,
    scope: &str,
    kind: Option<Kind>,
    limit: u32,
) -> Result<Vec<MemoryUnit>, MemoryError> {
    let sql = format!(
        "SELECT {COLUMNS} FROM memory_units
         WHERE scope = ?1 AND status = 'active' AND (?2 IS NULL OR kind = ?2)
         ORDER BY updated_ms DESC, rowid DESC LIMIT ?3"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![scope, kind.map(Kind::as_str), limit], unit_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Active units of a scope holding this fact key, newest first: what reconciliation
/// supersedes when a new value for the same slot arrives.
pub fn by_fact_key(
    conn: &Connection,
    scope: &str,
    fact_key: &str,
) -> Result<Vec<MemoryUnit>, MemoryError> {
    // `+updated_ms`: without it SQLite walks the (scope, updated_ms) index to skip the sort,
    // reading every unit of the scope; a slot holds a handful of units, so the (scope,
    // fact_key) index and a tiny sort are far cheaper.
    let sql = format!(
        "SELECT {COLUMNS} FROM memory_units
         WHERE scope = ?1 AND fact_key = ?2 AND status = 'active'
         ORDER BY +updated_ms DESC, rowid DESC"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![scope, fact_key], unit_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Like [`get`], but a missing unit is [`MemoryError::NotFound`].
pub(crate) fn require(conn: &Connection, id: &str) -> Result<MemoryUnit, MemoryError> {
    get(conn, id)?.ok_or_else(|| MemoryError::NotFound(id.to_owned()))
}
