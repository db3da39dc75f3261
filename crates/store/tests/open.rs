//! Opening, migrating and refusing database files.

use std::path::Path;

use metaclaw_store::{SCHEMA_VERSION, Store, StoreError};

mod common;

fn user_version(path: &Path) -> rusqlite::Result<i64> {
    rusqlite::Connection::open(path)?.pragma_query_value(None, "user_version", |r| r.get(0))
}

#[test]
fn migrates_an_empty_database_in_a_new_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/home/metaclaw.db");
    let store = Store::open(&path).unwrap();
    assert_eq!(store.stats().unwrap(), Default::default());
    store.integrity_check().unwrap();
    drop(store);
    assert_eq!(user_version(&path).unwrap(), SCHEMA_VERSION);

    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn an_existing_empty_file_is_a_new_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metaclaw.db");
    std::fs::write(&path, b"").unwrap();
    Store::open(&path).unwrap();
    assert_eq!(user_version(&path).unwrap(), SCHEMA_VERSION);
}

#[test]
fn reopening_keeps_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metaclaw.db");
    let mut store = Store::open(&path).unwrap();
    store
        .insert_turns(&[common::turn("s1", "main", 1)])
        .unwrap();
    drop(store);

    let store = Store::open(&path).unwrap();
    assert_eq!(store.stats().unwrap().turns, 1);
    let read_only = Store::open_read_only(&path).unwrap();
    assert_eq!(read_only.session_turns("s1").unwrap().len(), 1);
}

#[test]
fn a_newer_schema_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metaclaw.db");
    drop(Store::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    drop(conn);

    for result in [Store::open(&path), Store::open_read_only(&path)] {
        match result {
            Err(err @ StoreError::TooNew { .. }) => {
                let message = err.to_string();
                assert!(message.contains(&*path.to_string_lossy()), "{message}");
            }
            Err(other) => panic!("unexpected error: {other}"),
            Ok(_) => panic!("a newer database was opened"),
        }
    }
    assert_eq!(user_version(&path).unwrap(), SCHEMA_VERSION + 1);
}

#[test]
fn a_garbage_file_is_refused_and_left_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metaclaw.db");
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 31 % 251) as u8).collect();
    std::fs::write(&path, &garbage).unwrap();

    for result in [Store::open(&path), Store::open_read_only(&path)] {
        match result {
            Err(err @ StoreError::NotADatabase { .. }) => {
                assert!(err.to_string().contains(&*path.to_string_lossy()));
            }
            Err(other) => panic!("unexpected error: {other}"),
            Ok(_) => panic!("garbage was opened as a database"),
        }
    }
    assert_eq!(std::fs::read(&path).unwrap(), garbage);
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "no side files were created");
}

#[test]
fn short_garbage_files_are_refused_and_left_byte_identical() {
    // Shorter than one page and longer than one minimal page: both must be refused by the
    // file checks before SQLite could take them for an empty database and write to them.
    for len in [10usize, 700] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metaclaw.db");
        let garbage: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
        std::fs::write(&path, &garbage).unwrap();
        for result in [Store::open(&path), Store::open_read_only(&path)] {
            assert!(
                matches!(result, Err(StoreError::NotADatabase { .. })),
                "{len} bytes of text were opened as a database"
            );
        }
        assert_eq!(std::fs::read(&path).unwrap(), garbage);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}

#[test]
fn a_damaged_database_is_refused_and_left_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("metaclaw.db");
    let mut store = Store::open(&path).unwrap();
    store
        .insert_turns(&[common::turn("s1", "main", 1)])
        .unwrap();
    drop(store);
    // Keep SQLite's header but wreck the schema page behind it.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[100..400].fill(0xA5);
    std::fs::write(&path, &bytes).unwrap();

    match Store::open(&path) {
        Err(StoreError::NotADatabase { .. }) => {}
        Err(other) => panic!("unexpected error: {other}"),
        Ok(_) => panic!("a damaged database was opened"),
    }
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[test]
fn read_only_needs_an_existing_up_to_date_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.db");
    assert!(matches!(
        Store::open_read_only(&missing),
        Err(StoreError::Read { .. })
    ));
    assert!(!missing.exists());

    let old = dir.path().join("old.db");
    std::fs::write(&old, b"").unwrap();
    assert!(matches!(
        Store::open_read_only(&old),
        Err(StoreError::NeedsMigration { found: 0, .. })
    ));
}
