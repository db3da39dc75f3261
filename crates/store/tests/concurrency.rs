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

/// What the waiting writer's thread reports: its busy handler ran (it is waiting for the
/// lock), or the write finished.
enum Report {
    Waiting,
    Done(Result<(), String>),
}

static REPORTS: std::sync::Mutex<Option<std::sync::mpsc::Sender<Report>>> =
    std::sync::Mutex::new(None);

/// A busy handler that tells the test it is waiting, then retries.
fn report_waiting(_count: i32) -> bool {
    if let Ok(reports) = REPORTS.lock()
        && let Some(tx) = reports.as_ref()
    {
        let _ = tx.send(Report::Waiting);
    }
    thread::yield_now();
    true
}

/// Every write that reads before it writes takes the write lock first, so a writer holding it
/// makes it wait (busy handler) rather than fail at once with "database is locked": SQLite
/// never waits for a read transaction to become a write one. Seen as an engine that could not
/// start (the remembered-blocks prune racing the recorder's first write).
#[test]
fn writes_wait_for_another_writer_instead_of_failing() {
    type Write = fn(&mut Store) -> Result<(), metaclaw_store::StoreError>;
    let writes: [(&str, Write); 5] = [
        ("prune_injected_blocks", |s| {
            s.prune_injected_blocks(i64::MAX).map(|_| ())
        }),
        ("put_injected_blocks", |s| {
            s.put_injected_blocks(&[metaclaw_store::NewBlock {
                session_id: "s".into(),
                message_key: "k".into(),
                block: "b".into(),
                at_ms: 1,
            }])
        }),
        ("insert_turns", |s| {
            s.insert_turns(&[common::turn("s", "main", 1)]).map(|_| ())
        }),
        ("set_follow_ups", |s| s.set_follow_ups(&[])),
        ("add_learning_usage", |s| {
            s.add_learning_usage(&[metaclaw_store::LearningUsage {
                day: "2026-12-07".into(),
                purpose: "memory".into(),
                calls: 1,
                failed: 0,
                input_tokens: 1,
                output_tokens: 1,
                cache_read_tokens: 0,
                cache_write_tokens: 0,
            }])
        }),
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metaclaw.db");
    let mut holder = Store::open(&path).unwrap();
    for (name, write) in writes {
        let (tx, rx) = std::sync::mpsc::channel();
        *REPORTS.lock().unwrap() = Some(tx.clone());
        // Opened (and migrated) before the lock is taken.
        let mut store = Store::open(&path).unwrap();
        store
            .connection_mut()
            .busy_handler(Some(report_waiting))
            .unwrap();
        holder
            .connection_mut()
            .execute_batch(
                "BEGIN IMMEDIATE;
                 INSERT INTO state (key, value) VALUES ('held', '1')
                 ON CONFLICT(key) DO UPDATE SET value = value || '1';",
            )
            .unwrap();
        let writer = thread::spawn(move || {
            let result = write(&mut store).map_err(|e| e.to_string());
            let _ = tx.send(Report::Done(result));
        });
        match rx.recv().unwrap() {
            Report::Waiting => {}
            Report::Done(r) => panic!("{name} did not wait for the lock: {r:?}"),
        }
        holder.connection_mut().execute_batch("COMMIT").unwrap();
        loop {
            if let Report::Done(r) = rx.recv().unwrap() {
                assert_eq!(r, Ok(()), "{name}");
                break;
            }
        }
        writer.join().unwrap();
        *REPORTS.lock().unwrap() = None;
    }
    holder.integrity_check().unwrap();
}
