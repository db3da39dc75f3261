//! The evolution entry point the RL trainer uses (`Evolution::evolve_samples`): judged samples
//! go to the evolver with their scores, the answer is written into the live library, and the
//! event is logged with the generation that serves it.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

use std::time::Duration;

use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use metaclaw_engine::llm::Endpoint;
use metaclaw_engine::recorder;
use metaclaw_engine::skills::SkillsRuntime;
use metaclaw_engine::skills::evolution::{Evolution, EvolutionSettings, Trigger, Worker};
use metaclaw_proxy::seams::Protocol;
use metaclaw_skills::evolve::TurnDigest;
use metaclaw_skills::retrieval::RetrievalConfig;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn low_success_samples_are_evolved_with_their_scores() {
    let dir = tempfile::tempdir().unwrap();
    let skills_dir = dir.path().join("skills");
    metaclaw_skills::install_builtins(&skills_dir).unwrap();
    let db = dir.path().join("metaclaw.db");
    let (handle, _worker) = recorder::start(&db, 16).unwrap();
    let runtime =
        SkillsRuntime::start(skills_dir.clone(), db.clone(), RetrievalConfig::default()).await;
    let before = runtime.current.get().generation;

    let evolver = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let evolution = Evolution::start(Worker {
        endpoint: Endpoint {
            protocol: Protocol::Openai,
            base_url: evolver.base_url_openai(),
            model: "judge-aware-evolver".into(),
            api_key: None,
            extra_headers: vec![],
            timeout: Duration::from_secs(30),
        },
        http: reqwest::Client::new(),
        current: runtime.current.clone(),
        swapped: runtime.swapped.clone(),
        dir: skills_dir.clone(),
        db: db.clone(),
        recorder: handle,
        settings: EvolutionSettings {
            auto: false,
            every_n_turns: 0,
            max_new: 3,
            review: metaclaw_skills::evolve::Review::Auto,
        },
    });

    evolver.push_reply(
        json!({"skills":[{
            "name": "confirm-timezone-before-scheduling",
            "description": "Use when scheduling a meeting across time zones for people in different cities.",
            "category": "productivity",
            "tags": ["timezone", "meeting"],
            "body": "# Confirm the time zone before scheduling\n\n## When this applies\nA meeting involves people in more than one time zone.\n\n## Steps\n1. Ask for or look up each attendee's time zone.\n2. Propose times in every attendee's local time.\n3. Put the time zone in the invite title.\n\n## Anti-patterns\n- Writing a bare time such as 3pm in the invite.\n",
            "improves": null
        }]})
        .to_string(),
    );
    let samples = vec![
        TurnDigest {
            user: "Book a call with the Tokyo team at 3pm".into(),
            assistant: "Booked for 3pm.".into(),
            tool_errors: vec![],
            score: Some(-1.0),
        },
        TurnDigest {
            user: "Move the Berlin sync to tomorrow morning".into(),
            assistant: "Moved to 9:00 CET and told everyone.".into(),
            tool_errors: vec![],
            score: Some(1.0),
        },
    ];
    let out = evolution
        .evolve_samples(vec!["rl-batch-7".into()], samples)
        .await
        .unwrap();
    assert_eq!(out.trigger, Trigger::LowSuccess);
    assert_eq!(out.outcome, "added", "{out:?}");
    assert_eq!(out.added, vec!["confirm-timezone-before-scheduling"]);
    assert!(
        out.generation > before,
        "the new skill is served under a new generation"
    );
    assert!(
        runtime
            .current
            .get()
            .library
            .get("confirm-timezone-before-scheduling")
            .is_some()
    );

    let prompt = evolver.requests().pop().unwrap().body["messages"].to_string();
    assert!(prompt.contains("Tokyo team") && prompt.contains("judge score -1.00"));
    assert!(prompt.contains("judge score 1.00"));

    let store = metaclaw_store::Store::open_read_only(&db).unwrap();
    let events = store.skill_events(10).unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].trigger, "low_success");
    assert_eq!(events[0].session_ids, vec!["rl-batch-7"]);
    assert_eq!(events[0].model.as_deref(), Some("judge-aware-evolver"));
}
