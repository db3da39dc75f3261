#![allow(clippy::unwrap_used, clippy::panic)]
//! User text is never FTS syntax, and search never writes.

#[path = "search_support.rs"]
mod support;

use metaclaw_memory::{RetrievalPolicy, SearchQuery, pinned, retrieve_for_prompt, search};
use metaclaw_store::Store;
use support::{Fixture, NOW, query, seed};

const NASTY: &[&str] = &[
    "NEAR(",
    "NEAR(time format, 3)",
    "\"",
    "\"unbalanced quote",
    "\"\"\"",
    "*",
    "time*",
    "-",
    "-deploy",
    ":",
    "content:secret",
    "summary : tabs",
    "{content summary}: tabs",
    "AND",
    "OR NOT AND",
    "tabs AND",
    "^start",
    "a + b",
    "(",
    ")",
    "((tabs)",
    "'; DROP TABLE memory_units; --",
    "%_%",
    "\0",
    "🙂 emoji 🙂",
    "",
    "   ",
    "时",
    "\"时间\" NEAR(格式",
];

#[test]
fn fts_syntax_in_user_text_never_errors() {
    let mut f = Fixture::new();
    seed(&mut f, "default");
    let policy = RetrievalPolicy::default();
    let conn = f.store.connection();
    for text in NASTY {
        let q = query("default", text);
        if let Err(e) = search(conn, &q, &policy, NOW) {
            panic!("{text:?}: {e}");
        }
        if let Err(e) = retrieve_for_prompt(conn, "default", text, 1000, &policy, NOW) {
            panic!("{text:?}: {e}");
        }
    }
    // Operators are searched as words: "tabs AND" finds the tabs unit.
    let hits = search(conn, &query("default", "tabs AND"), &policy, NOW).unwrap();
    assert_eq!(hits.len(), 1);
    // A very long message is capped, not rejected.
    let long = "deploy pipeline config tabs timezone ".repeat(2_000);
    assert!(
        !search(conn, &query("default", &long), &policy, NOW)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn search_pinned_and_retrieve_work_on_a_read_only_connection() {
    let mut f = Fixture::new();
    let units = seed(&mut f, "default");
    let mut p = support::new_unit(
        "default",
        metaclaw_memory::Kind::Preference,
        "Answer in English.",
    );
    p.pinned = true;
    f.add_with(p);
    let path = f.path();
    drop(f.store);
    let before = std::fs::read(&path).unwrap();

    let store = Store::open_read_only(&path).unwrap();
    let conn = store.connection();
    let policy = RetrievalPolicy::default();
    let q = SearchQuery {
        limit: 50,
        include_inactive: true,
        ..query("default", "time format tabs 时间")
    };
    assert!(!search(conn, &q, &policy, NOW).unwrap().is_empty());
    assert_eq!(pinned(conn, "default", 5, NOW).unwrap().len(), 1);
    let block = retrieve_for_prompt(conn, "default", "time format", 1000, &policy, NOW)
        .unwrap()
        .unwrap();
    assert!(block.ids.contains(&units[0].id));
    // Nothing was counted or touched.
    let (accessed, changes): (i64, i64) = conn
        .query_row(
            "SELECT COUNT(*) FILTER (WHERE access_count > 0 OR last_accessed_ms IS NOT NULL),
                    total_changes() FROM memory_units",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((accessed, changes), (0, 0));
    drop(store);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file is unchanged"
    );
}
