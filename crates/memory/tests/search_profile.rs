#![allow(clippy::unwrap_used, clippy::panic)]
//! The standing-rules profile: the user's rules and preferences on every turn, first, the
//! same bytes whatever the request while they fit their budget; cut down to the relevant
//! ones only when they do not; never crowded out by a session digest.

#[path = "search_support.rs"]
mod support;

use metaclaw_memory::render::PROFILE_TITLE;
use metaclaw_memory::{
    Kind, RetrievalPolicy, estimate_tokens, retrieve_for_prompt, search, standing_plan,
};
use support::{Fixture, NOW, new_unit, query};

const RULE: &str = "From now on, always write every timestamp in ISO 8601 with the +08:00 offset.";
const REQUEST: &str = "Write the log line for the stand-up meeting that began at nine this morning";

fn block(f: &Fixture, text: &str, policy: &RetrievalPolicy) -> String {
    retrieve_for_prompt(f.store.connection(), "default", text, 800, policy, NOW)
        .unwrap()
        .map(|b| b.text)
        .unwrap_or_default()
}

#[test]
fn a_standing_rule_is_in_every_block_first_and_the_same_for_any_request() {
    let mut f = Fixture::new();
    f.add("default", Kind::Preference, RULE);
    f.add(
        "default",
        Kind::ProceduralObservation,
        "Back up a config file before editing it.",
    );
    f.add(
        "default",
        Kind::Semantic,
        "The stand-up meeting is in room 4.",
    );
    let policy = RetrievalPolicy {
        profile_tokens: 300,
        ..Default::default()
    };
    let a = block(&f, REQUEST, &policy);
    let b = block(&f, "What's a good recipe for lentil soup?", &policy);
    for text in [&a, &b] {
        let profile = text.find(PROFILE_TITLE).unwrap_or_else(|| panic!("{text}"));
        assert!(text[profile..].contains("+08:00"), "{text}");
        assert!(text[profile..].contains("Back up a config file"), "{text}");
    }
    // The profile is the block's stable start: what follows it depends on the request.
    let head =
        |t: &str| t[..t.find("Back up a config file before editing it.").unwrap()].to_string();
    assert_eq!(head(&a), head(&b));
    assert!(a.contains("room 4"), "{a}");
    assert!(!b.contains("room 4"), "{b}");
    // Off: the rule is retrieved by words only, and this request shares none with it.
    let off = RetrievalPolicy {
        profile_tokens: 0,
        ..Default::default()
    };
    assert!(!block(&f, REQUEST, &off).contains("+08:00"));
}

#[test]
fn a_profile_over_its_budget_keeps_only_the_rules_the_request_is_about() {
    let mut f = Fixture::new();
    for i in 0..40 {
        f.add(
            "default",
            Kind::Preference,
            &format!("Always label invoice batch {i} with its quarter and the client's code."),
        );
    }
    f.add(
        "default",
        Kind::Preference,
        "Always give temperatures in Celsius for weather.",
    );
    let policy = RetrievalPolicy {
        profile_tokens: 300,
        ..Default::default()
    };
    let text = block(&f, "How will the weather be in Lisbon?", &policy);
    let profile = text.find(PROFILE_TITLE).unwrap_or_else(|| panic!("{text}"));
    assert!(text[profile..].contains("Celsius"), "{text}");
    assert!(!text.contains("invoice batch"), "{text}");
    let b = retrieve_for_prompt(
        f.store.connection(),
        "default",
        "weather",
        800,
        &policy,
        NOW,
    )
    .unwrap()
    .unwrap();
    assert!(b.tokens <= 800 + policy.profile_tokens);
    assert_eq!(b.tokens, estimate_tokens(&b.text));
}

#[test]
fn a_session_digest_ranks_below_every_rule_and_fact() {
    let mut f = Fixture::new();
    let fact = f.add(
        "default",
        Kind::Semantic,
        "The stand-up log lives in ops/standup.md.",
    );
    let mut digest = new_unit(
        "default",
        Kind::WorkingSummary,
        &format!(
            "Session of 2 turn(s). Topics: stand-up, log, line. Latest requests: \"{REQUEST}\"; \"Thanks.\""
        ),
    );
    digest.importance = 1.0;
    let digest = f.add_with(digest);
    let hits = search(
        f.store.connection(),
        &query("default", REQUEST),
        &RetrievalPolicy::default(),
        NOW,
    )
    .unwrap();
    let ids: Vec<&str> = hits.iter().map(|h| h.unit.id.as_str()).collect();
    assert_eq!(ids, [fact.id.as_str(), digest.id.as_str()], "{hits:?}");
    assert!(
        hits[1].score > hits[0].score,
        "the digest matches better, and still comes last"
    );
}

/// Every main turn reads the standing rules: at 100,000 units, a quarter of them
/// preferences, a sorted scan cost 25 ms a turn; the covering index costs 0.1 ms.
#[test]
fn standing_rules_are_read_through_their_own_index() {
    let f = Fixture::new();
    let plan = standing_plan(f.store.connection()).unwrap();
    assert!(
        plan.iter()
            .any(|step| step.contains("memory_units_standing")),
        "{plan:?}"
    );
    assert!(
        !plan.iter().any(|step| step.contains("TEMP B-TREE")),
        "sorted without the index: {plan:?}"
    );
}
