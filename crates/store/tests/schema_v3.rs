//! Schema v3: the memory tables. A v2 file upgrades and keeps its data; the FTS triggers and
//! the trigram tokenizer work on the upgraded file. Queries live in `metaclaw-memory`.
#![allow(clippy::unwrap_used, clippy::panic)]

use metaclaw_store::{SCHEMA_VERSION, Store};

/// The v1 + v2 schema as shipped, with one row of old data.
const V2_SCHEMA: &str = "
CREATE TABLE sessions (
    id TEXT PRIMARY KEY NOT NULL, scope TEXT NOT NULL, started_at_ms INTEGER NOT NULL,
    last_turn_at_ms INTEGER NOT NULL, ended_at_ms INTEGER NULL, end_reason TEXT NULL,
    main_turns INTEGER NOT NULL DEFAULT 0, side_turns INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE turns (
    id INTEGER PRIMARY KEY, session_id TEXT NOT NULL REFERENCES sessions(id),
    turn_index INTEGER NOT NULL, turn_type TEXT NOT NULL CHECK (turn_type IN ('main', 'side')),
    scope TEXT NOT NULL, client_protocol TEXT NOT NULL, upstream_protocol TEXT NOT NULL,
    upstream TEXT NOT NULL, model TEXT NOT NULL, request_json TEXT NOT NULL,
    reply_json TEXT NULL, status INTEGER NOT NULL, error TEXT NULL, input_tokens INTEGER NULL,
    output_tokens INTEGER NULL, overhead_ms REAL NOT NULL, ttft_ms REAL NULL,
    total_ms REAL NOT NULL, skill_generation INTEGER NOT NULL DEFAULT 0,
    created_at_ms INTEGER NOT NULL, UNIQUE (session_id, turn_index)
);
CREATE INDEX turns_created_at ON turns(created_at_ms);
CREATE INDEX turns_session ON turns(session_id);
CREATE TABLE injected_blocks (
    session_id TEXT NOT NULL, message_key TEXT NOT NULL, block TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL, PRIMARY KEY (session_id, message_key)
);
CREATE INDEX injected_blocks_created_at ON injected_blocks(created_at_ms);
CREATE TABLE skill_events (
    id INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL, trigger TEXT NOT NULL,
    session_ids TEXT NOT NULL, model TEXT NULL, outcome TEXT NOT NULL, added TEXT NOT NULL,
    improved TEXT NOT NULL, rejected TEXT NOT NULL, error TEXT NULL,
    generation INTEGER NOT NULL, detail TEXT NOT NULL
);
CREATE TABLE state (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
CREATE TABLE embeddings (
    content_hash TEXT NOT NULL, model TEXT NOT NULL, dims INTEGER NOT NULL,
    vector BLOB NOT NULL, created_at_ms INTEGER NOT NULL, PRIMARY KEY (content_hash, model)
);
ALTER TABLE turns ADD COLUMN injected_skills TEXT NULL;
INSERT INTO sessions (id, scope, started_at_ms, last_turn_at_ms, main_turns)
    VALUES ('old', 'default', 5, 5, 1);
INSERT INTO turns (session_id, turn_index, turn_type, scope, client_protocol,
    upstream_protocol, upstream, model, request_json, status, overhead_ms, total_ms,
    created_at_ms, injected_skills)
    VALUES ('old', 0, 'main', 'default', 'openai', 'openai', 'primary', 'm', '{}', 200,
    0.1, 1.0, 5, '[\"git\"]');
INSERT INTO state (key, value) VALUES ('k', 'v');
PRAGMA user_version = 2;
";

fn insert_unit(conn: &rusqlite::Connection, id: &str, content: &str) {
    conn.execute(
        "INSERT INTO memory_units (id, scope, kind, content, importance, confidence, source,
             created_ms, updated_ms)
         VALUES (?1, 'default', 'semantic', ?2, 0.5, 0.7, 'manual', 1, 1)",
        [id, content],
    )
    .unwrap();
}

fn fts_ids(conn: &rusqlite::Connection, table: &str, query: &str) -> Vec<String> {
    let sql = format!(
        "SELECT u.id FROM {table} f JOIN memory_units u ON u.rowid = f.rowid
         WHERE {table} MATCH ?1 ORDER BY u.id"
    );
    let mut stmt = conn.prepare(&sql).unwrap();
    stmt.query_map([query], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn a_v2_database_upgrades_keeps_its_data_and_gets_memory_tables() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metaclaw.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(V2_SCHEMA)
        .unwrap();

    let mut store = Store::open(&path).unwrap();
    let old = store.session_turns("old").unwrap();
    assert_eq!(old.len(), 1);
    assert_eq!(old[0].injected_skills, ["git"]);
    assert_eq!(store.state_get("k").unwrap().as_deref(), Some("v"));
    let version: i64 = store
        .connection()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);

    let conn = store.connection_mut();
    for table in [
        "memory_units",
        "memory_versions",
        "memory_events",
        "memory_policy",
        "memory_policy_history",
    ] {
        let n: i64 = conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0, "{table}");
    }
    insert_unit(conn, "a", "The user prefers tabs over spaces");
    insert_unit(conn, "b", "用户喜欢使用中文注释");
    assert_eq!(fts_ids(conn, "memory_fts", "tabs"), ["a"]);
    assert_eq!(fts_ids(conn, "memory_fts_cjk", "中文注释"), ["b"]);

    conn.execute(
        "UPDATE memory_units SET content = 'The user prefers spaces' WHERE id = 'a'",
        [],
    )
    .unwrap();
    assert!(fts_ids(conn, "memory_fts", "tabs").is_empty());
    assert_eq!(fts_ids(conn, "memory_fts", "spaces"), ["a"]);
    conn.execute("DELETE FROM memory_units WHERE id = 'b'", [])
        .unwrap();
    assert!(fts_ids(conn, "memory_fts_cjk", "中文注释").is_empty());
    for table in ["memory_fts", "memory_fts_cjk"] {
        conn.execute(
            &format!("INSERT INTO {table}({table}) VALUES ('integrity-check')"),
            [],
        )
        .unwrap();
    }
    store.integrity_check().unwrap();
}

#[test]
fn the_memory_tables_reject_unknown_names() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("metaclaw.db")).unwrap();
    let bad_kind = store.connection().execute(
        "INSERT INTO memory_units (id, scope, kind, content, importance, confidence, source,
             created_ms, updated_ms)
         VALUES ('x', 'default', 'gossip', 'c', 0.5, 0.5, 'manual', 1, 1)",
        [],
    );
    assert!(bad_kind.is_err());
    let bad_action = store.connection().execute(
        "INSERT INTO memory_events (at_ms, memory_id, scope, action, actor)
         VALUES (1, 'x', 'default', 'access', 'user')",
        [],
    );
    assert!(bad_action.is_err());
}

#[test]
fn a_scopes_pinned_units_are_read_through_their_own_index() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("metaclaw.db")).unwrap();
    let plan: Vec<String> = store
        .connection()
        .prepare(
            "EXPLAIN QUERY PLAN SELECT id FROM memory_units
             WHERE scope = ?1 AND pinned = 1 AND status = 'active'
             ORDER BY importance DESC, updated_ms DESC, id LIMIT 4",
        )
        .unwrap()
        .query_map(["default"], |row| row.get::<_, String>(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        plan.iter().any(|step| step.contains("memory_units_pinned")),
        "{plan:?}"
    );
}
