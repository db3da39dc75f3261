//! Shared fixtures for the memory storage tests: a migrated database in a temp dir.
#![allow(dead_code)]

use metaclaw_memory::{Kind, NewUnit, Source};
use metaclaw_store::Store;

pub struct Db {
    pub store: Store,
    _dir: tempfile::TempDir,
}

pub fn open() -> Db {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("metaclaw.db")).unwrap();
    Db { store, _dir: dir }
}

pub fn unit(scope: &str, kind: Kind, content: &str) -> NewUnit {
    NewUnit {
        scope: scope.to_owned(),
        kind,
        content: content.to_owned(),
        summary: String::new(),
        fact_key: None,
        importance: 0.5,
        confidence: 0.7,
        pinned: false,
        source: Source::Manual,
        source_session: None,
        source_turn: None,
        tags: Vec::new(),
        entities: Vec::new(),
        expires_ms: None,
    }
}

/// Ids of units whose FTS row matches `query` in `table`.
pub fn fts(store: &Store, table: &str, query: &str) -> Vec<String> {
    let sql = format!(
        "SELECT u.id FROM {table} f JOIN memory_units u ON u.rowid = f.rowid
         WHERE {table} MATCH ?1 ORDER BY u.id"
    );
    let conn = store.connection();
    let mut stmt = conn.prepare(&sql).unwrap();
    stmt.query_map([query], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}
