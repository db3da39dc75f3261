//! Edits and status changes: versions, audit events, conflicts, pins, and FTS kept in sync
//! by the database through every change.
#![allow(clippy::unwrap_used, clippy::panic)]

use metaclaw_memory::db::{self, Action, EventQuery, UnitPatch};
use metaclaw_memory::{Kind, MemoryError, Status};

mod db_common;
use db_common::{fts, open, unit};

fn actions(store: &metaclaw_store::Store, id: &str) -> Vec<Action> {
    let q = EventQuery {
        memory_id: Some(id.to_owned()),
        ..Default::default()
    };
    let mut events = db::events(store.connection(), &q).unwrap();
    events.reverse();
    events.into_iter().map(|e| e.action).collect()
}

#[test]
fn every_change_is_a_version_and_an_event_and_fts_follows() {
    let mut db = open();
    let mut new = unit("s", Kind::Preference, "The user likes tabs");
    new.tags = vec!["style".into()];
    let a = db::insert(db.store.connection_mut(), &new, "extractor", 10).unwrap();
    assert_eq!(fts(&db.store, "memory_fts", "tabs"), vec![a.id.clone()]);
    assert_eq!(fts(&db.store, "memory_fts", "style"), vec![a.id.clone()]);

    let patch = UnitPatch {
        content: Some("The user likes spaces".into()),
        tags: Some(vec!["Format".into()]),
        fact_key: Some(Some("pref:indent".into())),
        ..Default::default()
    };
    let conn = db.store.connection_mut();
    let edited = db::update(conn, &a.id, &patch, "user", 20, Some(1)).unwrap();
    assert_eq!(
        (edited.version, edited.updated_ms, edited.created_ms),
        (2, 20, 10)
    );
    assert_eq!(edited.tags, ["format"]);
    assert!(fts(&db.store, "memory_fts", "tabs").is_empty());
    assert!(fts(&db.store, "memory_fts", "style").is_empty());
    assert_eq!(fts(&db.store, "memory_fts", "spaces"), vec![a.id.clone()]);
    assert_eq!(fts(&db.store, "memory_fts", "format"), vec![a.id.clone()]);

    // The same patch again changes nothing and writes nothing.
    let conn = db.store.connection_mut();
    assert_eq!(
        db::update(conn, &a.id, &patch, "user", 25, None).unwrap(),
        edited
    );

    db::set_pinned(conn, &a.id, true, "user", 30).unwrap();
    db::set_pinned(conn, &a.id, true, "user", 31).unwrap();
    db::set_pinned(conn, &a.id, false, "user", 32).unwrap();
    let archived = db::archive(conn, &a.id, "user", 40).unwrap();
    assert_eq!(archived.status, Status::Archived);
    // Archived units stay indexed; callers filter status through the rowid join.
    assert_eq!(fts(&db.store, "memory_fts", "spaces"), vec![a.id.clone()]);
    let conn = db.store.connection_mut();
    let restored = db::restore(conn, &a.id, "user", 50).unwrap();
    assert_eq!((restored.status, restored.version), (Status::Active, 6));

    let history = db::history(db.store.connection(), &a.id).unwrap();
    let versions: Vec<_> = history.iter().map(|v| v.version).collect();
    assert_eq!(versions, [1, 2, 3, 4, 5, 6]);
    assert_eq!(history[0].content, "The user likes tabs");
    assert_eq!(history[1].content, "The user likes spaces");
    assert_eq!(
        (history[0].actor.as_str(), history[1].actor.as_str()),
        ("extractor", "user")
    );
    assert!(history[2].pinned && !history[3].pinned);
    assert_eq!(history[4].status, Status::Archived);
    assert_eq!(history[5].changed_ms, 50);
    assert_eq!(
        actions(&db.store, &a.id),
        [
            Action::Create,
            Action::Update,
            Action::Pin,
            Action::Unpin,
            Action::Archive,
            Action::Restore
        ]
    );

    db::purge(db.store.connection_mut(), &a.id, "user", 60).unwrap();
    assert!(db::get(db.store.connection(), &a.id).unwrap().is_none());
    assert!(fts(&db.store, "memory_fts", "spaces").is_empty());
    assert!(
        db::history(db.store.connection(), &a.id)
            .unwrap()
            .is_empty()
    );
    let events = db::events(
        db.store.connection(),
        &EventQuery {
            memory_id: Some(a.id.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(events[0].action, Action::Purge);
    assert_eq!(events.len(), 7);
    let log = serde_json::to_string(&events).unwrap();
    assert!(!log.contains("spaces") && !log.contains("tabs"), "{log}");
    let missing = db::purge(db.store.connection_mut(), &a.id, "user", 61);
    assert!(matches!(missing, Err(MemoryError::NotFound(_))));
    for table in ["memory_fts", "memory_fts_cjk"] {
        db.store
            .connection()
            .execute(
                &format!("INSERT INTO {table}({table}) VALUES ('integrity-check')"),
                [],
            )
            .unwrap();
    }
}

#[test]
fn chinese_text_is_found_through_the_trigram_index() {
    let mut db = open();
    let conn = db.store.connection_mut();
    let a = db::insert(
        conn,
        &unit("s", Kind::Semantic, "用户喜欢使用中文注释"),
        "user",
        1,
    )
    .unwrap();
    db::insert(
        conn,
        &unit("s", Kind::Semantic, "项目使用数据库"),
        "user",
        2,
    )
    .unwrap();
    assert_eq!(
        fts(&db.store, "memory_fts_cjk", "中文注释"),
        vec![a.id.clone()]
    );
    let patch = UnitPatch {
        content: Some("用户喜欢英文注释".into()),
        ..Default::default()
    };
    db::update(db.store.connection_mut(), &a.id, &patch, "user", 3, None).unwrap();
    assert!(fts(&db.store, "memory_fts_cjk", "中文注释").is_empty());
    assert_eq!(
        fts(&db.store, "memory_fts_cjk", "英文注释"),
        vec![a.id.clone()]
    );
    db::purge(db.store.connection_mut(), &a.id, "user", 4).unwrap();
    assert!(fts(&db.store, "memory_fts_cjk", "英文注释").is_empty());
}

#[test]
fn a_stale_version_is_a_conflict_and_changes_nothing() {
    let mut db = open();
    let conn = db.store.connection_mut();
    let a = db::insert(conn, &unit("s", Kind::Semantic, "one"), "user", 1).unwrap();
    let patch = UnitPatch {
        importance: Some(0.9),
        ..Default::default()
    };
    db::update(conn, &a.id, &patch, "user", 2, Some(1)).unwrap();
    let stale = UnitPatch {
        content: Some("two".into()),
        ..Default::default()
    };
    match db::update(conn, &a.id, &stale, "user", 3, Some(1)) {
        Err(MemoryError::Conflict { expected, found }) => assert_eq!((expected, found), (1, 2)),
        other => panic!("expected a conflict, got {other:?}"),
    }
    let now = db::get(db.store.connection(), &a.id).unwrap().unwrap();
    assert_eq!((now.content.as_str(), now.version), ("one", 2));
    let bad = UnitPatch {
        content: Some(" ".into()),
        ..Default::default()
    };
    let invalid = db::update(db.store.connection_mut(), &a.id, &bad, "user", 4, None);
    assert!(matches!(invalid, Err(MemoryError::Invalid(_))));
    let missing = db::update(db.store.connection_mut(), "nope", &patch, "user", 4, None);
    assert!(matches!(missing, Err(MemoryError::NotFound(_))));
}

#[test]
fn supersede_links_old_to_new_and_restore_undoes_it() {
    let mut db = open();
    let conn = db.store.connection_mut();
    let old = db::insert(conn, &unit("s", Kind::Preference, "tabs"), "extractor", 1).unwrap();
    let new = db::insert(conn, &unit("s", Kind::Preference, "spaces"), "extractor", 2).unwrap();
    let other = db::insert(conn, &unit("t", Kind::Preference, "x"), "extractor", 2).unwrap();

    assert!(matches!(
        db::supersede(conn, &old.id, &old.id, "extractor", 3),
        Err(MemoryError::Invalid(_))
    ));
    assert!(matches!(
        db::supersede(conn, &old.id, &other.id, "extractor", 3),
        Err(MemoryError::Invalid(_))
    ));
    let gone = db::supersede(conn, &old.id, &new.id, "extractor", 3).unwrap();
    assert_eq!(gone.status, Status::Superseded);
    assert_eq!(gone.superseded_by.as_deref(), Some(new.id.as_str()));
    assert!(matches!(
        db::supersede(conn, &old.id, &new.id, "extractor", 4),
        Err(MemoryError::Invalid(_))
    ));
    let active = db::active_in_scope(db.store.connection(), "s", None, 10).unwrap();
    assert_eq!(active, vec![new.clone()]);

    let conn = db.store.connection_mut();
    let back = db::restore(conn, &old.id, "user", 5).unwrap();
    assert_eq!((back.status, back.superseded_by), (Status::Active, None));
    assert_eq!(
        actions(&db.store, &old.id),
        [Action::Create, Action::Supersede, Action::Restore]
    );
}

#[test]
fn pinning_through_a_patch_and_access_bookkeeping() {
    let mut db = open();
    let conn = db.store.connection_mut();
    let a = db::insert(conn, &unit("s", Kind::Semantic, "fact"), "user", 1).unwrap();
    let pin = UnitPatch {
        pinned: Some(true),
        expires_ms: Some(Some(99)),
        ..Default::default()
    };
    let pinned = db::update(conn, &a.id, &pin, "user", 2, None).unwrap();
    assert!(pinned.pinned);
    assert_eq!(pinned.expires_ms, Some(99));
    let clear: UnitPatch = serde_json::from_str(r#"{"expires_ms": null}"#).unwrap();
    assert_eq!(clear.expires_ms, Some(None));
    let cleared = db::update(conn, &a.id, &clear, "user", 3, None).unwrap();
    assert_eq!(cleared.expires_ms, None);

    let counted = db::record_access(
        conn,
        &[(a.id.as_str(), 50), (a.id.as_str(), 40), ("gone", 1)],
    )
    .unwrap();
    assert_eq!(counted, 2);
    let read = db::get(db.store.connection(), &a.id).unwrap().unwrap();
    assert_eq!((read.access_count, read.last_accessed_ms), (2, Some(50)));
    // Access is not an edit: no version, no new updated time, no event.
    assert_eq!((read.version, read.updated_ms), (cleared.version, 3));
    assert_eq!(db::history(db.store.connection(), &a.id).unwrap().len(), 3);
    assert_eq!(actions(&db.store, &a.id).len(), 3);
}
