//! Time series for the dashboard's charts, aggregated in SQL: one row per bucket, however
//! many turns or memory units there are.

use serde::Serialize;

use crate::error::StoreError;
use crate::open::Store;

/// Buckets of `bucket_ms` from `from_ms` (inclusive) to `to_ms` (exclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buckets {
    pub from_ms: i64,
    pub bucket_ms: i64,
    pub count: usize,
}

impl Buckets {
    pub fn to_ms(&self) -> i64 {
        self.from_ms + self.bucket_ms * self.count as i64
    }

    /// The start of bucket `i`.
    pub fn start(&self, i: usize) -> i64 {
        self.from_ms + self.bucket_ms * i as i64
    }
}

/// Requests in one bucket; the overhead percentiles are `None` without requests.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RequestBucket {
    pub t_ms: i64,
    pub count: u64,
    pub errors: u64,
    pub overhead_p50_ms: Option<f64>,
    pub overhead_p95_ms: Option<f64>,
}

impl Store {
    /// Turns per bucket: how many, how many failed, and the overhead's median and 95th
    /// percentile (nearest rank).
    pub fn request_series(&self, b: Buckets) -> Result<Vec<RequestBucket>, StoreError> {
        let mut out: Vec<RequestBucket> = (0..b.count)
            .map(|i| RequestBucket {
                t_ms: b.start(i),
                count: 0,
                errors: 0,
                overhead_p50_ms: None,
                overhead_p95_ms: None,
            })
            .collect();
        let mut stmt = self.conn.prepare(
            "WITH t AS (
                 SELECT (created_at_ms - ?1) / ?2 AS b, overhead_ms,
                        (error IS NOT NULL OR status >= 400) AS failed,
                        ROW_NUMBER() OVER (PARTITION BY (created_at_ms - ?1) / ?2
                                           ORDER BY overhead_ms) AS rn,
                        COUNT(*) OVER (PARTITION BY (created_at_ms - ?1) / ?2) AS n
                 FROM turns WHERE created_at_ms >= ?1 AND created_at_ms < ?3)
             SELECT b, COUNT(*), SUM(failed),
                    MAX(CASE WHEN rn = (n * 50 + 99) / 100 THEN overhead_ms END),
                    MAX(CASE WHEN rn = (n * 95 + 99) / 100 THEN overhead_ms END)
             FROM t GROUP BY b",
        )?;
        let rows = stmt.query_map([b.from_ms, b.bucket_ms, b.to_ms()], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, u64>(1)?,
                row.get::<_, u64>(2)?,
                row.get::<_, Option<f64>>(3)?,
                row.get::<_, Option<f64>>(4)?,
            ))
        })?;
        for row in rows {
            let (i, count, errors, p50, p95) = row?;
            if let Some(slot) = usize::try_from(i).ok().and_then(|i| out.get_mut(i)) {
                slot.count = count;
                slot.errors = errors;
                slot.overhead_p50_ms = p50;
                slot.overhead_p95_ms = p95;
            }
        }
        Ok(out)
    }

    /// Active memory units that existed at the end of each bucket (by creation time).
    pub fn memory_totals(&self, b: Buckets) -> Result<Vec<u64>, StoreError> {
        let before: u64 = self.conn.query_row(
            "SELECT COUNT(*) FROM memory_units WHERE status = 'active' AND created_ms < ?1",
            [b.from_ms],
            |row| row.get(0),
        )?;
        let per = self.per_bucket(
            "SELECT (created_ms - ?1) / ?2, COUNT(*) FROM memory_units
             WHERE status = 'active' AND created_ms >= ?1 AND created_ms < ?3 GROUP BY 1",
            b,
        )?;
        Ok(running_totals(before, &per))
    }

    /// Skills written by evolution per bucket (added, not improved), for totals counted back
    /// from the library as it is now.
    pub fn skills_added_series(&self, b: Buckets) -> Result<(Vec<u64>, u64), StoreError> {
        let per = self.per_bucket(
            "SELECT (at_ms - ?1) / ?2, SUM(json_array_length(added)) FROM skill_events
             WHERE at_ms >= ?1 AND at_ms < ?3 GROUP BY 1",
            b,
        )?;
        let after: u64 = self.conn.query_row(
            "SELECT COALESCE(SUM(json_array_length(added)), 0) FROM skill_events
             WHERE at_ms >= ?1",
            [b.to_ms()],
            |row| row.get(0),
        )?;
        Ok((per, after))
    }

    fn per_bucket(&self, sql: &str, b: Buckets) -> Result<Vec<u64>, StoreError> {
        let mut out = vec![0u64; b.count];
        let mut stmt = self.conn.prepare(sql)?;
        let rows = stmt.query_map([b.from_ms, b.bucket_ms, b.to_ms()], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, Option<u64>>(1)?))
        })?;
        for row in rows {
            let (i, n) = row?;
            if let Some(slot) = usize::try_from(i).ok().and_then(|i| out.get_mut(i)) {
                *slot = n.unwrap_or(0);
            }
        }
        Ok(out)
    }
}

/// `before` plus each bucket's additions, cumulatively.
fn running_totals(before: u64, per: &[u64]) -> Vec<u64> {
    per.iter()
        .scan(before, |total, n| {
            *total += n;
            Some(*total)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn running_totals_add_up() {
        assert_eq!(running_totals(2, &[0, 3, 1]), vec![2, 5, 6]);
    }
}
