//! Reading the version history and the audit log.

use rusqlite::types::Value;
use rusqlite::{Connection, Row, params_from_iter};
use serde::{Deserialize, Serialize};

use super::journal::Action;
use super::row::{json_list, parse, unsigned};
use crate::MemoryError;
use crate::unit::{Kind, Status};

/// One stored version of a unit: everything an edit or a status change can touch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Version {
    pub memory_id: String,
    pub version: u64,
    pub kind: Kind,
    pub content: String,
    pub summary: String,
    pub fact_key: Option<String>,
    pub importance: f32,
    pub confidence: f32,
    pub pinned: bool,
    pub tags: Vec<String>,
    pub entities: Vec<String>,
    pub status: Status,
    pub superseded_by: Option<String>,
    pub expires_ms: Option<i64>,
    pub changed_ms: i64,
    pub actor: String,
}

/// One audit event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub id: i64,
    pub at_ms: i64,
    pub memory_id: String,
    pub scope: String,
    pub action: Action,
    pub actor: String,
    /// Small JSON object (changed field names, previous status...), never content.
    pub detail: serde_json::Value,
}

/// Which events to read, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventQuery {
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub memory_id: Option<String>,
    /// Only events older than this event id: the next page after the last one read.
    #[serde(default)]
    pub before_id: Option<i64>,
    /// 0 means 100; at most 1,000.
    #[serde(default)]
    pub limit: u32,
}

/// Every stored version of a unit, oldest first (empty once purged).
pub fn history(conn: &Connection, id: &str) -> Result<Vec<Version>, MemoryError> {
    let mut stmt = conn.prepare_cached(
        "SELECT memory_id, version, kind, content, summary, fact_key, importance, confidence,
             pinned, tags, entities, status, superseded_by, expires_ms, changed_ms, actor
         FROM memory_versions WHERE memory_id = ?1 ORDER BY version",
    )?;
    let rows = stmt.query_map([id], version_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn version_from_row(row: &Row<'_>) -> rusqlite::Result<Version> {
    Ok(Version {
        memory_id: row.get(0)?,
        version: unsigned(1, row.get(1)?)?,
        kind: parse(row, 2, Kind::parse)?,
        content: row.get(3)?,
        summary: row.get(4)?,
        fact_key: row.get(5)?,
        importance: row.get::<_, f64>(6)? as f32,
        confidence: row.get::<_, f64>(7)? as f32,
        pinned: row.get(8)?,
        tags: json_list(row, 9)?,
        entities: json_list(row, 10)?,
        status: parse(row, 11, Status::parse)?,
        superseded_by: row.get(12)?,
        expires_ms: row.get(13)?,
        changed_ms: row.get(14)?,
        actor: row.get(15)?,
    })
}

/// Audit events matching `q`, newest first.
pub fn events(conn: &Connection, q: &EventQuery) -> Result<Vec<Event>, MemoryError> {
    let mut clauses = Vec::new();
    let mut args = Vec::new();
    if let Some(scope) = &q.scope {
        clauses.push("scope = ?");
        args.push(Value::Text(scope.clone()));
    }
    if let Some(id) = &q.memory_id {
        clauses.push("memory_id = ?");
        args.push(Value::Text(id.clone()));
    }
    if let Some(before) = q.before_id {
        clauses.push("id < ?");
        args.push(Value::Integer(before));
    }
    let limit = match q.limit {
        0 => 100,
        n => n.min(1_000),
    };
    args.push(Value::Integer(i64::from(limit)));
    let filter = if clauses.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", clauses.join(" AND "))
    };
    let sql = format!(
        "SELECT id, at_ms, memory_id, scope, action, actor, detail FROM memory_events
         {filter} ORDER BY id DESC LIMIT ?"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(args), |row| {
        let detail: String = row.get(6)?;
        Ok(Event {
            id: row.get(0)?,
            at_ms: row.get(1)?,
            memory_id: row.get(2)?,
            scope: row.get(3)?,
            action: parse(row, 4, Action::parse)?,
            actor: row.get(5)?,
            detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::Null),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
