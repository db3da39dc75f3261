//! Schema v9: a v8 database's turns are converted in place to the compact layout, in batches,
//! and a process killed during the conversion leaves a database that opens, reads every turn,
//! and finishes the job at the next open — no turn lost or altered.
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout)]

mod legacy_v8;
mod workload;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};

use metaclaw_store::{DROPPED_REQUEST_JSON, NewTurn, SCHEMA_VERSION, Store};
use workload::{AGENT_CHAT, Chat, chat_turns, new_turn};

/// Set for the child process of the kill test: the database it converts.
const CHILD_DB: &str = "METACLAW_STORE_TEST_CONVERT_DB";
/// What the child prints once its batches are committed.
const CHILD_READY: &str = "converted-3-batches";
const CHILD_BATCH: usize = 25;

/// A v8 database at `path` holding agent conversations and odd bodies, and its turns.
fn v8_database(path: &Path) -> Vec<NewTurn> {
    let chat = Chat {
        conversations: 4,
        turns: 40,
        ..AGENT_CHAT
    };
    let mut turns = chat_turns(&chat, 3);
    let odd = [
        (String::new(), None),
        (
            "not json at all".repeat(100),
            Some("upstream said no".to_owned()),
        ),
        (
            format!(
                "{{\n  \"messages\" : [\n    {{ \"content\" : \"{}\", \"role\" : \"user\" }} ,\
                 \n    {{\"role\":\"assistant\",\"content\":\"caf\\u00e9 — ünïcödé {}\"}}\n  ],\
                 \n  \"temperature\" : 1.0e0 , \"n\": 1 }}   ",
                "spaced out ".repeat(40),
                "x".repeat(300)
            ),
            Some("{ \"choices\" : [ ] }".to_owned()),
        ),
        (
            format!("[{{\"messages\": [\"{}\"]}}]", "an array ".repeat(80)),
            Some(format!("\"{}\"", "a string reply ".repeat(30))),
        ),
    ];
    for (i, (request, reply)) in odd.into_iter().enumerate() {
        let mut turn = new_turn("odd", request, reply.unwrap_or_default(), 1_000 + i as i64);
        if i == 0 {
            turn.reply_json = None;
        }
        turns.push(turn);
    }
    let mut conn = legacy_v8::create(path).unwrap();
    for batch in turns.chunks(37) {
        legacy_v8::insert(&mut conn, batch).unwrap();
    }
    turns
}

/// Every turn reads back with its request and reply byte for byte, in order.
fn assert_all_read_back(store: &Store, turns: &[NewTurn]) {
    let read = store.recent_turns(turns.len() + 1).unwrap();
    assert_eq!(read.len(), turns.len());
    for (turn, row) in turns.iter().zip(read.iter().rev()) {
        assert_eq!(row.request_json, turn.request_json, "turn {:?}", row.id);
        assert_eq!(row.reply_json, turn.reply_json, "turn {:?}", row.id);
        assert_eq!(row.session_id, turn.session_id);
        assert_eq!(row.input_tokens, turn.input_tokens);
    }
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

#[test]
fn a_v8_database_is_converted_in_place_and_reads_back_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metaclaw.db");
    let turns = v8_database(&path);
    let before = file_size(&path);

    let mut store = Store::open(&path).unwrap();
    // Opening converts nothing (a start is never held up); the conversion runs apart.
    assert_eq!(store.turns_to_convert().unwrap(), turns.len() as u64);
    assert_all_read_back(&store, &turns);
    store.finish_conversion().unwrap();
    let version: i64 = store
        .connection()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    assert_eq!(store.turns_to_convert().unwrap(), 0);
    assert_all_read_back(&store, &turns);
    store.integrity_check().unwrap();
    let legacy: i64 = store
        .connection()
        .query_row(
            "SELECT COUNT(*) FROM turns WHERE request_body IS NULL OR request_json != ''",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(legacy, 0, "every turn is in the new layout");
    store.connection().execute_batch("VACUUM").unwrap();
    drop(store);
    println!(
        "{} turns: v8 file {before} B, converted and vacuumed {} B",
        turns.len(),
        file_size(&path)
    );
    assert!(file_size(&path) < before / 3);
}

#[test]
fn a_conversion_killed_mid_way_is_finished_at_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metaclaw.db");
    let turns = v8_database(&path);

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "conversion_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DB, &path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let ready = stdout
        .lines()
        .map(Result::unwrap)
        .any(|line| line.contains(CHILD_READY));
    assert!(ready, "the child stopped before converting its batches");
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success());
    drop(stdin);

    // As the kill left it: readable, some turns converted, some not.
    let store = Store::open_read_only(&path).unwrap();
    let left = store.turns_to_convert().unwrap();
    assert_eq!(left, (turns.len() - 3 * CHILD_BATCH) as u64);
    assert_all_read_back(&store, &turns);
    drop(store);

    let mut store = Store::open(&path).unwrap();
    store.finish_conversion().unwrap();
    assert_eq!(store.turns_to_convert().unwrap(), 0);
    assert_all_read_back(&store, &turns);
    store.integrity_check().unwrap();
}

#[test]
fn retention_drops_turns_whether_converted_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metaclaw.db");
    let turns = v8_database(&path);
    let mut store = Store::open(&path).unwrap();
    store.convert_turns(50).unwrap();
    // The first 100 turns: half converted, half still in the v8 layout.
    let cutoff = turns[100].created_at_ms;
    assert!(turns[..100].iter().all(|t| t.created_at_ms < cutoff));
    assert!(turns[100..].iter().all(|t| t.created_at_ms >= cutoff));
    let dropped = store.drop_turn_bodies_before(cutoff).unwrap();
    assert_eq!(dropped.turns, 100);
    while store.convert_turns(40).unwrap().is_some() {}

    let read = store.recent_turns(turns.len()).unwrap();
    for (turn, row) in turns.iter().zip(read.iter().rev()) {
        if turn.created_at_ms < cutoff {
            assert_eq!(row.request_json, DROPPED_REQUEST_JSON);
            assert_eq!(row.reply_json, None);
        } else {
            assert_eq!(row.request_json, turn.request_json);
            assert_eq!(row.reply_json, turn.reply_json);
        }
        assert_eq!(row.input_tokens, turn.input_tokens);
    }
    store.integrity_check().unwrap();
}

/// The child of the kill test: converts three batches, says so, and waits to be killed
/// (reading its stdin, which the parent keeps open). Does nothing in a normal test run.
#[test]
fn conversion_child() {
    let Some(path) = std::env::var_os(CHILD_DB) else {
        return;
    };
    let mut store = Store::open(Path::new(&path)).unwrap();
    for _ in 0..3 {
        assert_eq!(store.convert_turns(CHILD_BATCH).unwrap(), Some(CHILD_BATCH));
    }
    println!("{CHILD_READY}");
    let _ = std::io::stdin().read(&mut [0u8; 1]);
    panic!("the parent closed stdin instead of killing this process");
}
