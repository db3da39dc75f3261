//! Listing for people: filters, keyset pagination, stats, and index use at 100,000 units.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::HashSet;

use metaclaw_memory::db::{self, ListQuery, SortBy};
use metaclaw_memory::{Kind, MemoryError, Source, Status};

mod db_common;
use db_common::{open, unit};

#[test]
fn pages_return_every_unit_once_while_units_are_added() {
    let mut db = open();
    let mut expected = HashSet::new();
    for i in 0..53 {
        let mut new = unit("s", Kind::Semantic, &format!("fact {i}"));
        new.importance = (i % 7) as f32 / 7.0;
        // Equal timestamps in runs of five exercise the rowid tie-break.
        let u = db::insert(db.store.connection_mut(), &new, "user", i / 5).unwrap();
        expected.insert(u.id);
    }
    for sort in [
        SortBy::Created,
        SortBy::Updated,
        SortBy::Importance,
        SortBy::Accessed,
    ] {
        let mut seen = Vec::new();
        let mut q = ListQuery {
            scope: Some("s".into()),
            sort,
            limit: 10,
            ..Default::default()
        };
        let mut late = HashSet::new();
        loop {
            let page = db::list(db.store.connection(), &q).unwrap();
            assert!(page.units.len() <= 10);
            assert_eq!(page.total as usize, 53 + late.len());
            seen.extend(page.units.into_iter().map(|u| u.id));
            let mut new = unit("s", Kind::Semantic, "late");
            new.importance = 0.0;
            let u = db::insert(db.store.connection_mut(), &new, "user", 1_000).unwrap();
            late.insert(u.id);
            match page.next_cursor {
                Some(c) => q.cursor = Some(c),
                None => break,
            }
        }
        let unique: HashSet<_> = seen.iter().cloned().collect();
        assert_eq!(unique.len(), seen.len(), "{sort:?}: a unit came twice");
        assert!(expected.is_subset(&unique), "{sort:?}: a unit was skipped");
        // Units added meanwhile sort before the cursor by time; by importance or access
        // they may show up later on, but never twice.
        if matches!(sort, SortBy::Created | SortBy::Updated) {
            assert_eq!(unique, expected, "{sort:?}");
        }
        for id in late {
            db::purge(db.store.connection_mut(), &id, "user", 2_000).unwrap();
        }
    }
}

#[test]
fn pages_skip_nothing_when_units_stay() {
    let mut db = open();
    for i in 0..25 {
        db::insert(
            db.store.connection_mut(),
            &unit("s", Kind::Semantic, "x"),
            "user",
            i,
        )
        .unwrap();
    }
    let first = db::list(
        db.store.connection(),
        &ListQuery {
            limit: 10,
            sort: SortBy::Created,
            ..Default::default()
        },
    )
    .unwrap();
    // Newer units inserted now must not appear on later pages.
    let mut late = HashSet::new();
    for i in 0..5 {
        let u = db::insert(
            db.store.connection_mut(),
            &unit("s", Kind::Semantic, "y"),
            "user",
            100 + i,
        )
        .unwrap();
        late.insert(u.id);
    }
    let mut q = ListQuery {
        limit: 10,
        sort: SortBy::Created,
        cursor: first.next_cursor.clone(),
        ..Default::default()
    };
    let mut ids: Vec<String> = first.units.iter().map(|u| u.id.clone()).collect();
    while q.cursor.is_some() {
        let page = db::list(db.store.connection(), &q).unwrap();
        ids.extend(page.units.into_iter().map(|u| u.id));
        q.cursor = page.next_cursor;
    }
    assert_eq!(ids.len(), 25);
    assert!(ids.iter().all(|id| !late.contains(id)));
    let mut sorted = ids.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(ids, sorted, "created order, newest first");
}

