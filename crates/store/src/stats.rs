//! Counters for status and the dashboard, plus the integrity check.

use serde::Serialize;

use crate::body_check::body_part_findings;
use crate::error::StoreError;
use crate::open::Store;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct StoreStats {
    pub turns: u64,
    pub sessions: u64,
    /// Sessions with no end recorded.
    pub open_sessions: u64,
    /// Turns that failed: an error was noted or the client got a 4xx/5xx.
    pub errors: u64,
}

impl Store {
    pub fn stats(&self) -> Result<StoreStats, StoreError> {
        let stats = self.conn.query_row(
            "SELECT
                 (SELECT COUNT(*) FROM turns),
                 (SELECT COUNT(*) FROM sessions),
                 (SELECT COUNT(*) FROM sessions WHERE ended_at_ms IS NULL),
                 (SELECT COUNT(*) FROM turns WHERE error IS NOT NULL OR status >= 400)",
            [],
            |row| {
                Ok(StoreStats {
                    turns: row.get(0)?,
                    sessions: row.get(1)?,
                    open_sessions: row.get(2)?,
                    errors: row.get(3)?,
                })
            },
        )?;
        Ok(stats)
    }

    /// Runs SQLite's structural check, the foreign-key check and a recount of the stored
    /// parts' references (reads every body); any finding is an error.
    pub fn integrity_check(&self) -> Result<(), StoreError> {
        let mut findings: Vec<String> = self
            .conn
            .prepare("PRAGMA integrity_check")?
            .query_map([], |row| row.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .filter(|line| line != "ok")
            .collect();
        let fk = self
            .conn
            .prepare("PRAGMA foreign_key_check")?
            .query_map([], |row| {
                Ok(format!(
                    "row {} of {} references missing {}",
                    row.get::<_, Option<i64>>(1)?.unwrap_or_default(),
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(2)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        findings.extend(fk);
        findings.extend(body_part_findings(&self.conn)?);
        if findings.is_empty() {
            Ok(())
        } else {
            Err(StoreError::Integrity {
                path: self.path.clone(),
                details: findings.join("; "),
            })
        }
    }
}
