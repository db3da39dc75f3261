//! Injected context blocks, remembered per message so a session's prompt prefix stays
//! byte-identical across turns (upstream prompt caches key on the exact prefix).

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use crate::body_parts::{Rebuilder, Text, release, store_shared};
use crate::error::StoreError;
use crate::open::Store;
use crate::turns::TurnId;

/// A block injected into one message of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBlock {
    pub session_id: String,
    pub message_key: String,
    pub block: String,
    pub at_ms: i64,
}

/// A stored block's text: from its body (v10), or the text kept in the row before.
fn block_text(
    texts: &mut Rebuilder<'_>,
    block: String,
    body: Option<Vec<u8>>,
) -> Result<String, StoreError> {
    match body {
        None => Ok(block),
        // Blocks are not turns; a damaged one is reported without a turn to name.
        Some(body) => match texts.body(TurnId(0), &body)? {
            Text::Kept(text) => Ok(text),
            Text::Dropped => Ok(String::new()),
        },
    }
}

impl Store {
    /// Stores blocks in one transaction. The first block stored for a (session, message)
    /// wins and never changes: rewriting it would break the cached prefix.
    pub fn put_injected_blocks(&mut self, rows: &[NewBlock]) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        for r in rows {
            let known: Option<i64> = tx
                .prepare_cached(
                    "SELECT 1 FROM injected_blocks WHERE session_id = ?1 AND message_key = ?2",
                )?
                .query_row(params![r.session_id, r.message_key], |row| row.get(0))
                .optional()?;
            if known.is_some() {
                continue;
            }
            let body = store_shared(&tx, &r.block)?;
            tx.prepare_cached(
                "INSERT INTO injected_blocks
                     (session_id, message_key, block, created_at_ms, block_body)
                 VALUES (?1, ?2, '', ?3, ?4)",
            )?
            .execute(params![r.session_id, r.message_key, r.at_ms, body])?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The (message_key, block) pairs stored for a session.
    pub fn injected_blocks(&self, session_id: &str) -> Result<Vec<(String, String)>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT message_key, block, block_body FROM injected_blocks WHERE session_id = ?1
             ORDER BY created_at_ms, message_key",
        )?;
        let rows: Vec<(String, String, Option<Vec<u8>>)> = stmt
            .query_map([session_id], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })?
            .collect::<Result<_, _>>()?;
        let mut texts = Rebuilder::new(&self.conn);
        rows.into_iter()
            .map(|(key, block, body)| Ok((key, block_text(&mut texts, block, body)?)))
            .collect()
    }

    /// The blocks stored for these keys of a session, as (message_key, block); keys without
    /// one are left out. One primary-key lookup per key.
    pub fn injected_blocks_for(
        &self,
        session_id: &str,
        keys: &[String],
    ) -> Result<Vec<(String, String)>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT block, block_body FROM injected_blocks
             WHERE session_id = ?1 AND message_key = ?2",
        )?;
        let mut texts = Rebuilder::new(&self.conn);
        let mut out = Vec::new();
        for key in keys {
            let found: Option<(String, Option<Vec<u8>>)> = stmt
                .query_row(params![session_id, key], |row| {
                    Ok((row.get(0)?, row.get(1)?))
                })
                .optional()?;
            if let Some((block, body)) = found {
                out.push((key.clone(), block_text(&mut texts, block, body)?));
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
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let bodies: Vec<Vec<u8>> = tx
            .prepare_cached(
                "SELECT block_body FROM injected_blocks
                 WHERE created_at_ms < ?1 AND block_body IS NOT NULL",
            )?
            .query_map([older_than_ms], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        for body in &bodies {
            match release(&tx, TurnId(0), body) {
                Ok(_) => {}
                // Its part stays, unreferenced: a leak, not a loss.
                Err(e @ StoreError::BadBody { .. }) => {
                    tracing::warn!(error = %e, "pruning a damaged block");
                }
                Err(e) => return Err(e),
            }
        }
        let removed = tx
            .prepare_cached("DELETE FROM injected_blocks WHERE created_at_ms < ?1")?
            .execute([older_than_ms])?;
        tx.commit()?;
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

    #[test]
    fn a_block_given_to_many_messages_is_stored_once_and_pruned_with_its_last_row() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        let text = "Always answer in metric units. ".repeat(40);
        let rows: Vec<NewBlock> = (0..50)
            .map(|i| NewBlock {
                at_ms: i,
                ..block(&format!("s{i}"), "k", &text)
            })
            .collect();
        store.put_injected_blocks(&rows).unwrap();
        let parts = |store: &Store| -> i64 {
            store
                .conn
                .query_row("SELECT COUNT(*) FROM body_parts", [], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(parts(&store), 1);
        assert_eq!(
            store.injected_blocks("s7").unwrap(),
            [("k".to_owned(), text.clone())]
        );
        assert_eq!(store.prune_injected_blocks(49).unwrap(), 49);
        assert_eq!(parts(&store), 1, "the newest row still uses it");
        assert_eq!(
            store.injected_blocks_for("s49", &["k".into()]).unwrap(),
            [("k".to_owned(), text)]
        );
        store.integrity_check().unwrap();
        store.prune_injected_blocks(50).unwrap();
        assert_eq!(parts(&store), 0);
        store.integrity_check().unwrap();
    }
}
