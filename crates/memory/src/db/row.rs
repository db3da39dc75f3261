//! Reading a `memory_units` row into a [`MemoryUnit`].

use rusqlite::Row;
use rusqlite::types::Type;

use crate::unit::{Kind, MemoryUnit, Source, Status};

/// The columns [`unit_from_row`] expects, in order. Prefix-free so it can be used as
/// `SELECT {COLUMNS} FROM memory_units`.
pub(crate) const COLUMNS: &str = "id, scope, kind, content, summary, fact_key, importance, \
     confidence, pinned, status, superseded_by, source, source_session, source_turn, tags, \
     entities, access_count, last_accessed_ms, created_ms, updated_ms, expires_ms, version";

pub(crate) fn unit_from_row(row: &Row<'_>) -> rusqlite::Result<MemoryUnit> {
    Ok(MemoryUnit {
        id: row.get(0)?,
        scope: row.get(1)?,
        kind: parse(row, 2, Kind::parse)?,
        content: row.get(3)?,
        summary: row.get(4)?,
        fact_key: row.get(5)?,
        importance: row.get::<_, f64>(6)? as f32,
        confidence: row.get::<_, f64>(7)? as f32,
        pinned: row.get(8)?,
        status: parse(row, 9, Status::parse)?,
        superseded_by: row.get(10)?,
        source: parse(row, 11, Source::parse)?,
        source_session: row.get(12)?,
        source_turn: row
            .get::<_, Option<i64>>(13)?
            .map(|t| unsigned(13, t))
            .transpose()?,
        tags: json_list(row, 14)?,
        entities: json_list(row, 15)?,
        access_count: unsigned(16, row.get(16)?)?,
        last_accessed_ms: row.get(17)?,
        created_ms: row.get(18)?,
        updated_ms: row.get(19)?,
        expires_ms: row.get(20)?,
        version: unsigned(21, row.get(21)?)?,
    })
}

/// A text column holding one of an enum's names.
pub(crate) fn parse<T>(
    row: &Row<'_>,
    idx: usize,
    from: impl Fn(&str) -> Option<T>,
) -> rusqlite::Result<T> {
    let text: String = row.get(idx)?;
    from(&text).ok_or_else(|| bad(idx, format!("unknown value {text:?}")))
}

/// A JSON array of strings stored as text.
pub(crate) fn json_list(row: &Row<'_>, idx: usize) -> rusqlite::Result<Vec<String>> {
    let text: String = row.get(idx)?;
    serde_json::from_str(&text).map_err(|e| bad(idx, e.to_string()))
}

pub(crate) fn unsigned(idx: usize, v: i64) -> rusqlite::Result<u64> {
    u64::try_from(v).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(idx, v))
}

fn bad(idx: usize, msg: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(idx, Type::Text, msg.into())
}

/// Serialises a string list for a JSON column.
pub(crate) fn to_json(list: &[String]) -> String {
    serde_json::Value::from(list.to_vec()).to_string()
}

/// u64 counters and turn numbers as SQLite integers.
pub(crate) fn signed(v: u64) -> Result<i64, crate::MemoryError> {
    i64::try_from(v).map_err(|_| crate::MemoryError::Invalid(format!("{v} is too large")))
}
