//! Schema v6: per-turn cache usage and what MetaClaw injected. A v5 file upgrades in place,
//! its old turns read with the new figures absent, and new turns keep every figure.
#![allow(clippy::unwrap_used, clippy::panic)]

use metaclaw_store::{SCHEMA_VERSION, Store};

mod common;
use common::turn;

/// The `sessions` and `turns` tables as v5 shipped them (v1 plus v2's `injected_skills`),
/// with one turn recorded before the upgrade, v2's `state` and `injected_blocks` and v5's
/// `learn_samples`, and v3's `memory_units` (their columns that later versions rely on).
const V5_TURNS: &str = "
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
ALTER TABLE turns ADD COLUMN injected_skills TEXT NULL;
CREATE TABLE state (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
CREATE TABLE injected_blocks (
    session_id TEXT NOT NULL, message_key TEXT NOT NULL, block TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL, PRIMARY KEY (session_id, message_key)
);
CREATE TABLE learn_samples (
    id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, reward REAL NULL,
    judge_state TEXT NOT NULL DEFAULT 'pending', created_at_ms INTEGER NOT NULL
);
CREATE TABLE memory_units (
    id TEXT NOT NULL UNIQUE, scope TEXT NOT NULL, kind TEXT NOT NULL, importance REAL NOT NULL,
    pinned INTEGER NOT NULL DEFAULT 0, status TEXT NOT NULL DEFAULT 'active',
    created_ms INTEGER NOT NULL, expires_ms INTEGER NULL
);
INSERT INTO sessions (id, scope, started_at_ms, last_turn_at_ms, main_turns)
    VALUES ('old', 'default', 5, 5, 1);
INSERT INTO turns (session_id, turn_index, turn_type, scope, client_protocol,
    upstream_protocol, upstream, model, request_json, status, input_tokens, output_tokens,
    overhead_ms, total_ms, created_at_ms, injected_skills)
    VALUES ('old', 0, 'main', 'default', 'openai', 'openai', 'primary', 'm', '{}', 200,
    120, 7, 0.1, 1.0, 5, '[\"git\"]');
PRAGMA user_version = 5;
";

#[test]
fn a_v5_database_upgrades_in_place_and_keeps_its_turns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metaclaw.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(V5_TURNS)
        .unwrap();

    let mut store = Store::open(&path).unwrap();
    let version: i64 = store
        .connection()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    let old = store.session_usage("old").unwrap();
    assert_eq!(old.len(), 1);
    assert_eq!(old[0].input_tokens, Some(120));
    assert_eq!(old[0].output_tokens, Some(7));
    assert_eq!(old[0].injected_skills, ["git"]);
    assert_eq!(old[0].cache_read_tokens, None);
    assert_eq!(old[0].cache_write_tokens, None);
    assert_eq!(old[0].injected_tokens, None);
    assert_eq!(old[0].block_tokens, None);
    assert!(old[0].injected_memories.is_empty());

    let mut new = turn("old", "main", 6);
    new.input_tokens = Some(1_000);
    new.cache_read_tokens = Some(900);
    new.cache_write_tokens = Some(60);
    new.injected_tokens = Some(210);
    new.block_tokens = Some(70);
    new.injected_skills = vec!["git".into()];
    new.injected_memories = vec!["0193a1b2c3d4e5f6a7b8".into()];
    store.insert_turns(&[new]).unwrap();
    drop(store);

    // Opening again migrates nothing more and reads both turns back.
    let store = Store::open(&path).unwrap();
    let turns = store.session_usage("old").unwrap();
    assert_eq!(turns.len(), 2);
    let t = &turns[1];
    assert_eq!(t.turn_index, 1);
    assert_eq!(t.input_tokens, Some(1_000));
    assert_eq!(t.cache_read_tokens, Some(900));
    assert_eq!(t.cache_write_tokens, Some(60));
    assert_eq!(t.injected_tokens, Some(210));
    assert_eq!(t.block_tokens, Some(70));
    assert_eq!(t.injected_memories, ["0193a1b2c3d4e5f6a7b8"]);
    store.integrity_check().unwrap();
}
