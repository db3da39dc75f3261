//! The compact layout on disk (schema v9): an agent's conversations, whole history resent each
//! turn, cost under 2 KB per turn, and every request and reply reads back byte for byte
//! through each reader. `examples/disk_bench.rs` measures the full workload.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

mod workload;

use std::path::Path;

use metaclaw_store::{End, Store, TurnId, TurnRange};
use workload::{AGENT_CHAT, Chat, chat_turns};

/// The file's size after `VACUUM`: what the data takes, without free pages.
fn vacuumed_size(path: &Path) -> u64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch("VACUUM").unwrap();
    drop(conn);
    std::fs::metadata(path).unwrap().len()
}

#[test]
fn agent_conversations_cost_under_2_kb_per_turn_and_read_back_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.db");
    drop(Store::open(&empty).unwrap());
    let empty = vacuumed_size(&empty);

    let chat = Chat {
        conversations: 3,
        ..AGENT_CHAT
    };
    let turns = chat_turns(&chat, 11);
    let path = dir.path().join("metaclaw.db");
    let mut store = Store::open(&path).unwrap();
    for turn in &turns {
        store.insert_turns(std::slice::from_ref(turn)).unwrap();
    }

    let mut read = Vec::new();
    // The conversations take turns: the first turns are one of each.
    for first in turns.iter().take(chat.conversations) {
        let session = &first.session_id;
        let rows = store.session_turns(session).unwrap();
        let learnable = store
            .learnable_turns(session, TurnRange::default(), rows.len(), End::Newest)
            .unwrap();
        assert_eq!(learnable, rows);
        read.extend(rows);
    }
    read.sort_by_key(|r| r.id);
    assert_eq!(read.len(), turns.len());
    for (turn, row) in turns.iter().zip(&read) {
        assert_eq!(row.request_json, turn.request_json);
        assert_eq!(row.reply_json, turn.reply_json);
    }
    let labels = store.main_turns_after(TurnId(0), turns.len()).unwrap();
    assert!(
        turns
            .iter()
            .zip(&labels)
            .all(|(t, l)| t.request_json == l.request_json)
    );
    store.integrity_check().unwrap();
    drop(store);

    let size = vacuumed_size(&path);
    let per_turn = (size - empty) / turns.len() as u64;
    println!(
        "{} turns: {size} B after VACUUM, {empty} B of it the empty database, {per_turn} B per turn",
        turns.len()
    );
    assert!(per_turn < 2048, "{per_turn} B per turn");
}
