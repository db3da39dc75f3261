//! Writing a changed unit back: the row, its new version and its audit event together.

use rusqlite::{Connection, params};

use super::journal::{Action, write_event, write_version};
use super::row::{signed, to_json};
use crate::MemoryError;
use crate::unit::MemoryUnit;

/// Persists `next` as version `prev_version + 1` (the caller has already bumped
/// `next.version` and `next.updated_ms`), then records the version and the event.
pub(crate) fn save_change(
    conn: &Connection,
    next: &MemoryUnit,
    prev_version: u64,
    action: Action,
    actor: &str,
    detail: serde_json::Value,
) -> Result<(), MemoryError> {
    // The version guard makes a lost update impossible even without the caller's check.
    let changed = conn
        .prepare_cached(
            "UPDATE memory_units SET kind = ?1, content = ?2, summary = ?3, fact_key = ?4,
                 importance = ?5, confidence = ?6, pinned = ?7, status = ?8,
                 superseded_by = ?9, tags = ?10, entities = ?11, expires_ms = ?12,
                 updated_ms = ?13, version = ?14
             WHERE id = ?15 AND version = ?16",
        )?
        .execute(params![
            next.kind.as_str(),
            next.content,
            next.summary,
            next.fact_key,
            f64::from(next.importance),
            f64::from(next.confidence),
            next.pinned,
            next.status.as_str(),
            next.superseded_by,
            to_json(&next.tags),
            to_json(&next.entities),
            next.expires_ms,
            next.updated_ms,
            signed(next.version)?,
            next.id,
            signed(prev_version)?,
        ])?;
    if changed == 0 {
        return Err(MemoryError::NotFound(next.id.clone()));
    }
    write_version(conn, next, actor)?;
    write_event(conn, next.updated_ms, next, action, actor, detail)
}
