//! The dashboard's series: per-bucket counts, failures and overhead percentiles, and
//! running totals of memories and skills, aggregated in SQL.

use std::time::Instant;

use metaclaw_store::{Buckets, NewSkillEvent, Store};
use serde_json::json;

mod common;
use common::turn;

const B: Buckets = Buckets {
    from_ms: 1_000,
    bucket_ms: 100,
    count: 3,
};

#[test]
fn requests_per_bucket_with_failures_and_overhead_percentiles() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("metaclaw.db")).unwrap();
    let mut turns = Vec::new();
    // Bucket 0: overheads 1..=10 ms, one failed. Bucket 2: one turn. Outside: ignored.
    for i in 1..=10 {
        let mut t = turn("a", "main", 1_000 + i);
        t.overhead_ms = i as f64;
        if i == 10 {
            t.status = 502;
        }
        turns.push(t);
    }
    let mut late = turn("b", "main", 1_250);
    late.overhead_ms = 3.5;
    turns.push(late);
    turns.push(turn("c", "main", 999));
    turns.push(turn("c", "main", 1_300));
    store.insert_turns(&turns).unwrap();

    let series = store.request_series(B).unwrap();
    assert_eq!(series.len(), 3);
    assert_eq!(
        series.iter().map(|b| b.t_ms).collect::<Vec<_>>(),
        [1_000, 1_100, 1_200]
    );
    assert_eq!(series[0].count, 10);
    assert_eq!(series[0].errors, 1);
    assert_eq!(series[0].overhead_p50_ms, Some(5.0));
    assert_eq!(series[0].overhead_p95_ms, Some(10.0));
    assert_eq!(series[1].count, 0);
    assert_eq!(series[1].overhead_p50_ms, None);
    assert_eq!(series[2].count, 1);
    assert_eq!(series[2].overhead_p50_ms, Some(3.5));
    assert_eq!(series[2].overhead_p95_ms, Some(3.5));
}

#[test]
fn skills_added_per_bucket_and_after() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("metaclaw.db")).unwrap();
    let event = |at_ms: i64, added: &[&str]| NewSkillEvent {
        at_ms,
        trigger: "manual".into(),
        session_ids: vec![],
        model: None,
        outcome: "added".into(),
        added: added.iter().map(|s| (*s).to_owned()).collect(),
        improved: vec![],
        rejected: vec![],
        error: None,
        generation: 1,
        detail: json!({}),
    };
    store
        .insert_skill_event(&event(1_010, &["a", "b"]))
        .unwrap();
    store.insert_skill_event(&event(1_220, &["c"])).unwrap();
    store.insert_skill_event(&event(2_000, &["d"])).unwrap();
    let (per, after) = store.skills_added_series(B).unwrap();
    assert_eq!(per, [2, 0, 1]);
    assert_eq!(after, 1);
}

#[test]
fn memory_totals_stay_fast_with_a_hundred_thousand_units() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("metaclaw.db")).unwrap();
    let tx = store.connection_mut().transaction().unwrap();
    {
        let mut insert = tx
            .prepare(
                "INSERT INTO memory_units (id, scope, kind, content, importance, confidence,
                 status, source, created_ms, updated_ms)
                 VALUES (?1, 'default', 'semantic', 'fact', 0.5, 0.5, ?2, 'api', ?3, ?3)",
            )
            .unwrap();
        for i in 0..100_000i64 {
            // 91,000 before the window, then 3,000 per bucket; every tenth one archived.
            let created = if i < 91_000 {
                500
            } else {
                1_005 + ((i - 91_000) % 3) * 100
            };
            let status = if i % 10 == 0 { "archived" } else { "active" };
            insert
                .execute(rusqlite::params![format!("u{i}"), status, created])
                .unwrap();
        }
    }
    tx.commit().unwrap();
    let started = Instant::now();
    let totals = store.memory_totals(B).unwrap();
    let took = started.elapsed();
    assert_eq!(totals, [81_900 + 2_700, 81_900 + 5_400, 81_900 + 8_100]);
    // Generous for a debug build on a busy machine; scanning rows in Rust took seconds.
    assert!(took.as_millis() < 2_000, "{took:?}");
}

#[test]
fn token_totals_per_model_in_a_window_with_the_cache_share_base() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("metaclaw.db")).unwrap();
    let with = |model: &str, at: i64, input: u64, read: Option<u64>, injected: u64| {
        let mut t = turn("s", "main", at);
        t.model = model.to_owned();
        t.input_tokens = Some(input);
        t.output_tokens = Some(7);
        t.cache_read_tokens = read;
        t.cache_write_tokens = read.map(|_| 3);
        t.injected_tokens = Some(injected);
        t.block_tokens = Some(injected / 2);
        t
    };
    let mut unknown = turn("s", "side", 1_050);
    unknown.model = "a".into();
    unknown.input_tokens = None;
    unknown.output_tokens = None;
    store
        .insert_turns(&[
            with("a", 1_000, 1_000, Some(900), 100),
            with("a", 1_010, 500, None, 40),
            unknown,
            with("b", 1_020, 2_000, Some(0), 0),
            // Outside the window on both sides.
            with("a", 999, 9_999, Some(9_999), 9),
            with("a", 1_300, 9_999, Some(9_999), 9),
        ])
        .unwrap();

    let totals = store.usage_by_model(1_000, 1_300).unwrap();
    assert_eq!(totals.len(), 2);
    let (b, a) = (&totals[0], &totals[1]);
    assert_eq!((b.model.as_str(), a.model.as_str()), ("b", "a"));
    assert_eq!((a.turns, a.turns_with_usage), (3, 2));
    assert_eq!((a.input_tokens, a.output_tokens), (1_500, 14));
    assert_eq!((a.cache_read_tokens, a.cache_write_tokens), (900, 3));
    // Only the turn that reported its cache counts towards the share.
    assert_eq!(a.cache_reported_input_tokens, 1_000);
    assert_eq!(
        (
            a.cache_reported_injected_tokens,
            a.cache_reported_block_tokens
        ),
        (100, 50)
    );
    assert_eq!((a.injected_tokens, a.block_tokens), (140, 70));
    assert_eq!(
        (b.cache_read_tokens, b.cache_reported_input_tokens),
        (0, 2_000)
    );
    assert!(store.usage_by_model(5_000, 6_000).unwrap().is_empty());
}
