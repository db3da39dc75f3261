//! Injected context blocks, remembered per message so a session's prompt prefix stays
//! byte-identical across turns (upstream prompt caches key on the exact prefix).

use rusqlite::{OptionalExtension, params};

use crate::error::StoreError;
use crate::open::Store;

/// A block injected into one message of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBlock {
    pub session_id: String,
    pub message_key: String,
    pub block: String,
    pub at_ms: i64,
}

impl Store {
    /// Stores blocks in one transaction. The first block stored for a (session, message)
    /// wins and never changes: rewriting it would break the cached prefix.
    pub fn put_injected_blocks(&mut self, rows: &[NewBlock]) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        {
            let mut stmt = tx.prepare_cached(
                "INSERT OR IGNORE INTO injected_blocks
                     (session_id, message_key, block, created_at_ms)
                 VALUES (?1, ?2, ?3, ?4)",
            )?;
            for r in rows {
                stmt.execute(params![r.session_id, r.message_key, r.block, r.at_ms])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// The (message_key, block) pairs stored for a session.
    pub fn injected_blocks(&self, session_id: &str) -> Result<Vec<(String, String)>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT message_key, block FROM injected_blocks WHERE session_id = ?1
             ORDER BY created_at_ms, message_key",
        )?;
        let rows = stmt.query_map([session_id], |row| Ok((row.get(0)?, row.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The blocks stored for these keys of a session, as (message_key, block); keys without
    /// one are left out. One primary-key lookup per key.
    pub fn injected_blocks_for(
        &self,
        session_id: &str,
        keys: &[String],
    ) -> Result<Vec<(String, String)>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT block FROM injected_blocks WHERE session_id = ?1 AND message_key = ?2",
        )?;
        let mut out = Vec::new();
        for key in keys {
            let block: Option<String> = stmt
                .query_row(params![session_id, key], |row| row.get(0))
                .optional()?;
            if let Some(block) = block {
                out.push((key.clone(), block));
            }
        }
        Ok(out)
    }

    /// Calls `f(session_id, message_key)` for every stored block, without holding them all.
    pub fn each_injected_block_key(&self, mut f: impl FnMut(&str, &str)) -> Result<(), StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT session_id, message_key FROM injected_blocks")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let (session, key): (String, String) = (row.get(0)?, row.get(1)?);
            f(&session, &key);
        }
        Ok(())
    }

    /// Sessions that have remembered blocks, so a caller can skip the lookup for a session
    /// it has never seen (most first turns).
    pub fn sessions_with_blocks(&self) -> Result<Vec<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT DISTINCT session_id FROM injected_blocks")?;
        let rows = stmt.query_map([], |row| row.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Deletes blocks stored before `older_than_ms`; returns how many were removed.
    pub fn prune_injected_blocks(&mut self, older_than_ms: i64) -> Result<usize, StoreError> {
        let removed = self
            .conn
            .prepare_cached("DELETE FROM injected_blocks WHERE created_at_ms < ?1")?
            .execute([older_than_ms])?;
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn block(session: &str, key: &str, text: &str) -> NewBlock {
        NewBlock {
            session_id: session.into(),
            message_key: key.into(),
            block: text.into(),
            at_ms: 1,
        }
    }

    #[test]
    fn blocks_are_read_back_for_exactly_the_keys_asked() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        store
            .put_injected_blocks(&[
                block("s", "a", "block a"),
                block("s", "b", "block b"),
                block("t", "a", "other session"),
            ])
            .unwrap();
        let keys = ["b".to_string(), "missing".to_string(), "a".to_string()];
        assert_eq!(
            store.injected_blocks_for("s", &keys).unwrap(),
            vec![
                ("b".to_string(), "block b".to_string()),
                ("a".to_string(), "block a".to_string())
            ]
        );
        assert!(store.injected_blocks_for("u", &keys).unwrap().is_empty());
        let mut pairs = Vec::new();
        store
            .each_injected_block_key(|s, k| pairs.push(format!("{s}/{k}")))
            .unwrap();
        pairs.sort();
        assert_eq!(pairs, ["s/a", "s/b", "t/a"]);
    }
}
