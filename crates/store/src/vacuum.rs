//! Giving free pages back to the file system. A database created by this version uses
//! `auto_vacuum = incremental`: free pages go back a few at a time, each step a short write.
//! One created earlier needs one full rewrite (`VACUUM`) to switch; it can be interrupted
//! (from another thread, through [`Store::interrupt_handle`]) and is then simply not done.

use rusqlite::InterruptHandle;

use crate::error::StoreError;
use crate::open::Store;

impl Store {
    /// Gives back at most `pages` free pages (incremental mode only) and returns how many
    /// bytes the file shrank by, once checkpointed.
    pub fn give_back_pages(&mut self, pages: u32) -> Result<u64, StoreError> {
        let page_size: u64 = self.conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        let before: u64 = self
            .conn
            .query_row("PRAGMA freelist_count", [], |r| r.get(0))?;
        // Each step of the statement frees one page: step it to the end.
        let mut stmt = self
            .conn
            .prepare(&format!("PRAGMA incremental_vacuum({pages})"))?;
        let mut rows = stmt.query([])?;
        while rows.next()?.is_some() {}
        drop(rows);
        drop(stmt);
        let after: u64 = self
            .conn
            .query_row("PRAGMA freelist_count", [], |r| r.get(0))?;
        Ok(before.saturating_sub(after) * page_size)
    }

    /// Rewrites the whole file without its free pages and switches it to incremental
    /// vacuum. Holds the write lock for as long as it runs (seconds per gigabyte) and needs
    /// as much free disk as the file takes; the recorder's writes wait meanwhile.
    pub fn rewrite_compact(&mut self) -> Result<(), StoreError> {
        self.conn
            .execute_batch("PRAGMA auto_vacuum = INCREMENTAL; VACUUM;")?;
        Ok(())
    }

    /// Folds the write-ahead log into the file and truncates it, so the file sizes say what
    /// the database takes. Readers in the middle of a read make it a partial checkpoint.
    pub fn checkpoint(&mut self) -> Result<(), StoreError> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }

    /// A handle another thread can use to stop the statement this connection is running
    /// (a long rewrite when a request arrives).
    pub fn interrupt_handle(&self) -> InterruptHandle {
        self.conn.get_interrupt_handle()
    }

    /// Bytes in free pages.
    pub fn free_bytes(&self) -> Result<u64, StoreError> {
        let page_size: u64 = self.conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        Ok(self.free_pages()? * page_size)
    }

    /// Whether free pages can be given back step by step (else only a rewrite shrinks it).
    pub fn incremental_vacuum(&self) -> Result<bool, StoreError> {
        let mode: i64 = self
            .conn
            .query_row("PRAGMA auto_vacuum", [], |r| r.get(0))?;
        Ok(mode == 2)
    }

    fn free_pages(&self) -> Result<u64, StoreError> {
        Ok(self
            .conn
            .query_row("PRAGMA freelist_count", [], |r| r.get(0))?)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::NewTurn;

    fn fill(store: &mut Store) {
        let turns: Vec<NewTurn> = (0..300u64)
            .map(|i| NewTurn {
                session_id: format!("s{i}"),
                turn_type: "main".into(),
                request_json: format!(
                    r#"{{"messages":[{{"role":"user","content":"{}"}}]}}"#,
                    (0..300u64)
                        .map(|k| format!("{:x}", (i * 7919 + k) * 2_654_435_761 % 1_000_003))
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
                status: 200,
                created_at_ms: i64::try_from(i).unwrap(),
                ..NewTurn::default()
            })
            .collect();
        store.insert_turns(&turns).unwrap();
        store.checkpoint().unwrap();
    }

    fn file_len(store: &Store) -> u64 {
        std::fs::metadata(&store.path).unwrap().len()
    }

    #[test]
    fn dropped_bodies_give_their_pages_back_a_step_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        fill(&mut store);
        let full = file_len(&store);
        store.drop_turn_bodies_before(i64::MAX).unwrap();
        let free = store.free_pages().unwrap();
        assert!(free > 20, "{free}");
        let given = store.give_back_pages(10).unwrap();
        assert_eq!(store.free_pages().unwrap(), free - 10);
        assert_eq!(given, 10 * 4096);
        while store.give_back_pages(10).unwrap() > 0 {}
        store.checkpoint().unwrap();
        assert_eq!(store.free_pages().unwrap(), 0);
        assert!(
            file_len(&store) < full / 2,
            "{} of {full}",
            file_len(&store)
        );
        store.integrity_check().unwrap();
    }

    #[test]
    fn an_older_database_is_rewritten_once_and_then_gives_back_incrementally() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        // As databases created before incremental vacuum are.
        store
            .conn
            .execute_batch("PRAGMA auto_vacuum = NONE; VACUUM;")
            .unwrap();
        fill(&mut store);
        assert!(!store.space().unwrap().incremental_vacuum);
        let full = file_len(&store);
        store.drop_turn_bodies_before(150).unwrap();
        assert_eq!(store.give_back_pages(1000).unwrap(), 0, "not in this mode");
        store.rewrite_compact().unwrap();
        store.checkpoint().unwrap();
        assert!(store.space().unwrap().incremental_vacuum);
        assert_eq!(store.free_pages().unwrap(), 0);
        assert!(
            file_len(&store) < full * 3 / 4,
            "{} of {full}",
            file_len(&store)
        );
        store.drop_turn_bodies_before(i64::MAX).unwrap();
        assert!(store.give_back_pages(1000).unwrap() > 0);
        assert_eq!(store.stats().unwrap().turns, 300);
        store.integrity_check().unwrap();
    }
}
