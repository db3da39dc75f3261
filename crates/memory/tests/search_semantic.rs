#![allow(clippy::unwrap_used, clippy::panic)]
//! Units found by meaning (ids and cosines from an embedding index) join full-text
//! candidates: they qualify on their cosine alone (in a prompt only above the similarity
//! floor), are filtered like any candidate, add the weighted cosine relative to the best to
//! their score, and say so in their reason.

#[path = "search_support.rs"]
mod support;

use metaclaw_memory::{Kind, RetrievalPolicy, retrieve, search, search_with};
use support::{Fixture, NOW, query};

fn hybrid() -> RetrievalPolicy {
    RetrievalPolicy {
        semantic_weight: 0.5,
        ..RetrievalPolicy::default()
    }
}

#[test]
fn a_unit_close_in_meaning_is_found_without_a_shared_word() {
    let mut f = Fixture::new();
    let dog = f.add("s", Kind::Semantic, "The user's dog is called Biscuit");
    let other = f.add("s", Kind::Semantic, "Deploys run every Friday at noon");
    let far = f.add("s", Kind::Semantic, "The office plant needs water weekly");
    let q = query("s", "what's my puppy's name?");
    let conn = f.store.connection();
    assert!(search(conn, &q, &hybrid(), NOW).unwrap().is_empty());

    let similar = vec![(dog.id.clone(), 0.82), (far.id.clone(), 0.3)];
    let hits = search_with(conn, &q, &hybrid(), NOW, &similar).unwrap();
    // A search ranks every unit found by meaning; the best cosine weighs in full.
    let ids: Vec<&str> = hits.iter().map(|h| h.unit.id.as_str()).collect();
    assert_eq!(ids, [dog.id.as_str(), far.id.as_str()]);
    assert!((hits[0].components.semantic - 0.5).abs() < 1e-5);
    assert!((hits[1].components.semantic - 0.5 * 0.3 / 0.82).abs() < 1e-5);
    assert_eq!(hits[0].components.lexical, 0.0);
    assert!(
        hits[0].reason.contains("similar in meaning (cosine 0.82)"),
        "{}",
        hits[0].reason
    );

    // A prompt takes only what reaches `min_similarity` (0.5).
    let r = retrieve(conn, "s", &q.text, 800, &hybrid(), NOW, &similar).unwrap();
    let text = r.rendered.unwrap().text;
    assert!(
        text.contains("Biscuit") && !text.contains("Friday") && !text.contains("plant"),
        "{text}"
    );
    assert_eq!((r.outcome.matched, r.outcome.shown), (1, 1));
    let _ = other;
}

#[test]
fn the_cosine_reorders_word_matches_and_stale_index_entries_are_filtered() {
    let mut f = Fixture::new();
    let a = f.add(
        "s",
        Kind::Preference,
        "Prefers deploy notes as bullet points",
    );
    let b = f.add(
        "s",
        Kind::Preference,
        "Prefers deploy notes with a summary first",
    );
    let forgotten = f.add("s", Kind::Semantic, "Old fact about deploy windows");
    let elsewhere = f.add("t", Kind::Semantic, "Deploy notes of another project");
    f.set(&forgotten.id, "status", "archived".to_string().into());
    let q = query("s", "deploy notes");
    let conn = f.store.connection();
    let plain = search(conn, &q, &hybrid(), NOW).unwrap();
    assert_eq!(plain.len(), 2);
    let similar = vec![
        (b.id.clone(), 0.9),
        (a.id.clone(), 0.1),
        (forgotten.id.clone(), 0.95),
        (elsewhere.id.clone(), 0.95),
    ];
    let hits = search_with(conn, &q, &hybrid(), NOW, &similar).unwrap();
    let ids: Vec<&str> = hits.iter().map(|h| h.unit.id.as_str()).collect();
    assert_eq!(ids, [b.id.as_str(), a.id.as_str()]);
    assert!(hits[0].components.semantic > hits[1].components.semantic);

    // Keyword mode (weight 0) ignores cosines for the score but still lets close units in.
    let keyword = RetrievalPolicy::default();
    let hits = search_with(conn, &q, &keyword, NOW, &similar).unwrap();
    assert!(hits.iter().all(|h| h.components.semantic == 0.0));
}

#[test]
fn weak_cosines_weigh_relative_to_the_similarity_floor_not_to_each_other() {
    let mut f = Fixture::new();
    let plant = f.add("s", Kind::Semantic, "The office plant needs water weekly");
    let q = query("s", "what's my puppy's name?");
    let conn = f.store.connection();
    // Nothing is close: the best of the weak matches is not lifted to full weight.
    let similar = vec![(plant.id.clone(), 0.2)];
    let hits = search_with(conn, &q, &hybrid(), NOW, &similar).unwrap();
    assert_eq!(hits.len(), 1);
    assert!((hits[0].components.semantic - 0.5 * 0.2 / 0.5).abs() < 1e-5);
    let r = retrieve(conn, "s", &q.text, 800, &hybrid(), NOW, &similar).unwrap();
    assert!(r.rendered.is_none());
}
