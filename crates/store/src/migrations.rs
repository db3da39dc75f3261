//! Schema migrations. Append-only: migration `i` (0-based) takes the database from
//! `user_version = i` to `i + 1`. Never edit a migration that has shipped.

pub(crate) const MIGRATIONS: &[&str] = &[
    V1_SESSIONS_TURNS,
    V2_BLOCKS_EVENTS_STATE_EMBEDDINGS,
    V3_MEMORY,
    V4_MEMORY_PINNED_INDEX,
    crate::migrations_learn::V5_LEARNING,
    crate::migrations_usage::V6_TURN_USAGE,
    crate::migrations_usage::V7_LEARNING_USAGE,
    crate::follow_ups::V8_FOLLOW_UP,
    crate::migrations_bodies::V9_BODY_PARTS,
    crate::migrations_bodies::V10_SHARED_BLOCKS,
    V11_MEMORY_STANDING_INDEX,
];

const V1_SESSIONS_TURNS: &str = "
CREATE TABLE sessions (
    id              TEXT PRIMARY KEY NOT NULL,
    scope           TEXT NOT NULL,
    started_at_ms   INTEGER NOT NULL,
    last_turn_at_ms INTEGER NOT NULL,
    ended_at_ms     INTEGER NULL,
    end_reason      TEXT NULL,
    main_turns      INTEGER NOT NULL DEFAULT 0,
    side_turns      INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE turns (
    id                INTEGER PRIMARY KEY,
    session_id        TEXT NOT NULL REFERENCES sessions(id),
    turn_index        INTEGER NOT NULL,
    turn_type         TEXT NOT NULL CHECK (turn_type IN ('main', 'side')),
    scope             TEXT NOT NULL,
    client_protocol   TEXT NOT NULL,
    upstream_protocol TEXT NOT NULL,
    upstream          TEXT NOT NULL,
    model             TEXT NOT NULL,
    request_json      TEXT NOT NULL,
    reply_json        TEXT NULL,
    status            INTEGER NOT NULL,
    error             TEXT NULL,
    input_tokens      INTEGER NULL,
    output_tokens     INTEGER NULL,
    overhead_ms       REAL NOT NULL,
    ttft_ms           REAL NULL,
    total_ms          REAL NOT NULL,
    skill_generation  INTEGER NOT NULL DEFAULT 0,
    created_at_ms     INTEGER NOT NULL,
    UNIQUE (session_id, turn_index)
);

CREATE INDEX turns_created_at ON turns(created_at_ms);
CREATE INDEX turns_session ON turns(session_id);
";

/// Sticky injected blocks (prompt-cache stability), the skill evolution log, small
/// key/value state, the embedding cache, and which skills each turn was given.
const V2_BLOCKS_EVENTS_STATE_EMBEDDINGS: &str = "
CREATE TABLE injected_blocks (
    session_id    TEXT NOT NULL,
    message_key   TEXT NOT NULL,
    block         TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    PRIMARY KEY (session_id, message_key)
);

CREATE INDEX injected_blocks_created_at ON injected_blocks(created_at_ms);

CREATE TABLE skill_events (
    id          INTEGER PRIMARY KEY,
    at_ms       INTEGER NOT NULL,
    trigger     TEXT NOT NULL,
    session_ids TEXT NOT NULL,
    model       TEXT NULL,
    outcome     TEXT NOT NULL,
    added       TEXT NOT NULL,
    improved    TEXT NOT NULL,
    rejected    TEXT NOT NULL,
    error       TEXT NULL,
    generation  INTEGER NOT NULL,
    detail      TEXT NOT NULL
);

CREATE TABLE state (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);

CREATE TABLE embeddings (
    content_hash  TEXT NOT NULL,
    model         TEXT NOT NULL,
    dims          INTEGER NOT NULL,
    vector        BLOB NOT NULL,
    created_at_ms INTEGER NOT NULL,
    PRIMARY KEY (content_hash, model)
);

ALTER TABLE turns ADD COLUMN injected_skills TEXT NULL;
";

/// Long-term memory (crate `metaclaw-memory` owns the queries).
///
/// - `memory_units`: one row per unit. `rowid` is an alias so the FTS tables can join on it
///   cheaply; `id` is the stable text id every API uses (12 hex digits of unix ms + 8 random
///   hex, so ids sort by creation). Times are unix ms. `tags`/`entities` are JSON arrays.
///   `updated_ms` moves on edits only, never on access (the earlier version's bug).
/// - `memory_fts`: external-content FTS5 over every row whatever its status (callers filter
///   scope and status on the base table through the rowid join), so FTS5's own
///   `integrity-check` and `rebuild` stay valid. Triggers keep it in sync: the database does
///   it, not application code. The update trigger fires only when indexed columns change, so
///   access bookkeeping never touches the index.
/// - `memory_fts_cjk`: the same with the trigram tokenizer (SQLite >= 3.34, bundled is newer)
///   so Chinese/Japanese text without spaces is searchable (queries need >= 3 characters).
/// - `memory_versions`: a full snapshot per version (every field an edit or a status change
///   can touch, so any version can be restored); purge deletes them with the unit.
/// - `memory_events`: audit log of every change; purge keeps its event (without content).
/// - `memory_policy` + `memory_policy_history`: the adaptive retrieval policy per scope.
const V3_MEMORY: &str = "
CREATE TABLE memory_units (
    rowid            INTEGER PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    scope            TEXT NOT NULL,
    kind             TEXT NOT NULL CHECK (kind IN ('episodic', 'semantic', 'preference',
                         'project_state', 'working_summary', 'procedural_observation')),
    content          TEXT NOT NULL,
    summary          TEXT NOT NULL DEFAULT '',
    fact_key         TEXT NULL,
    importance       REAL NOT NULL,
    confidence       REAL NOT NULL,
    pinned           INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    status           TEXT NOT NULL DEFAULT 'active'
                         CHECK (status IN ('active', 'superseded', 'archived')),
    superseded_by    TEXT NULL,
    source           TEXT NOT NULL
                         CHECK (source IN ('extracted', 'rules', 'manual', 'import', 'api')),
    source_session   TEXT NULL,
    source_turn      INTEGER NULL,
    tags             TEXT NOT NULL DEFAULT '[]',
    entities         TEXT NOT NULL DEFAULT '[]',
    access_count     INTEGER NOT NULL DEFAULT 0,
    last_accessed_ms INTEGER NULL,
    created_ms       INTEGER NOT NULL,
    updated_ms       INTEGER NOT NULL,
    expires_ms       INTEGER NULL,
    version          INTEGER NOT NULL DEFAULT 1
);

CREATE INDEX memory_units_scope_status_kind ON memory_units(scope, status, kind);
CREATE INDEX memory_units_scope_fact_key ON memory_units(scope, fact_key)
    WHERE fact_key IS NOT NULL;
CREATE INDEX memory_units_scope_updated ON memory_units(scope, updated_ms);
CREATE INDEX memory_units_scope_created ON memory_units(scope, created_ms);

CREATE VIRTUAL TABLE memory_fts USING fts5(
    content, summary, tags, entities,
    content = 'memory_units', content_rowid = 'rowid',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE VIRTUAL TABLE memory_fts_cjk USING fts5(
    content, summary,
    content = 'memory_units', content_rowid = 'rowid',
    tokenize = 'trigram'
);

CREATE TRIGGER memory_units_fts_insert AFTER INSERT ON memory_units BEGIN
    INSERT INTO memory_fts(rowid, content, summary, tags, entities)
        VALUES (new.rowid, new.content, new.summary, new.tags, new.entities);
    INSERT INTO memory_fts_cjk(rowid, content, summary)
        VALUES (new.rowid, new.content, new.summary);
END;

CREATE TRIGGER memory_units_fts_delete AFTER DELETE ON memory_units BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, content, summary, tags, entities)
        VALUES ('delete', old.rowid, old.content, old.summary, old.tags, old.entities);
    INSERT INTO memory_fts_cjk(memory_fts_cjk, rowid, content, summary)
        VALUES ('delete', old.rowid, old.content, old.summary);
END;

CREATE TRIGGER memory_units_fts_update
AFTER UPDATE OF content, summary, tags, entities ON memory_units BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, content, summary, tags, entities)
        VALUES ('delete', old.rowid, old.content, old.summary, old.tags, old.entities);
    INSERT INTO memory_fts(rowid, content, summary, tags, entities)
        VALUES (new.rowid, new.content, new.summary, new.tags, new.entities);
    INSERT INTO memory_fts_cjk(memory_fts_cjk, rowid, content, summary)
        VALUES ('delete', old.rowid, old.content, old.summary);
    INSERT INTO memory_fts_cjk(rowid, content, summary)
        VALUES (new.rowid, new.content, new.summary);