#[test]
fn a_cursor_for_another_sort_or_garbage_is_refused() {
    let db = open();
    for cursor in [
        "updated.0000000000000001.5",
        "nonsense",
        "created.zz.1",
        "created.1.2.3",
    ] {
        let q = ListQuery {
            sort: SortBy::Created,
            cursor: Some(cursor.into()),
            ..Default::default()
        };
        assert!(
            matches!(
                db::list(db.store.connection(), &q),
                Err(MemoryError::Invalid(_))
            ),
            "{cursor}"
        );
    }
}

#[test]
fn filters_combine() {
    let mut db = open();
    let conn = db.store.connection_mut();
    let mut a = unit("s", Kind::Preference, "Prefers Tabs in Rust");
    a.tags = vec!["style".into()];
    a.pinned = true;
    let a = db::insert(conn, &a, "user", 1).unwrap();
    let mut b = unit("s", Kind::ProjectState, "Uses PostgreSQL 16");
    b.source = Source::Extracted;
    b.summary = "database: Rust-free".into();
    let b = db::insert(conn, &b, "extractor", 2).unwrap();
    let c = db::insert(
        conn,
        &unit("t", Kind::Preference, "Über-strict lints"),
        "user",
        3,
    )
    .unwrap();
    let d = db::insert(conn, &unit("s", Kind::Semantic, "old fact"), "user", 4).unwrap();
    db::archive(conn, &d.id, "user", 5).unwrap();

    let ids = |q: ListQuery| -> Vec<String> {
        let page = db::list(db.store.connection(), &q).unwrap();
        assert_eq!(page.total as usize, page.units.len());
        page.units.into_iter().map(|u| u.id).collect()
    };
    let all = ids(ListQuery::default());
    assert_eq!(all, [c.id.clone(), b.id.clone(), a.id.clone()]);
    let scoped = ListQuery {
        scope: Some("s".into()),
        ..Default::default()
    };
    assert_eq!(ids(scoped.clone()), [b.id.clone(), a.id.clone()]);
    assert_eq!(
        ids(ListQuery {
            kinds: vec![Kind::Preference],
            ..scoped.clone()
        }),
        vec![a.id.clone()]
    );
    assert_eq!(
        ids(ListQuery {
            statuses: vec![Status::Archived],
            ..scoped.clone()
        }),
        vec![d.id.clone()]
    );
    assert_eq!(
        ids(ListQuery {
            statuses: vec![Status::Active, Status::Archived],
            ..scoped.clone()
        })
        .len(),
        3
    );
    assert_eq!(
        ids(ListQuery {
            pinned: Some(true),
            ..Default::default()
        }),
        vec![a.id.clone()]
    );
    assert_eq!(
        ids(ListQuery {
            tag: Some(" STYLE ".into()),
            ..Default::default()
        }),
        vec![a.id.clone()]
    );
    assert_eq!(
        ids(ListQuery {
            source: Some(Source::Extracted),
            ..Default::default()
        }),
        vec![b.id.clone()]
    );
    // Substring of content or summary, ASCII case-insensitive.
    assert_eq!(
        ids(ListQuery {
            contains: Some("rUST".into()),
            ..Default::default()
        }),
        [b.id.clone(), a.id.clone()]
    );
    assert_eq!(
        ids(ListQuery {
            contains: Some("Über".into()),
            ..Default::default()
        }),
        vec![c.id.clone()]
    );
    // 50% or _ are literal text, not patterns.
    assert!(
        ids(ListQuery {
            contains: Some("%".into()),
            ..Default::default()
        })
        .is_empty()
    );
}

