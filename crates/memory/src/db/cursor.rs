//! Keyset pagination cursors: the sort key and rowid of the last unit of a page, so the
//! next page starts strictly after it however many units were added meanwhile.

use rusqlite::types::Value;

use super::list::SortBy;
use crate::MemoryError;

/// Where the previous page ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cursor {
    pub key: Value,
    pub rowid: i64,
}

/// `<sort>.<key as 16 hex digits of its bits>.<rowid>`: opaque to callers, exact for REAL
/// keys, and tied to its sort so a cursor from another sort is refused.
pub(crate) fn encode(sort: SortBy, key: &Value, rowid: i64) -> String {
    let bits = match key {
        Value::Real(f) => f.to_bits(),
        Value::Integer(i) => *i as u64,
        _ => 0,
    };
    format!("{}.{bits:016x}.{rowid}", sort.as_str())
}

pub(crate) fn decode(sort: SortBy, text: &str) -> Result<Cursor, MemoryError> {
    let invalid =
        || MemoryError::Invalid(format!("bad cursor {text:?} for sort {}", sort.as_str()));
    let mut parts = text.split('.');
    let (Some(name), Some(bits), Some(rowid), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid());
    };
    if name != sort.as_str() {
        return Err(invalid());
    }
    let bits = u64::from_str_radix(bits, 16).map_err(|_| invalid())?;
    let rowid = rowid.parse().map_err(|_| invalid())?;
    let key = if sort.real_key() {
        Value::Real(f64::from_bits(bits))
    } else {
        Value::Integer(bits as i64)
    };
    Ok(Cursor { key, rowid })
}
