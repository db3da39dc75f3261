#![allow(clippy::unwrap_used, clippy::panic)]
//! Search ranks by relevance, stays in its scope, hides inactive units, explains itself,
//! and orders deterministically.

#[path = "search_support.rs"]
mod support;

use metaclaw_memory::{Kind, RetrievalPolicy, pinned, retrieve_for_prompt, search};
use rusqlite::types::Value;
use support::{DAY_MS, Fixture, NOW, new_unit, query, seed};

#[test]
fn the_iso_8601_unit_wins_for_a_time_format_question() {
    let mut f = Fixture::new();
    let units = seed(&mut f, "default");
    let hits = search(
        f.store.connection(),
        &query("default", "What time format should I use?"),
        &RetrievalPolicy::default(),
        NOW,
    )
    .unwrap();
    assert_eq!(hits[0].unit.id, units[0].id, "{hits:#?}");
    // "time" matches "times" and "timezone"; the unit never says "format".
    assert_eq!(hits[0].matched_terms, vec!["time"]);
    assert!(
        hits[0].reason.starts_with("matched 'time'; "),
        "{}",
        hits[0].reason
    );
    assert!(hits[0].reason.contains("importance 0.5"));
    let c = &hits[0].components;
    let sum = c.lexical + c.importance + c.recency + c.confidence + c.kind_boost;
    assert!((hits[0].score - sum).abs() < 1e-6);
    assert!(
        (c.lexical - 1.0).abs() < 1e-6,
        "the best match is the lexical reference"
    );
}

#[test]
fn search_never_leaves_its_scope() {
    let mut f = Fixture::new();
    seed(&mut f, "alice");
    let bob = f.add(
        "bob",
        Kind::Semantic,
        "Bob keeps his PostgreSQL backups on tape.",
    );
    let policy = RetrievalPolicy::default();
    let hits = search(
        f.store.connection(),
        &query("alice", "postgresql backups"),
        &policy,
        NOW,
    )
    .unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|h| h.unit.scope == "alice"));
    let hits = search(
        f.store.connection(),
        &query("bob", "postgresql"),
        &policy,
        NOW,
    )
    .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].unit.id, bob.id);
    assert!(
        search(
            f.store.connection(),
            &query("carol", "postgresql"),
            &policy,
            NOW
        )
        .unwrap()
        .is_empty()
    );
}

#[test]
fn archived_superseded_and_expired_units_are_never_returned() {
    let mut f = Fixture::new();
    let archived = f.add(
        "s",
        Kind::Semantic,
        "The deploy key rotates monthly (archived).",
    );
    let superseded = f.add("s", Kind::Semantic, "The deploy key rotates weekly (old).");
    let expired = f.add(
        "s",
        Kind::Semantic,
        "The deploy key rotates daily (expired).",
    );
    let mut pinned_expired = new_unit("s", Kind::Semantic, "Deploy key note, pinned, expired.");
    pinned_expired.pinned = true;
    let pinned_expired = f.add_with(pinned_expired);
    let live = f.add("s", Kind::Semantic, "The deploy key rotates yearly.");
    f.set(&archived.id, "status", Value::Text("archived".into()));
    f.set(&superseded.id, "status", Value::Text("superseded".into()));
    f.set(
        &superseded.id,
        "superseded_by",
        Value::Text(live.id.clone()),
    );
    f.set(&expired.id, "expires_ms", Value::Integer(NOW - 1));
    f.set(&pinned_expired.id, "expires_ms", Value::Integer(NOW));
    let policy = RetrievalPolicy::default();
    let conn = f.store.connection();

    let hits = search(conn, &query("s", "deploy key rotates"), &policy, NOW).unwrap();
    let ids: Vec<_> = hits.iter().map(|h| h.unit.id.as_str()).collect();
    assert_eq!(ids, vec![live.id.as_str()]);
    assert!(pinned(conn, "s", 10, NOW).unwrap().is_empty());
    let block = retrieve_for_prompt(conn, "s", "deploy key", 2000, &policy, NOW)
        .unwrap()
        .unwrap();
    assert_eq!(block.ids, vec![live.id.clone()]);

    let mut all = query("s", "deploy key rotates");
    all.include_inactive = true;
    assert_eq!(search(conn, &all, &policy, NOW).unwrap().len(), 5);
}

