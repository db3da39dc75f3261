//! Per-turn usage and injection figures (schema v6), read apart from [`crate::TurnRow`] so
//! code that reads turns for learning does not carry them.

use rusqlite::Row;
use serde::Serialize;

use crate::error::StoreError;
use crate::open::Store;
use crate::turns::{TurnId, skills_from_json};

/// What one turn cost and what MetaClaw added to it. Token convention: see
/// `migrations_usage` (`input_tokens` is the whole prompt, cache reads and writes included).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnUsageRow {
    pub id: TurnId,
    pub session_id: String,
    pub turn_index: u64,
    pub turn_type: String,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// NULL for turns stored before schema v6 or whose provider did not say.
    pub cache_read_tokens: Option<u64>,
    pub cache_write_tokens: Option<u64>,
    /// Estimated tokens of every MetaClaw block in the forwarded request.
    pub injected_tokens: Option<u64>,
    /// Estimated tokens of the block carrying `injected_skills` and `injected_memories`.
    pub block_tokens: Option<u64>,
    pub injected_skills: Vec<String>,
    pub injected_memories: Vec<String>,
}

const COLUMNS: &str = "id, session_id, turn_index, turn_type, input_tokens, output_tokens,
    cache_read_tokens, cache_write_tokens, injected_tokens, block_tokens, injected_skills,
    injected_memories";

impl Store {
    /// One session's turns' figures, in order.
    pub fn session_usage(&self, session_id: &str) -> Result<Vec<TurnUsageRow>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM turns WHERE session_id = ?1 ORDER BY turn_index");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map([session_id], usage_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The newest `limit` turns' figures, newest first.
    pub fn recent_usage(&self, limit: usize) -> Result<Vec<TurnUsageRow>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM turns ORDER BY id DESC LIMIT ?1");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map([limit], usage_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

fn usage_row(row: &Row<'_>) -> rusqlite::Result<TurnUsageRow> {
    Ok(TurnUsageRow {
        id: TurnId(row.get(0)?),
        session_id: row.get(1)?,
        turn_index: row.get(2)?,
        turn_type: row.get(3)?,
        input_tokens: row.get(4)?,
        output_tokens: row.get(5)?,
        cache_read_tokens: row.get(6)?,
        cache_write_tokens: row.get(7)?,
        injected_tokens: row.get(8)?,
        block_tokens: row.get(9)?,
        injected_skills: skills_from_json(row.get(10)?),
        injected_memories: skills_from_json(row.get(11)?),
    })
}