END;

CREATE TABLE memory_versions (
    memory_id     TEXT NOT NULL,
    version       INTEGER NOT NULL,
    kind          TEXT NOT NULL,
    content       TEXT NOT NULL,
    summary       TEXT NOT NULL,
    fact_key      TEXT NULL,
    importance    REAL NOT NULL,
    confidence    REAL NOT NULL,
    pinned        INTEGER NOT NULL,
    tags          TEXT NOT NULL,
    entities      TEXT NOT NULL,
    status        TEXT NOT NULL,
    superseded_by TEXT NULL,
    expires_ms    INTEGER NULL,
    changed_ms    INTEGER NOT NULL,
    actor         TEXT NOT NULL,
    PRIMARY KEY (memory_id, version)
) WITHOUT ROWID;

CREATE TABLE memory_events (
    id        INTEGER PRIMARY KEY,
    at_ms     INTEGER NOT NULL,
    memory_id TEXT NOT NULL,
    scope     TEXT NOT NULL,
    action    TEXT NOT NULL CHECK (action IN ('create', 'update', 'supersede', 'pin', 'unpin',
                  'archive', 'restore', 'purge', 'import')),
    actor     TEXT NOT NULL,
    detail    TEXT NOT NULL DEFAULT '{}'
);

CREATE INDEX memory_events_memory ON memory_events(memory_id, id);
CREATE INDEX memory_events_scope ON memory_events(scope, id);