#[test]
fn kinds_filter_and_limit_apply() {
    let mut f = Fixture::new();
    seed(&mut f, "default");
    let mut q = query("default", "time format deploy pipeline tabs");
    q.kinds = vec![Kind::Episodic];
    let hits = search(f.store.connection(), &q, &RetrievalPolicy::default(), NOW).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].unit.kind, Kind::Episodic);
    q.kinds.clear();
    q.limit = 2;
    assert_eq!(
        search(f.store.connection(), &q, &RetrievalPolicy::default(), NOW)
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn importance_and_recency_break_lexical_ties() {
    let mut f = Fixture::new();
    let old = f.add("s", Kind::Semantic, "The cache server is Redis.");
    let fresh = f.add("s", Kind::Semantic, "The cache server is Valkey.");
    let mut important = new_unit("s", Kind::Semantic, "The cache server is Memcached.");
    important.importance = 0.95;
    let important = f.add_with(important);
    f.set(&old.id, "updated_ms", Value::Integer(NOW - 400 * DAY_MS));
    f.set(
        &fresh.id,
        "last_accessed_ms",
        Value::Integer(NOW - 3 * DAY_MS),
    );
    let hits = search(
        f.store.connection(),
        &query("s", "cache server"),
        &RetrievalPolicy::default(),
        NOW,
    )
    .unwrap();
    let ids: Vec<_> = hits.iter().map(|h| h.unit.id.clone()).collect();
    assert_eq!(ids, vec![important.id, fresh.id, old.id]);
    assert!(
        hits[1].reason.ends_with("used 3 days ago"),
        "{}",
        hits[1].reason
    );
    assert!(hits[2].components.recency < 0.01);
}

#[test]
fn equal_units_come_back_in_the_same_order_every_time() {
    let mut f = Fixture::new();
    for i in 0..12 {
        f.add(
            "s",
            Kind::Semantic,
            &format!("Service number {i} speaks gRPC."),
        );
    }
    let policy = RetrievalPolicy::default();
    let run = || {
        search(
            f.store.connection(),
            &query("s", "grpc service"),
            &policy,
            NOW,
        )
        .unwrap()
        .into_iter()
        .map(|h| h.unit.id)
        .collect::<Vec<_>>()
    };
    let first = run();
    assert_eq!(first.len(), 10);
    let mut sorted = first.clone();
    sorted.sort();
    assert_eq!(first, sorted, "ties are broken by id");
    for _ in 0..5 {
        assert_eq!(run(), first);
    }
    let block = |q: &str| {
        retrieve_for_prompt(f.store.connection(), "s", q, 500, &policy, NOW)
            .unwrap()
            .unwrap()
            .text
    };
    assert_eq!(block("grpc service"), block("grpc service"));
}

#[test]
fn a_chinese_query_finds_a_chinese_unit() {
    let mut f = Fixture::new();
    seed(&mut f, "zh");
    let unit = f.add(
        "zh",
        Kind::Preference,
        "请使用 ISO 8601 时间格式，并且总是带上时区。",
    );
    f.add("zh", Kind::Semantic, "项目的数据库是 PostgreSQL。");
    let policy = RetrievalPolicy::default();
    let conn = f.store.connection();
    let hits = search(conn, &query("zh", "我应该用什么时间格式？"), &policy, NOW).unwrap();
    assert_eq!(hits[0].unit.id, unit.id, "{hits:#?}");
    assert_eq!(hits[0].matched_terms, vec!["时间格式"]);
    // Two characters: no trigram, the LIKE fallback.
    let hits = search(conn, &query("zh", "时区"), &policy, NOW).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].unit.id, unit.id);
    assert_eq!(hits[0].matched_terms, vec!["时区"]);
}

#[test]
fn common_words_take_the_bounded_path_and_rare_words_still_win() {
    // More units share "service" and "cache" than the ranked budget allows, so those
    // terms are searched by AND and newest first; "billing" stays rare and ranked.
    let mut f = Fixture::new();
    let target = f.add(
        "s",
        Kind::ProjectState,
        "The billing service keeps its cache in Redis.",
    );
    for i in 0..700 {
        f.add(
            "s",
            Kind::Semantic,
            &format!("Service {i} uses the shared cache."),
        );
    }
    let policy = RetrievalPolicy::default();
    let conn = f.store.connection();
    let hits = search(conn, &query("s", "billing cache"), &policy, NOW).unwrap();
    assert_eq!(hits[0].unit.id, target.id);
    assert_eq!(hits[0].matched_terms, vec!["billing", "cache"]);
    let hits = search(conn, &query("s", "services caches"), &policy, NOW).unwrap();
    assert_eq!(hits.len(), 10, "plural forms find the singular words");
    assert!(
        hits.iter()
            .all(|h| h.matched_terms == ["services", "caches"])
    );
}

#[test]
fn a_word_written_by_another_connection_is_found_by_the_next_search() {
    // Term counts are remembered between searches; a write through another connection
    // (another thread or process) must still be found at once, whether the word was
    // absent, rare or common before.
    let mut f = Fixture::new();
    for i in 0..400 {
        f.add(
            "s",
            Kind::Semantic,
            &format!("Deploy {i} ran on the cluster."),
        );
    }
    let reader = metaclaw_store::Store::open_read_only(&f.path()).unwrap();
    let policy = RetrievalPolicy::default();
    let ask = |text: &str| search(reader.connection(), &query("s", text), &policy, NOW).unwrap();
    assert!(ask("zanzibar").is_empty());
    assert_eq!(ask("cluster deploy").len(), 10);

    let island = f.add("s", Kind::Semantic, "The team offsite is in Zanzibar.");
    let hits = ask("zanzibar");
    assert_eq!(hits.len(), 1, "an absent word, written since, is found");
    assert_eq!(hits[0].unit.id, island.id);

    let second = f.add("s", Kind::Semantic, "Zanzibar flights leave on Fridays.");
    assert_eq!(ask("zanzibar").len(), 2, "a rare word's new unit is found");
    let both = f.add("s", Kind::Semantic, "The cluster moved to Zanzibar.");
    let hits = ask("cluster zanzibar");
    assert_eq!(hits[0].unit.id, both.id, "the unit holding both words wins");
    assert!(hits.iter().any(|h| h.unit.id == second.id));
    assert_eq!(
        ask("cluster deploy").len(),
        10,
        "a common word stays searchable"
    );
}
