//! What learning cost, per UTC day and purpose (schema v7): counts are added to a day's row,
//! so the engine writes only what changed since its last write.

use rusqlite::{TransactionBehavior, params};
use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::open::Store;

/// Calls of one purpose on one day and their tokens (`input_tokens` includes cache reads and
/// writes, as in `turns`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LearningUsage {
    /// `YYYY-MM-DD`, UTC.
    pub day: String,
    pub purpose: String,
    pub calls: u64,
    pub failed: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
}

impl LearningUsage {
    /// Adds `other`'s counts (the day and purpose stay).
    pub fn add(&mut self, other: &LearningUsage) {
        self.calls += other.calls;
        self.failed += other.failed;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }
}

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Store {
    /// Adds each row's counts to its day and purpose, in one transaction.
    pub fn add_learning_usage(&mut self, rows: &[LearningUsage]) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO learning_usage (day, purpose, calls, failed, input_tokens,
                     output_tokens, cache_read_tokens, cache_write_tokens)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (day, purpose) DO UPDATE SET
                     calls = calls + excluded.calls,
                     failed = failed + excluded.failed,
                     input_tokens = input_tokens + excluded.input_tokens,
                     output_tokens = output_tokens + excluded.output_tokens,
                     cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
                     cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens",
            )?;
            for r in rows {
                stmt.execute(params![
                    r.day,
                    r.purpose,
                    int(r.calls),
                    int(r.failed),
                    int(r.input_tokens),
                    int(r.output_tokens),
                    int(r.cache_read_tokens),
                    int(r.cache_write_tokens),
                ])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Every day from `since` (`YYYY-MM-DD`) on, oldest first, purposes in name order.
    pub fn learning_usage_since(&self, since: &str) -> Result<Vec<LearningUsage>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT day, purpose, calls, failed, input_tokens, output_tokens, cache_read_tokens,
                 cache_write_tokens
             FROM learning_usage WHERE day >= ?1 ORDER BY day, purpose",
        )?;
        let rows = stmt.query_map([since], |row| {
            Ok(LearningUsage {
                day: row.get(0)?,
                purpose: row.get(1)?,
                calls: row.get(2)?,
                failed: row.get(3)?,
                input_tokens: row.get(4)?,
                output_tokens: row.get(5)?,
                cache_read_tokens: row.get(6)?,
                cache_write_tokens: row.get(7)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
