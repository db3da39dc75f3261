//! JSONL export and import: round trip through a purge, idempotence, broken lines.
#![allow(clippy::unwrap_used, clippy::panic)]

use metaclaw_memory::db::{self, Action, EventQuery, UnitPatch};
use metaclaw_memory::{Kind, MemoryUnit, Status};

mod db_common;
use db_common::{fts, open, unit};

fn seed(db: &mut db_common::Db) -> Vec<MemoryUnit> {
    let conn = db.store.connection_mut();
    let mut a = unit("s", Kind::Preference, "Prefers tabs");
    a.tags = vec!["style".into()];
    a.entities = vec!["Neovim".into()];
    a.fact_key = Some("pref:indent".into());
    a.pinned = true;
    a.source_session = Some("sess".into());
    a.source_turn = Some(4);
    a.expires_ms = Some(9_999);
    let a = db::insert(conn, &a, "extractor", 10).unwrap();
    let b = db::insert(
        conn,
        &unit("s", Kind::Semantic, "用户喜欢中文注释"),
        "user",
        20,
    )
    .unwrap();
    let c = db::insert(conn, &unit("s", Kind::Semantic, "old"), "user", 30).unwrap();
    db::insert(
        conn,
        &unit("other", Kind::Episodic, "elsewhere"),
        "user",
        40,
    )
    .unwrap();
    let patch = UnitPatch {
        importance: Some(0.8),
        ..Default::default()
    };
    db::update(conn, &b.id, &patch, "user", 50, None).unwrap();
    db::archive(conn, &c.id, "user", 60).unwrap();
    db::record_access(conn, &[(a.id.as_str(), 70)]).unwrap();
    [&a.id, &b.id, &c.id]
        .into_iter()
        .map(|id| db::get(db.store.connection(), id).unwrap().unwrap())
        .collect()
}

#[test]
fn export_purge_import_round_trips() {
    let mut db = open();
    let units = seed(&mut db);
    let mut out = Vec::new();
    let n = db::export_jsonl(db.store.connection(), Some("s"), true, &mut out).unwrap();
    assert_eq!(n, 3);
    let mut active_only = Vec::new();
    let n = db::export_jsonl(db.store.connection(), Some("s"), false, &mut active_only).unwrap();
    assert_eq!(n, 2);
    let mut everything = Vec::new();
    assert_eq!(
        db::export_jsonl(db.store.connection(), None, true, &mut everything).unwrap(),
        4
    );

    let text = String::from_utf8(out.clone()).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    for field in [
        "id", "scope", "kind", "content", "pinned", "status", "tags", "version",
    ] {
        assert!(first.get(field).is_some(), "{field}");
    }

    for u in &units {
        db::purge(db.store.connection_mut(), &u.id, "user", 80).unwrap();
    }
    assert!(fts(&db.store, "memory_fts_cjk", "中文注释").is_empty());

    let report = db::import_jsonl(db.store.connection_mut(), &out[..], "import", 90).unwrap();
    assert_eq!((report.imported, report.skipped_existing), (3, 0));
    assert!(report.errors.is_empty());
    for u in &units {
        assert_eq!(&db::get(db.store.connection(), &u.id).unwrap().unwrap(), u);
    }
    let archived = units.iter().find(|u| u.status == Status::Archived).unwrap();
    assert_eq!(archived.content, "old");
    assert_eq!(
        fts(&db.store, "memory_fts_cjk", "中文注释"),
        [units[1].id.clone()]
    );
    let history = db::history(db.store.connection(), &units[1].id).unwrap();
    assert_eq!((history.len(), history[0].version), (1, 2));
    let events = db::events(
        db.store.connection(),
        &EventQuery {
            memory_id: Some(units[0].id.clone()),
            limit: 1,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        (events[0].action, events[0].actor.as_str()),
        (Action::Import, "import")
    );

    // Importing again changes nothing.
    let again = db::import_jsonl(db.store.connection_mut(), &out[..], "import", 91).unwrap();
    assert_eq!((again.imported, again.skipped_existing), (0, 3));
}

#[test]
fn a_broken_line_is_reported_and_the_rest_imports() {
    let mut db = open();
    let units = seed(&mut db);
    let mut out = Vec::new();
    db::export_jsonl(db.store.connection(), Some("s"), true, &mut out).unwrap();
    for u in &units {
        db::purge(db.store.connection_mut(), &u.id, "user", 80).unwrap();
    }
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut empty_content: serde_json::Value = serde_json::from_str(lines[2]).unwrap();
    empty_content["content"] = "".into();
    let mut bad_kind: serde_json::Value = serde_json::from_str(lines[2]).unwrap();
    bad_kind["kind"] = "gossip".into();
    let file = [
        lines[0].to_owned(),
        "{not json".to_owned(),
        String::new(),
        empty_content.to_string(),
        bad_kind.to_string(),
        lines[1].to_owned(),
    ]
    .join("\n");
    let mut bytes = file.into_bytes();
    bytes.extend_from_slice(b"\n\xff\xfe\n");

    let report = db::import_jsonl(db.store.connection_mut(), &bytes[..], "import", 90).unwrap();
    assert_eq!((report.imported, report.skipped_existing), (2, 0));
    let lines_with_errors: Vec<u64> = report.errors.iter().map(|(n, _)| *n).collect();
    assert_eq!(lines_with_errors, [2, 4, 5, 7], "{:?}", report.errors);
    assert!(report.errors[1].1.contains("content is empty"));
    assert!(
        db::get(db.store.connection(), &units[0].id)
            .unwrap()
            .is_some()
    );
    assert!(
        db::get(db.store.connection(), &units[1].id)
            .unwrap()
            .is_some()
    );
    assert!(
        db::get(db.store.connection(), &units[2].id)
            .unwrap()
            .is_none()
    );
}

#[test]
fn an_oversized_scope_or_a_negative_expiry_is_refused_on_import() {
    let mut db = open();
    let units = seed(&mut db);
    let mut out = Vec::new();
    db::export_jsonl(db.store.connection(), Some("s"), true, &mut out).unwrap();
    for u in &units {
        db::purge(db.store.connection_mut(), &u.id, "user", 80).unwrap();
    }
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut long_scope: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    long_scope["scope"] = "x".repeat(5_000).into();
    let mut negative: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    negative["expires_ms"] = (-5).into();
    let file = [
        long_scope.to_string(),
        negative.to_string(),
        lines[2].to_owned(),
    ]
    .join("\n");
    let report =
        db::import_jsonl(db.store.connection_mut(), file.as_bytes(), "import", 90).unwrap();
    assert_eq!(report.imported, 1, "{:?}", report.errors);
    assert!(
        report.errors[0].1.contains("scope has 5000 characters"),
        "{:?}",
        report.errors
    );
    assert!(
        report.errors[1].1.contains("expires_ms"),
        "{:?}",
        report.errors
    );
}
