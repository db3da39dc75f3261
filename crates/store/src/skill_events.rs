//! The skill evolution log: one row per evolver run, whatever its outcome.

use rusqlite::{Row, params};
use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::open::Store;

/// A skill the evolver proposed but did not keep, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RejectedSkill {
    pub name: String,
    pub reason: String,
}

/// One evolver run to record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewSkillEvent {
    pub at_ms: i64,
    /// What started the run (free text, e.g. "session_end", "manual").
    pub trigger: String,
    pub session_ids: Vec<String>,
    pub model: Option<String>,
    /// Free text such as "added", "nothing", "failed"; "failed" is counted separately.
    pub outcome: String,
    pub added: Vec<String>,
    pub improved: Vec<String>,
    pub rejected: Vec<RejectedSkill>,
    pub error: Option<String>,
    pub generation: i64,
    pub detail: serde_json::Value,
}

/// A stored evolver run.
#[derive(Debug, Clone, Serialize)]
pub struct SkillEventRow {
    pub id: i64,
    pub at_ms: i64,
    pub trigger: String,
    pub session_ids: Vec<String>,
    pub model: Option<String>,
    pub outcome: String,
    pub added: Vec<String>,
    pub improved: Vec<String>,
    pub rejected: Vec<RejectedSkill>,
    pub error: Option<String>,
    pub generation: i64,
    pub detail: serde_json::Value,
}

/// Totals over the whole log, for status displays.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct SkillEventCounts {
    pub events: u64,
    pub failed: u64,
    pub skills_added: u64,
    pub skills_improved: u64,
    pub last_at_ms: Option<i64>,
}

impl Store {
    /// Appends an event; returns its id.
    pub fn insert_skill_event(&mut self, e: &NewSkillEvent) -> Result<i64, StoreError> {
        self.conn
            .prepare_cached(
                "INSERT INTO skill_events (at_ms, \"trigger\", session_ids, model, outcome,
                     added, improved, rejected, error, generation, detail)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?
            .execute(params![
                e.at_ms,
                e.trigger,
                to_json(&e.session_ids),
                e.model,
                e.outcome,
                to_json(&e.added),
                to_json(&e.improved),
                to_json(&e.rejected),
                e.error,
                e.generation,
                to_json(&e.detail),
            ])?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The newest `limit` events, newest first.
    pub fn skill_events(&self, limit: usize) -> Result<Vec<SkillEventRow>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, at_ms, \"trigger\", session_ids, model, outcome, added, improved,
                 rejected, error, generation, detail
             FROM skill_events ORDER BY at_ms DESC, id DESC LIMIT ?1",
        )?;
        let rows = stmt.query_map([limit], event_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Totals over all events.
    pub fn skill_event_counts(&self) -> Result<SkillEventCounts, StoreError> {
        let counts = self
            .conn
            .prepare_cached(
                "SELECT COUNT(*),
                     COALESCE(SUM(outcome = 'failed'), 0),
                     COALESCE(SUM(json_array_length(added)), 0),
                     COALESCE(SUM(json_array_length(improved)), 0),
                     MAX(at_ms)
                 FROM skill_events",
            )?
            .query_row([], |row| {
                Ok(SkillEventCounts {
                    events: row.get(0)?,
                    failed: row.get(1)?,
                    skills_added: row.get(2)?,
                    skills_improved: row.get(3)?,
                    last_at_ms: row.get(4)?,
                })
            })?;
        Ok(counts)
    }
}

fn to_json<T: Serialize + ?Sized>(value: &T) -> String {
    // Serialising plain strings, lists and `Value`s cannot fail; "null" keeps the row valid.
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
}

/// Unreadable JSON cells read as empty: one damaged row must not hide the whole log.
fn from_json<T: for<'de> Deserialize<'de> + Default>(raw: &str) -> T {
    serde_json::from_str(raw).unwrap_or_default()
}

fn event_row(row: &Row<'_>) -> rusqlite::Result<SkillEventRow> {
    Ok(SkillEventRow {
        id: row.get(0)?,
        at_ms: row.get(1)?,
        trigger: row.get(2)?,
        session_ids: from_json(&row.get::<_, String>(3)?),
        model: row.get(4)?,
        outcome: row.get(5)?,
        added: from_json(&row.get::<_, String>(6)?),
        improved: from_json(&row.get::<_, String>(7)?),
        rejected: from_json(&row.get::<_, String>(8)?),
        error: row.get(9)?,
        generation: row.get(10)?,
        detail: from_json(&row.get::<_, String>(11)?),
    })
}
