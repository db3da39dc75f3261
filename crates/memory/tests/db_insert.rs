//! Creating and reading units: validation, normalisation, ids, the first version and event.
#![allow(clippy::unwrap_used, clippy::panic)]

use metaclaw_memory::db;
use metaclaw_memory::{Kind, MemoryError, Source, Status};

mod db_common;
use db_common::{open, unit};

#[test]
fn insert_normalises_and_get_reads_back() {
    let mut db = open();
    let mut new = unit("user:ann", Kind::Preference, "  Prefers tabs.  ");
    new.importance = 1.7;
    new.confidence = -0.2;
    new.tags = vec![" Rust ".into(), "rust".into(), "".into(), "Editor".into()];
    new.entities = vec!["Neovim".into(), "Neovim".into()];
    new.fact_key = Some("pref:indent".into());
    new.source = Source::Extracted;
    new.source_session = Some("s1".into());
    new.source_turn = Some(3);
    let stored = db::insert(db.store.connection_mut(), &new, "extractor", 1_000).unwrap();

    assert_eq!(stored.id.len(), 20);
    assert!(stored.id.starts_with("0000000003e8"));
    assert_eq!(stored.content, "Prefers tabs.");
    assert_eq!((stored.importance, stored.confidence), (1.0, 0.0));
    assert_eq!(stored.tags, ["rust", "editor"]);
    assert_eq!(stored.entities, ["Neovim"]);
    assert_eq!(stored.status, Status::Active);
    assert_eq!(
        (stored.version, stored.created_ms, stored.updated_ms),
        (1, 1_000, 1_000)
    );
    assert_eq!(stored.source_turn, Some(3));

    let read = db::get(db.store.connection(), &stored.id).unwrap().unwrap();
    assert_eq!(read, stored);
    assert!(db::get(db.store.connection(), "nope").unwrap().is_none());
}

#[test]
fn ids_sort_by_creation_time() {
    let mut db = open();
    let a = db::insert(
        db.store.connection_mut(),
        &unit("s", Kind::Semantic, "a"),
        "user",
        5,
    )
    .unwrap();
    let b = db::insert(
        db.store.connection_mut(),
        &unit("s", Kind::Semantic, "b"),
        "user",
        6,
    )
    .unwrap();
    let c = db::insert(
        db.store.connection_mut(),
        &unit("s", Kind::Semantic, "c"),
        "user",
        6,
    )
    .unwrap();
    assert!(a.id < b.id && a.id < c.id);
    assert_ne!(b.id, c.id);
}

#[test]
fn invalid_units_are_refused() {
    let mut db = open();
    let conn = db.store.connection_mut();
    let empty = db::insert(conn, &unit("s", Kind::Semantic, "  "), "user", 1);
    assert!(matches!(empty, Err(MemoryError::Invalid(_))));
    let no_scope = db::insert(conn, &unit(" ", Kind::Semantic, "x"), "user", 1);
    assert!(matches!(no_scope, Err(MemoryError::Invalid(_))));
    let long = "字".repeat(db::MAX_CONTENT_CHARS + 1);
    let too_long = db::insert(conn, &unit("s", Kind::Semantic, &long), "user", 1);
    assert!(matches!(too_long, Err(MemoryError::Invalid(_))));
    let just_fits = "字".repeat(db::MAX_CONTENT_CHARS);
    db::insert(conn, &unit("s", Kind::Semantic, &just_fits), "user", 1).unwrap();
}

#[test]
fn reconciliation_reads_by_scope_and_fact_key() {
    let mut db = open();
    let conn = db.store.connection_mut();
    let mut pref = unit("s", Kind::Preference, "tabs");
    pref.fact_key = Some("pref:indent".into());
    let p = db::insert(conn, &pref, "extractor", 1).unwrap();
    db::insert(conn, &unit("s", Kind::Semantic, "fact"), "extractor", 2).unwrap();
    db::insert(conn, &unit("other", Kind::Preference, "x"), "extractor", 3).unwrap();

    let conn = db.store.connection();
    assert_eq!(db::active_in_scope(conn, "s", None, 10).unwrap().len(), 2);
    let prefs = db::active_in_scope(conn, "s", Some(Kind::Preference), 10).unwrap();
    assert_eq!(prefs, std::slice::from_ref(&p));
    assert_eq!(db::by_fact_key(conn, "s", "pref:indent").unwrap(), [p]);
    assert!(
        db::by_fact_key(conn, "other", "pref:indent")
            .unwrap()
            .is_empty()
    );
}
