#![allow(clippy::unwrap_used, clippy::panic)]
//! The rendered memory section: pinned first within their share, the budget kept, every
//! unit whole.

#[path = "search_support.rs"]
mod support;

use metaclaw_memory::{Kind, RetrievalPolicy, estimate_tokens, retrieve_for_prompt, search};
use support::{Fixture, NOW, new_unit, query, seed};

fn pin(f: &mut Fixture, kind: Kind, content: &str, importance: f32) -> String {
    let mut n = new_unit("default", kind, content);
    n.pinned = true;
    n.importance = importance;
    f.add_with(n).id
}

#[test]
fn pinned_units_come_first_whatever_the_query_and_within_their_share() {
    let mut f = Fixture::new();
    let units = seed(&mut f, "default");
    let english = pin(
        &mut f,
        Kind::Preference,
        "Always answer in British English.",
        0.9,
    );
    let long = pin(
        &mut f,
        Kind::Semantic,
        &"Pinned background detail. ".repeat(40),
        0.95,
    );
    // The profile (see search_profile.rs) is off: this is about the pinned share.
    let policy = RetrievalPolicy {
        profile_tokens: 0,
        ..Default::default()
    };
    let budget = 400;
    let block = retrieve_for_prompt(
        f.store.connection(),
        "default",
        "time format",
        budget,
        &policy,
        NOW,
    )
    .unwrap()
    .unwrap();
    // The long pinned unit (~250 tokens) exceeds 30% of 400 and is skipped, not cut.
    assert_eq!(block.ids[0], english);
    assert!(!block.ids.contains(&long));
    assert!(!block.text.contains("Pinned background"));
    assert_eq!(block.ids[1], units[0].id);
    assert!(block.tokens <= budget);
    assert_eq!(block.tokens, estimate_tokens(&block.text));

    // With a larger budget both pinned units fit, still before any hit.
    let block = retrieve_for_prompt(
        f.store.connection(),
        "default",
        "time format",
        4000,
        &policy,
        NOW,
    )
    .unwrap()
    .unwrap();
    assert_eq!(&block.ids[..2], &[long.clone(), english.clone()]);
    // A query matching nothing still shows pinned units.
    let block = retrieve_for_prompt(
        f.store.connection(),
        "default",
        "zzzz qqqq",
        4000,
        &policy,
        NOW,
    )
    .unwrap()
    .unwrap();
    assert_eq!(block.ids, vec![long, english]);
}

#[test]
fn the_budget_is_kept_and_no_unit_is_cut() {
    let mut f = Fixture::new();
    let mut contents = Vec::new();
    for i in 0..30 {
        let body = format!(
            "Deploy note {i}: {}",
            "the pipeline runs lint, tests and a canary. ".repeat(1 + i % 7)
        );
        f.add("default", Kind::ProceduralObservation, &body);
        contents.push(body.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    let policy = RetrievalPolicy {
        max_units: 30,
        profile_tokens: 0,
        ..Default::default()
    };
    let mut rendered = 0;
    for budget in [60, 90, 150, 240, 500, 1200] {
        let Some(block) = retrieve_for_prompt(
            f.store.connection(),
            "default",
            "deploy pipeline canary",
            budget,
            &policy,
            NOW,
        )
        .unwrap() else {
            continue;
        };
        assert!(block.tokens <= budget, "{budget}: {}", block.tokens);
        for line in block.text.lines().filter(|l| l.starts_with("- ")) {
            assert!(contents.iter().any(|c| c == &line[2..]), "cut: {line}");
        }
        assert_eq!(
            block.ids.len(),
            block.text.lines().filter(|l| l.starts_with("- ")).count()
        );
        rendered += 1;
    }
    assert!(rendered >= 5, "only {rendered} budgets rendered anything");
}

#[test]
fn a_unit_too_big_is_skipped_and_a_smaller_one_after_it_still_fits() {
    let mut f = Fixture::new();
    let mut big = new_unit(
        "default",
        Kind::Semantic,
        &"Kafka retention details. ".repeat(18),
    );
    big.importance = 1.0;
    let big = f.add_with(big);
    let small = f.add("default", Kind::Semantic, "Kafka runs three brokers.");
    let policy = RetrievalPolicy::default();
    let hits = search(
        f.store.connection(),
        &query("default", "kafka"),
        &policy,
        NOW,
    )
    .unwrap();
    assert_eq!(hits[0].unit.id, big.id, "the big unit ranks first");
    let block = retrieve_for_prompt(f.store.connection(), "default", "kafka", 80, &policy, NOW)
        .unwrap()
        .unwrap();
    assert_eq!(block.ids, vec![small.id]);
    assert!(
        retrieve_for_prompt(f.store.connection(), "default", "kafka", 10, &policy, NOW)
            .unwrap()
            .is_none()
    );
}

#[test]
fn groups_follow_the_fixed_kind_order() {
    let mut f = Fixture::new();
    seed(&mut f, "default");
    let block = retrieve_for_prompt(
        f.store.connection(),
        "default",
        "time tabs postgresql config staging deploy invoice",
        4000,
        &RetrievalPolicy {
            max_units: 10,
            profile_tokens: 0,
            ..Default::default()
        },
        NOW,
    )
    .unwrap()
    .unwrap();
    let order = [
        "### Preferences",
        "### Project state",
        "### Workflow rules",
        "### Facts",
        "### Latest session summary",
        "### Earlier conversations",
    ];
    let positions: Vec<usize> = order.iter().map(|h| block.text.find(h).unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{}", block.text);
    assert!(block.text.starts_with("## Relevant Long-Term Memory\n"));
}
