//! WAL lets many readers run while one writer inserts.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;

use metaclaw_store::Store;

mod common;

const READERS: usize = 6;
const BATCHES: usize = 60;
const BATCH: usize = 20;

#[test]
fn readers_see_consistent_snapshots_while_a_writer_inserts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metaclaw.db");
    let mut writer = Store::open(&path).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(READERS + 1));

    let readers: Vec<_> = (0..READERS)
        .map(|_| {
            let (path, done, start) = (path.clone(), done.clone(), start.clone());
            thread::spawn(move || {
                let store = Store::open_read_only(&path).unwrap();
                start.wait();
                let mut last = 0;
                loop {
                    let finished = done.load(Ordering::Acquire);
                    let stats = store.stats().unwrap();
                    // Batches are atomic: a reader never sees part of one.
                    assert_eq!(stats.turns % BATCH as u64, 0);
                    assert!(stats.turns >= last);
                    last = stats.turns;
                    store.recent_turns(5).unwrap();
                    if finished {
                        return last;
                    }
                }
            })
        })
        .collect();

    start.wait();
    for b in 0..BATCHES {
        let batch: Vec<_> = (0..BATCH)
            .map(|i| common::turn(&format!("s{}", i % 4), "main", (b * BATCH + i) as i64))
            .collect();
        writer.insert_turns(&batch).unwrap();
    }
    done.store(true, Ordering::Release);

    for reader in readers {
        assert_eq!(reader.join().unwrap(), (BATCHES * BATCH) as u64);
    }
    writer.integrity_check().unwrap();
}
