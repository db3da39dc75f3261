//! A database as schema v8 made it, every request stored whole in `turns.request_json`: for
//! the migration test (`tests/schema_v9.rs`) and the old layout of the benchmark
//! (`examples/disk_bench.rs`).

use metaclaw_store::NewTurn;
use rusqlite::{Connection, params};

/// The tables v9 to v11 change or rely on (`sessions`, `turns`, `state`,
/// `injected_blocks`, `memory_units`), as v8 left them.
pub const SCHEMA: &str = "
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
ALTER TABLE turns ADD COLUMN cache_read_tokens INTEGER NULL;
ALTER TABLE turns ADD COLUMN cache_write_tokens INTEGER NULL;
ALTER TABLE turns ADD COLUMN injected_tokens INTEGER NULL;
ALTER TABLE turns ADD COLUMN block_tokens INTEGER NULL;
ALTER TABLE turns ADD COLUMN injected_memories TEXT NULL;
ALTER TABLE turns ADD COLUMN follow_up TEXT NULL;
ALTER TABLE turns ADD COLUMN held_out INTEGER NOT NULL DEFAULT 0;
CREATE TABLE memory_units (
    id TEXT NOT NULL UNIQUE, scope TEXT NOT NULL, kind TEXT NOT NULL, importance REAL NOT NULL,
    pinned INTEGER NOT NULL DEFAULT 0, status TEXT NOT NULL DEFAULT 'active',
    created_ms INTEGER NOT NULL, expires_ms INTEGER NULL
);
PRAGMA user_version = 8;
";

/// A new v8 database at `path`, with the connection settings `Store::open` uses.
pub fn create(path: &std::path::Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.execute_batch(SCHEMA)?;
    Ok(conn)
}

/// Stores turns in one transaction as v8's `Store::insert_turns` did.
pub fn insert(conn: &mut Connection, turns: &[NewTurn]) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    for t in turns {
        tx.prepare_cached(
            "INSERT OR IGNORE INTO sessions (id, scope, started_at_ms, last_turn_at_ms)
             VALUES (?1, ?2, ?3, ?3)",
        )?
        .execute(params![t.session_id, t.scope, t.created_at_ms])?;
        tx.prepare_cached(
            "INSERT INTO turns (session_id, turn_index, turn_type, scope, client_protocol,
                 upstream_protocol, upstream, model, request_json, reply_json, status, error,
                 input_tokens, output_tokens, overhead_ms, ttft_ms, total_ms, created_at_ms,
                 injected_skills, skill_generation, cache_read_tokens, cache_write_tokens,
                 injected_memories, injected_tokens, block_tokens, held_out)
             VALUES (?1,
                 (SELECT COALESCE(MAX(turn_index) + 1, 0) FROM turns WHERE session_id = ?1),
                 ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
                 ?19, ?20, ?21, ?22, ?23, ?24, ?25)",
        )?
        .execute(params![
            t.session_id,
            t.turn_type,
            t.scope,
            t.client_protocol,
            t.upstream_protocol,
            t.upstream,
            t.model,
            t.request_json,
            t.reply_json,
            t.status,
            t.error,
            t.input_tokens,
            t.output_tokens,
            t.overhead_ms,
            t.ttft_ms,
            t.total_ms,
            t.created_at_ms,
            names(&t.injected_skills),
            t.skill_generation as i64,
            t.cache_read_tokens,
            t.cache_write_tokens,
            names(&t.injected_memories),
            t.injected_tokens,
            t.block_tokens,
            t.held_out,
        ])?;
        tx.prepare_cached(
            "UPDATE sessions SET main_turns = main_turns + (?2 = 'main'),
                 side_turns = side_turns + (?2 = 'side'),
                 last_turn_at_ms = MAX(last_turn_at_ms, ?3)
             WHERE id = ?1",
        )?
        .execute(params![t.session_id, t.turn_type, t.created_at_ms])?;
    }
    tx.commit()
}

fn names(list: &[String]) -> Option<String> {
    (!list.is_empty()).then(|| serde_json::to_string(list).unwrap_or_default())
}
