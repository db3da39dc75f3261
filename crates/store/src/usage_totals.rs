//! Token totals of the turns in a time window, per model: what status, `/api/stats` and the
//! dashboard price and turn into a cache-read share. Summed in SQL over the creation-time
//! index, so a window of a million turns is one pass.

use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::open::Store;

/// The turns of one model in a window. Token convention as in `turns`: `input_tokens` is the
/// whole prompt, cache reads and writes included.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelUsage {
    pub model: String,
    pub turns: u64,
    /// Turns whose provider reported token counts.
    pub turns_with_usage: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// The prompt tokens of the turns whose provider reported its cache: the denominator
    /// of a cache-read share (turns that said nothing about the cache are left out of it).
    pub cache_reported_input_tokens: u64,
    /// `injected_tokens` and `block_tokens` of the turns whose provider reported its cache.
    pub cache_reported_injected_tokens: u64,
    pub cache_reported_block_tokens: u64,
    /// Estimated tokens of MetaClaw's blocks in the forwarded requests.
    pub injected_tokens: u64,
    /// Estimated tokens of each turn's own new block (the rest of `injected_tokens` is
    /// blocks resent with earlier messages).
    pub block_tokens: u64,
}

impl ModelUsage {
    /// Adds `other`'s counts (the model name stays).
    pub fn add(&mut self, other: &ModelUsage) {
        self.turns += other.turns;
        self.turns_with_usage += other.turns_with_usage;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.cache_reported_input_tokens += other.cache_reported_input_tokens;
        self.cache_reported_injected_tokens += other.cache_reported_injected_tokens;
        self.cache_reported_block_tokens += other.cache_reported_block_tokens;
        self.injected_tokens += other.injected_tokens;
        self.block_tokens += other.block_tokens;
    }
}

impl Store {
    /// Totals per model of the turns created in `[from_ms, to_ms)`, most prompt tokens first.
    pub fn usage_by_model(&self, from_ms: i64, to_ms: i64) -> Result<Vec<ModelUsage>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT model, COUNT(*),
                    COUNT(input_tokens),
                    COALESCE(SUM(input_tokens), 0),
                    COALESCE(SUM(output_tokens), 0),
                    COALESCE(SUM(cache_read_tokens), 0),
                    COALESCE(SUM(cache_write_tokens), 0),
                    COALESCE(SUM(CASE WHEN cache_read_tokens IS NOT NULL
                                      THEN input_tokens END), 0),
                    COALESCE(SUM(CASE WHEN cache_read_tokens IS NOT NULL
                                      THEN injected_tokens END), 0),
                    COALESCE(SUM(CASE WHEN cache_read_tokens IS NOT NULL
                                      THEN block_tokens END), 0),
                    COALESCE(SUM(injected_tokens), 0),
                    COALESCE(SUM(block_tokens), 0)
             FROM turns WHERE created_at_ms >= ?1 AND created_at_ms < ?2
             GROUP BY model ORDER BY 4 DESC, model",
        )?;
        let rows = stmt.query_map([from_ms, to_ms], |row| {
            Ok(ModelUsage {
                model: row.get(0)?,
                turns: row.get(1)?,
                turns_with_usage: row.get(2)?,
                input_tokens: row.get(3)?,
                output_tokens: row.get(4)?,
                cache_read_tokens: row.get(5)?,
                cache_write_tokens: row.get(6)?,
                cache_reported_input_tokens: row.get(7)?,
                cache_reported_injected_tokens: row.get(8)?,
                cache_reported_block_tokens: row.get(9)?,
                injected_tokens: row.get(10)?,
                block_tokens: row.get(11)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
