//! The version history and the audit log, written inside the caller's transaction so a
//! change and its records commit together.

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};

use super::row::{signed, to_json};
use crate::MemoryError;
use crate::unit::MemoryUnit;

/// What an audit event records. Access is deliberately not audited (too frequent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Create,
    Update,
    Supersede,
    Pin,
    Unpin,
    Archive,
    Restore,
    Purge,
    Import,
}

impl Action {
    const ALL: [Action; 9] = [
        Action::Create,
        Action::Update,
        Action::Supersede,
        Action::Pin,
        Action::Unpin,
        Action::Archive,
        Action::Restore,
        Action::Purge,
        Action::Import,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::Supersede => "supersede",
            Action::Pin => "pin",
            Action::Unpin => "unpin",
            Action::Archive => "archive",
            Action::Restore => "restore",
            Action::Purge => "purge",
            Action::Import => "import",
        }
    }

    pub fn parse(s: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

/// Snapshots `unit` as its current version.
pub(crate) fn write_version(
    conn: &Connection,
    unit: &MemoryUnit,
    actor: &str,
) -> Result<(), MemoryError> {
    conn.prepare_cached(
        "INSERT INTO memory_versions (memory_id, version, kind, content, summary, fact_key,
             importance, confidence, pinned, tags, entities, status, superseded_by, expires_ms,
             changed_ms, actor)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
    )?
    .execute(params![
        unit.id,
        signed(unit.version)?,
        unit.kind.as_str(),
        unit.content,
        unit.summary,
        unit.fact_key,
        f64::from(unit.importance),
        f64::from(unit.confidence),
        unit.pinned,
        to_json(&unit.tags),
        to_json(&unit.entities),
        unit.status.as_str(),
        unit.superseded_by,
        unit.expires_ms,
        unit.updated_ms,
        actor,
    ])?;
    Ok(())
}

/// Appends one audit event. `detail` must never carry content for a purge.
pub(crate) fn write_event(
    conn: &Connection,
    at_ms: i64,
    unit: &MemoryUnit,
    action: Action,
    actor: &str,
    detail: serde_json::Value,
) -> Result<(), MemoryError> {
    conn.prepare_cached(
        "INSERT INTO memory_events (at_ms, memory_id, scope, action, actor, detail)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        at_ms,
        unit.id,
        unit.scope,
        action.as_str(),
        actor,
        detail.to_string()
    ])?;
    Ok(())
}
