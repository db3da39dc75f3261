//! Converting the turns stored before schema v9 to its layout, in place: their requests and
//! replies.
//!
//! Batches in id order, each its own transaction that also moves the mark in `state`: a
//! process killed at any point leaves every turn either converted or untouched (readers take
//! both), and the next open continues from the mark. The write lock is taken before the mark
//! is read, so two processes cannot convert one turn twice (its parts would be counted twice).

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::body_parts::{Kind, store_body};
use crate::error::StoreError;
use crate::migrations_bodies::CONVERSION_MARK;
use crate::open::Store;

/// A batch stops at this many turns …
const BATCH_TURNS: usize = 500;
/// … or once it has read this many bytes of bodies, so a batch of huge requests neither holds
/// the write lock long (other writers wait at most `BUSY_TIMEOUT`) nor fills memory.
const BATCH_BYTES: usize = 32 << 20;

impl Store {
    /// Converts the bodies of up to `max_turns` turns stored before schema v9, in one
    /// transaction; the number converted, `None` once none is left.
    pub fn convert_turns(&mut self, max_turns: usize) -> Result<Option<usize>, StoreError> {
        convert_batch(&mut self.conn, max_turns, BATCH_BYTES)
    }

    /// How many turns stored before schema v9 remain to be converted.
    pub fn turns_to_convert(&self) -> Result<u64, StoreError> {
        let Some(from) = mark(&self.conn)? else {
            return Ok(0);
        };
        Ok(self.conn.query_row(
            "SELECT COUNT(*) FROM turns WHERE id >= ?1 AND request_body IS NULL",
            [from],
            |r| r.get(0),
        )?)
    }

    /// Converts every turn left, logging progress (for tools and tests; the engine converts
    /// a batch at a time between writes).
    pub fn finish_conversion(&mut self) -> Result<(), StoreError> {
        if mark(&self.conn)?.is_none() {
            return Ok(());
        }
        let left = self.turns_to_convert()?;
        if left > 0 {
            tracing::info!(
                turns = left,
                "storing earlier turns' requests and replies in the compact layout"
            );
        }
        let started = std::time::Instant::now();
        let mut done = 0usize;
        while let Some(n) = convert_batch(&mut self.conn, BATCH_TURNS, BATCH_BYTES)? {
            done += n;
            tracing::debug!(done, left, "converted a batch of turns");
        }
        if done > 0 {
            let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            tracing::info!(turns = done, ms, "earlier turns converted");
        }
        Ok(())
    }
}

fn convert_batch(
    conn: &mut Connection,
    max_turns: usize,
    max_bytes: usize,
) -> Result<Option<usize>, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let Some(from) = mark(&tx)? else {
        return Ok(None);
    };
    let mut rows: Vec<(i64, String, Option<String>)> = Vec::new();
    let mut bytes = 0usize;
    let mut more = false;
    {
        let mut stmt = tx.prepare(
            "SELECT id, request_json, reply_json FROM turns
             WHERE id >= ?1 AND request_body IS NULL ORDER BY id",
        )?;
        let mut cursor = stmt.query([from])?;
        while let Some(row) = cursor.next()? {
            if rows.len() >= max_turns.max(1) || bytes >= max_bytes {
                more = true;
                break;
            }
            let (id, request, reply): (i64, String, Option<String>) =
                (row.get(0)?, row.get(1)?, row.get(2)?);
            bytes += request.len() + reply.as_ref().map_or(0, String::len);
            rows.push((id, request, reply));
        }
    }
    for (id, request, reply) in &rows {
        let request = store_body(&tx, request, Kind::Request)?;
        let reply = match reply {
            Some(reply) => Some(store_body(&tx, reply, Kind::Reply)?),
            None => None,
        };
        tx.prepare_cached(
            "UPDATE turns SET request_json = '', request_body = ?2, reply_json = NULL,
                 reply_body = ?3
             WHERE id = ?1",
        )?
        .execute(params![id, request, reply])?;
    }
    match rows.last() {
        Some((last, ..)) if more => {
            tx.prepare_cached("UPDATE state SET value = ?2 WHERE key = ?1")?
                .execute(params![CONVERSION_MARK, (last + 1).to_string()])?;
        }
        _ => {
            tx.prepare_cached("DELETE FROM state WHERE key = ?1")?
                .execute([CONVERSION_MARK])?;
        }
    }
    tx.commit()?;
    Ok(Some(rows.len()))
}

/// The id conversion continues from; `None` when nothing is left to convert.
fn mark(conn: &Connection) -> Result<Option<i64>, StoreError> {
    let value: Option<String> = conn
        .prepare_cached("SELECT value FROM state WHERE key = ?1")?
        .query_row([CONVERSION_MARK], |r| r.get(0))
        .optional()?;
    // A mark that is not a number restarts from the beginning: converted turns are skipped.
    Ok(value.map(|v| v.parse().unwrap_or(0)))
}
