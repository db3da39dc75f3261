//! Storing turns and sessions.

use metaclaw_store::{SessionRow, Store, StoreStats};

mod common;
use common::turn;

#[test]
fn turn_indexes_continue_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metaclaw.db");
    let mut store = Store::open(&path).unwrap();
    store
        .insert_turns(&[
            turn("a", "main", 1),
            turn("b", "main", 2),
            turn("a", "side", 3),
        ])
        .unwrap();
    drop(store);

    let mut store = Store::open(&path).unwrap();
    let ids = store
        .insert_turns(&[turn("a", "main", 4), turn("b", "main", 5)])
        .unwrap();
    assert_eq!(ids.len(), 2);
    let a: Vec<u64> = store
        .session_turns("a")
        .unwrap()
        .iter()
        .map(|t| t.turn_index)
        .collect();
    assert_eq!(a, [0, 1, 2]);
    let b: Vec<u64> = store
        .session_turns("b")
        .unwrap()
        .iter()
        .map(|t| t.turn_index)
        .collect();
    assert_eq!(b, [0, 1]);
    assert_eq!(store.recent_turns(1).unwrap()[0].id, ids[1]);
}

#[test]
fn a_failing_row_rolls_back_the_whole_batch() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("metaclaw.db")).unwrap();
    store.insert_turns(&[turn("a", "main", 1)]).unwrap();

    let batch = [
        turn("a", "main", 2),
        turn("new", "main", 3),
        turn("a", "bogus", 4),
    ];
    assert!(store.insert_turns(&batch).is_err());

    assert_eq!(store.stats().unwrap().turns, 1);
    assert_eq!(store.stats().unwrap().sessions, 1);
    assert!(store.session_turns("new").unwrap().is_empty());
    let a = store.session_turns("a").unwrap();
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].created_at_ms, 1);
    store.integrity_check().unwrap();
}

#[test]
fn stored_rows_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("metaclaw.db")).unwrap();
    let mut failed = turn("s", "main", 7);
    failed.reply_json = None;
    failed.status = 502;
    failed.error = Some("upstream closed".to_owned());
    failed.input_tokens = None;
    failed.output_tokens = None;
    failed.ttft_ms = None;
    store.insert_turns(&[failed.clone()]).unwrap();

    let row = &store.session_turns("s").unwrap()[0];
    assert_eq!(row.turn_index, 0);
    assert_eq!(row.turn_type, failed.turn_type);
    assert_eq!(row.upstream_protocol, "anthropic");
    assert_eq!(row.reply_json, None);
    assert_eq!(row.status, 502);
    assert_eq!(row.error.as_deref(), Some("upstream closed"));
    assert_eq!(row.input_tokens, None);
    assert_eq!(row.ttft_ms, None);
    assert_eq!(row.total_ms, 40.0);
    assert_eq!(row.skill_generation, 0);
    assert_eq!(row.created_at_ms, 7);
}

#[test]
fn session_lifecycle_and_stats() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("metaclaw.db")).unwrap();
    store.session_started("s", "work", 100).unwrap();
    store.session_started("s", "work", 150).unwrap();
    let mut bad = turn("s", "main", 200);
    bad.status = 429;
    store
        .insert_turns(&[
            turn("s", "main", 120),
            bad,
            turn("s", "side", 180),
            turn("t", "main", 300),
        ])
        .unwrap();
    assert_eq!(
        store.stats().unwrap(),
        StoreStats {
            turns: 4,
            sessions: 2,
            open_sessions: 2,
            errors: 1
        }
    );

    assert!(store.session_ended("s", "explicit", 400).unwrap());
    assert!(
        !store.session_ended("s", "shutdown", 500).unwrap(),
        "first end wins"
    );
    assert!(!store.session_ended("unknown", "idle", 500).unwrap());
    assert_eq!(store.stats().unwrap().open_sessions, 1);

    // A resumed conversation reopens its session and keeps numbering its turns.
    store.session_started("s", "work", 600).unwrap();
    assert_eq!(store.stats().unwrap().open_sessions, 2);
    store.insert_turns(&[turn("s", "main", 610)]).unwrap();
    assert_eq!(store.session_turns("s").unwrap()[3].turn_index, 3);
    store.integrity_check().unwrap();
}

#[test]
fn session_counters_follow_turns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metaclaw.db");
    let mut store = Store::open(&path).unwrap();
    store.session_started("s", "work", 100).unwrap();
    store
        .insert_turns(&[
            turn("s", "main", 300),
            turn("s", "side", 200),
            turn("s", "main", 250),
        ])
        .unwrap();
    store.session_ended("s", "idle", 900).unwrap();
    drop(store);

    let store = Store::open_read_only(&path).unwrap();
    assert_eq!(
        store.session("s").unwrap(),
        Some(SessionRow {
            id: "s".to_owned(),
            scope: "work".to_owned(),
            started_at_ms: 100,
            last_turn_at_ms: 300,
            ended_at_ms: Some(900),
            end_reason: Some("idle".to_owned()),
            main_turns: 2,
            side_turns: 1,
        })
    );
    assert_eq!(store.session("unknown").unwrap(), None);
}
