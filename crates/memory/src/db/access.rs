//! Access bookkeeping, written in batches by the background worker so retrieval itself
//! never writes on the request path.

use rusqlite::{Connection, TransactionBehavior, params};

use crate::MemoryError;

/// Counts one access per `(id, at_ms)` pair and keeps the latest access time. Neither
/// `updated_ms` nor `version` moves (access is not an edit) and nothing is audited. Ids
/// that no longer exist (purged meanwhile) are skipped; returns how many were counted.
pub fn record_access<S: AsRef<str>>(
    conn: &mut Connection,
    hits: &[(S, i64)],
) -> Result<u64, MemoryError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut counted = 0;
    {
        let mut stmt = tx.prepare_cached(
            "UPDATE memory_units SET access_count = access_count + 1,
                 last_accessed_ms = max(coalesce(last_accessed_ms, ?2), ?2)
             WHERE id = ?1",
        )?;
        for (id, at_ms) in hits {
            counted += stmt.execute(params![id.as_ref(), at_ms])? as u64;
        }
    }
    tx.commit()?;
    Ok(counted)
}