#[test]
fn stats_count_by_status_kind_and_scope() {
    let mut db = open();
    let conn = db.store.connection_mut();
    let mut p = unit("s", Kind::Preference, "a");
    p.pinned = true;
    db::insert(conn, &p, "user", 1).unwrap();
    let old = db::insert(conn, &unit("s", Kind::Preference, "b"), "user", 2).unwrap();
    let new = db::insert(conn, &unit("s", Kind::Preference, "c"), "user", 3).unwrap();
    db::supersede(conn, &old.id, &new.id, "user", 4).unwrap();
    let gone = db::insert(conn, &unit("t", Kind::Semantic, "d"), "user", 5).unwrap();
    db::archive(conn, &gone.id, "user", 6).unwrap();
    db::insert(conn, &unit("t", Kind::Episodic, "e"), "user", 7).unwrap();

    let all = db::stats(db.store.connection(), None).unwrap();
    assert_eq!(
        (
            all.total,
            all.active,
            all.superseded,
            all.archived,
            all.pinned
        ),
        (5, 3, 1, 1, 1)
    );
    assert_eq!(all.by_kind.get("preference"), Some(&2));
    assert_eq!(all.by_kind.get("episodic"), Some(&1));
    assert_eq!(all.by_kind.get("semantic"), None);
    assert_eq!(all.scopes, [("s".to_owned(), 3), ("t".to_owned(), 2)]);

    let t = db::stats(db.store.connection(), Some("t")).unwrap();
    assert_eq!((t.total, t.active, t.archived, t.pinned), (2, 1, 1, 0));
    assert_eq!(t.scopes, [("t".to_owned(), 2)]);
    let none = db::stats(db.store.connection(), Some("nobody")).unwrap();
    assert_eq!(none, Default::default());
    // The adaptive policy's count agrees, scope by scope.
    let active = |scope| db::active_count(db.store.connection(), scope).unwrap();
    assert_eq!((active("s"), active("t"), active("nobody")), (2, 1, 0));
}

/// 100,000 units over 20 scopes, bulk-loaded in SQL; the listings people use must walk an
/// index (checked in the plan, not timed).
#[test]
fn listing_100k_units_uses_the_indexes() {
    let mut db = open();
    db.store
        .connection_mut()
        .execute_batch(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99999)
             INSERT INTO memory_units (id, scope, kind, content, importance, confidence,
                 status, source, created_ms, updated_ms)
             SELECT printf('%012x%08x', i, i), 'scope' || (i % 20),
                 CASE i % 3 WHEN 0 THEN 'semantic' WHEN 1 THEN 'preference'
                     ELSE 'episodic' END,
                 'unit number ' || i, (i % 10) / 10.0, 0.5,
                 CASE WHEN i % 10 = 0 THEN 'archived' ELSE 'active' END,
                 'manual', i, i FROM n;
             ANALYZE;",
        )
        .unwrap();
    let conn = db.store.connection();
    let scoped = |sort| ListQuery {
        scope: Some("scope7".into()),
        sort,
        limit: 100,
        ..Default::default()
    };
    let plan = db::list_plan(conn, &scoped(SortBy::Updated))
        .unwrap()
        .join("\n");
    assert!(plan.contains("memory_units_scope_updated"), "{plan}");
    let plan = db::list_plan(conn, &scoped(SortBy::Created))
        .unwrap()
        .join("\n");
    assert!(plan.contains("memory_units_scope_created"), "{plan}");
    let kinds = ListQuery {
        kinds: vec![Kind::Preference],
        ..scoped(SortBy::Importance)
    };
    let plan = db::list_plan(conn, &kinds).unwrap().join("\n");
    assert!(plan.contains("USING INDEX memory_units_"), "{plan}");

    let mut q = scoped(SortBy::Updated);
    let mut seen = 0;
    let mut pages = 0;
    loop {
        let page = db::list(conn, &q).unwrap();
        assert_eq!(page.total, 5_000);
        seen += page.units.len();
        pages += 1;
        match page.next_cursor {
            Some(c) => q.cursor = Some(c),
            None => break,
        }
    }
    assert_eq!((seen, pages), (5_000, 50));
    let stats = db::stats(conn, None).unwrap();
    assert_eq!(
        (stats.total, stats.archived, stats.scopes.len()),
        (100_000, 10_000, 20)
    );
}
