//! Session rows: opened by the first event or turn, closed by an end event.

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use crate::error::StoreError;
use crate::open::Store;

/// A stored session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionRow {
    pub id: String,
    pub scope: String,
    pub started_at_ms: i64,
    pub last_turn_at_ms: i64,
    pub ended_at_ms: Option<i64>,
    pub end_reason: Option<String>,
    pub main_turns: u64,
    pub side_turns: u64,
}

impl Store {
    /// Records that a session started. A session that already exists keeps its history;
    /// if it had ended (e.g. idle) it is open again, since the conversation resumed.
    pub fn session_started(&mut self, id: &str, scope: &str, at_ms: i64) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT INTO sessions (id, scope, started_at_ms, last_turn_at_ms)
                 VALUES (?1, ?2, ?3, ?3)
                 ON CONFLICT (id) DO UPDATE SET ended_at_ms = NULL, end_reason = NULL",
            )?
            .execute(params![id, scope, at_ms])?;
        Ok(())
    }

    /// Records that a session ended. Returns `false` when the session is unknown or already
    /// ended (the first end wins).
    pub fn session_ended(
        &mut self,
        id: &str,
        reason: &str,
        at_ms: i64,
    ) -> Result<bool, StoreError> {
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE sessions SET ended_at_ms = ?2, end_reason = ?3
                 WHERE id = ?1 AND ended_at_ms IS NULL",
            )?
            .execute(params![id, at_ms, reason])?;
        Ok(changed > 0)
    }

    /// One session, if it exists.
    pub fn session(&self, id: &str) -> Result<Option<SessionRow>, StoreError> {
        let row = self
            .conn
            .prepare_cached(
                "SELECT id, scope, started_at_ms, last_turn_at_ms, ended_at_ms, end_reason,
                     main_turns, side_turns
                 FROM sessions WHERE id = ?1",
            )?
            .query_row([id], |row| {
                Ok(SessionRow {
                    id: row.get(0)?,
                    scope: row.get(1)?,
                    started_at_ms: row.get(2)?,
                    last_turn_at_ms: row.get(3)?,
                    ended_at_ms: row.get(4)?,
                    end_reason: row.get(5)?,
                    main_turns: row.get(6)?,
                    side_turns: row.get(7)?,
                })
            })
            .optional()?;
        Ok(row)
    }
}
