//! Schema v2: migration from v1, injected blocks, the skill event log, state, embeddings.
#![allow(clippy::unwrap_used, clippy::panic)]

use metaclaw_store::{NewBlock, NewSkillEvent, RejectedSkill, SCHEMA_VERSION, Store};

mod common;
use common::turn;

/// The v1 schema exactly as it shipped, so the upgrade path is tested against real v1 files.
const V1_SCHEMA: &str = "
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
INSERT INTO sessions (id, scope, started_at_ms, last_turn_at_ms, main_turns)
    VALUES ('old', 'default', 5, 5, 1);
INSERT INTO turns (session_id, turn_index, turn_type, scope, client_protocol,
    upstream_protocol, upstream, model, request_json, status, overhead_ms, total_ms,
    created_at_ms)
    VALUES ('old', 0, 'main', 'default', 'openai', 'openai', 'primary', 'm', '{}', 200,
    0.1, 1.0, 5);
PRAGMA user_version = 1;
";

fn event(at_ms: i64, outcome: &str, added: &[&str], improved: &[&str]) -> NewSkillEvent {
    NewSkillEvent {
        at_ms,
        trigger: "session_end".to_owned(),
        session_ids: vec!["s1".to_owned(), "s2".to_owned()],
        model: Some("gpt-x".to_owned()),
        outcome: outcome.to_owned(),
        added: added.iter().map(|s| (*s).to_owned()).collect(),
        improved: improved.iter().map(|s| (*s).to_owned()).collect(),
        rejected: vec![RejectedSkill {
            name: "dup".to_owned(),
            reason: "duplicate".to_owned(),
        }],
        error: (outcome == "failed").then(|| "model timed out".to_owned()),
        generation: at_ms,
        detail: serde_json::json!({"turns": 3}),
    }
}

#[test]
fn a_v1_database_upgrades_and_keeps_its_turns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metaclaw.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(V1_SCHEMA)
        .unwrap();

    let mut store = Store::open(&path).unwrap();
    let old = store.session_turns("old").unwrap();
    assert_eq!(old.len(), 1);
    assert_eq!(old[0].created_at_ms, 5);
    assert!(old[0].injected_skills.is_empty());
    let version: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);

    // New columns and tables work on the upgraded file.
    let mut with_skills = turn("old", "main", 6);
    with_skills.injected_skills = vec!["debugging".to_owned(), "git".to_owned()];
    store
        .insert_turns(&[with_skills, turn("old", "side", 7)])
        .unwrap();
    let turns = store.session_turns("old").unwrap();
    assert_eq!(turns[1].turn_index, 1);
    assert_eq!(turns[1].injected_skills, ["debugging", "git"]);
    assert!(turns[2].injected_skills.is_empty());
    store.state_set("k", "v").unwrap();
    assert_eq!(store.state_get("k").unwrap().as_deref(), Some("v"));
    store
        .insert_skill_event(&event(1, "added", &["a"], &[]))
        .unwrap();
    store.put_embedding("h", "m", &[1.0], 1).unwrap();
    store
        .put_injected_blocks(&[NewBlock {
            session_id: "old".to_owned(),
            message_key: "m0".to_owned(),
            block: "b".to_owned(),
            at_ms: 1,
        }])
        .unwrap();
    store.integrity_check().unwrap();
}

fn block(session: &str, key: &str, text: &str, at_ms: i64) -> NewBlock {
    NewBlock {
        session_id: session.to_owned(),
        message_key: key.to_owned(),
        block: text.to_owned(),
        at_ms,
    }
}

#[test]
fn the_first_block_for_a_message_wins_and_old_ones_are_pruned() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("metaclaw.db")).unwrap();
    store
        .put_injected_blocks(&[block("s", "m0", "first", 10), block("t", "m0", "other", 30)])
        .unwrap();
    store
        .put_injected_blocks(&[block("s", "m0", "second", 20), block("s", "m1", "next", 20)])
        .unwrap();
    assert_eq!(
        store.injected_blocks("s").unwrap(),
        [
            ("m0".to_owned(), "first".to_owned()),
            ("m1".to_owned(), "next".to_owned())
        ]
    );
    assert_eq!(store.prune_injected_blocks(20).unwrap(), 1);
    assert_eq!(store.injected_blocks("s").unwrap().len(), 1);
    assert_eq!(store.injected_blocks("t").unwrap().len(), 1);
    assert!(store.injected_blocks("unknown").unwrap().is_empty());
    let mut sessions = store.sessions_with_blocks().unwrap();
    sessions.sort();
    assert_eq!(sessions, ["s", "t"]);
}

#[test]
fn skill_events_come_back_newest_first_with_counts() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("metaclaw.db")).unwrap();
    let counts = store.skill_event_counts().unwrap();
    assert_eq!(counts.events, 0);
    assert_eq!(counts.last_at_ms, None);

    let first = store
        .insert_skill_event(&event(100, "added", &["a", "b"], &["c"]))
        .unwrap();
    store
        .insert_skill_event(&event(300, "failed", &[], &[]))
        .unwrap();
    let third = store
        .insert_skill_event(&event(200, "nothing", &[], &["d", "e"]))
        .unwrap();
    assert!(third > first);

    let events = store.skill_events(10).unwrap();
    let at: Vec<i64> = events.iter().map(|e| e.at_ms).collect();
    assert_eq!(at, [300, 200, 100]);
    let oldest = &events[2];
    assert_eq!(oldest.id, first);
    assert_eq!(oldest.added, ["a", "b"]);
    assert_eq!(oldest.session_ids, ["s1", "s2"]);
    assert_eq!(oldest.rejected[0].reason, "duplicate");
    assert_eq!(oldest.detail, serde_json::json!({"turns": 3}));
    assert_eq!(events[0].error.as_deref(), Some("model timed out"));
    assert_eq!(store.skill_events(1).unwrap().len(), 1);

    let counts = store.skill_event_counts().unwrap();
    assert_eq!(counts.events, 3);
    assert_eq!(counts.failed, 1);
    assert_eq!(counts.skills_added, 2);
    assert_eq!(counts.skills_improved, 3);
    assert_eq!(counts.last_at_ms, Some(300));
}

#[test]
fn embeddings_round_trip_and_a_damaged_blob_reads_as_absent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metaclaw.db");
    let mut store = Store::open(&path).unwrap();
    let vector = [0.25_f32, -1.5, 3.0e-7, f32::MAX];
    store.put_embedding("hash", "model-a", &vector, 1).unwrap();
    assert_eq!(store.embedding("hash", "model-a").unwrap().unwrap(), vector);
    assert_eq!(store.embedding("hash", "model-b").unwrap(), None);
    store
        .put_embedding("hash", "model-a", &[1.0, 2.0], 2)
        .unwrap();
    assert_eq!(
        store.embedding("hash", "model-a").unwrap().unwrap(),
        [1.0, 2.0]
    );

    rusqlite::Connection::open(&path)
        .unwrap()
        .execute("UPDATE embeddings SET vector = x'0102030405'", [])
        .unwrap();
    assert_eq!(store.embedding("hash", "model-a").unwrap(), None);
}

#[test]
fn state_values_are_upserted() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("metaclaw.db")).unwrap();
    assert_eq!(store.state_get("evolver.last_run").unwrap(), None);
    store.state_set("evolver.last_run", "1").unwrap();
    store.state_set("evolver.last_run", "2").unwrap();
    store.state_set("other", "x").unwrap();
    assert_eq!(
        store.state_get("evolver.last_run").unwrap().as_deref(),
        Some("2")
    );
    assert_eq!(store.state_get("other").unwrap().as_deref(), Some("x"));
}