CREATE TABLE memory_policy (
    scope       TEXT PRIMARY KEY NOT NULL,
    policy_json TEXT NOT NULL,
    updated_ms  INTEGER NOT NULL
);

CREATE TABLE memory_policy_history (
    id       INTEGER PRIMARY KEY,
    scope    TEXT NOT NULL,
    at_ms    INTEGER NOT NULL,
    old_json TEXT NULL,
    new_json TEXT NOT NULL,
    reason   TEXT NOT NULL
);

CREATE INDEX memory_policy_history_scope ON memory_policy_history(scope, at_ms);
";

/// Retrieval reads a scope's pinned units on every turn; without this index that query
/// reads every unit of the scope (about 100 ms at 100,000 units instead of 0.2 ms).
const V4_MEMORY_PINNED_INDEX: &str = "
CREATE INDEX memory_units_pinned ON memory_units(scope, importance DESC, updated_ms DESC)
    WHERE pinned = 1 AND status = 'active';
";

/// Every main turn reads the scope's standing rules (preferences and procedural
/// observations, most important first). Without this index that query visits every such
/// unit and sorts them: about 25 ms per turn with 25,000 of them among 100,000 units
/// instead of 0.1 ms. Covering (`id`, `expires_ms`) and partial, so it holds only the units
/// the query can return and needs no table read.
const V11_MEMORY_STANDING_INDEX: &str = "
CREATE INDEX memory_units_standing
    ON memory_units(scope, importance DESC, created_ms, id, expires_ms)
    WHERE status = 'active' AND pinned = 0 AND kind IN ('preference', 'procedural_observation');
";
