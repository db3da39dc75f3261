//! Schema migrations. Append-only: migration `i` (0-based) takes the database from
//! `user_version = i` to `i + 1`. Never edit a migration that has shipped.

pub(crate) const MIGRATIONS: &[&str] = &[V1_SESSIONS_TURNS, V2_BLOCKS_EVENTS_STATE_EMBEDDINGS];

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
