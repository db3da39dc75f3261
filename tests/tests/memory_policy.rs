//! The retrieval policy through the real binary: a person reads, changes (partially, with
//! bad values refused whole) and resets it by API and CLI, the change reaches the agent's
//! next prompt, and a window of prompts that find nothing lowers the relevance threshold by
//! one step, with the reason stored.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::Duration;

use common::memory_daemon::MemoryDaemon as Daemon;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

fn prompt_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

async fn add(d: &Daemon, scope: &str, content: &str) {
    let (s, v) = d
        .admin(
            Method::POST,
            "/api/memory",
            Some(json!({"scope": scope, "kind": "project_state", "content": content})),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
}

#[tokio::test(flavor = "multi_thread")]
async fn people_read_change_and_reset_the_policy_and_bad_values_change_nothing() {
    let d = Daemon::start("memory:\n  max_injected_units: 5\n").await;
    let (s, v) = d.admin(Method::GET, "/api/memory/policy", None).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["scope"], "default");
    assert_eq!(v["policy"]["max_units"], 5);
    assert_eq!(v["configured"]["max_units"], 5);
    assert_eq!(v["adaptive"], true);
    assert_eq!(v["history"], json!([]));

    let change = json!({"max_units": 1, "kind_boosts": {"episodic": -0.1}});
    let (s, v) = d
        .admin(Method::PUT, "/api/memory/policy", Some(change))
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["policy"]["max_units"], 1);
    assert_eq!(v["policy"]["kind_boosts"]["episodic"], -0.1);
    assert_eq!(v["policy"]["kind_boosts"]["working_summary"], 0.0, "kept");

    for (bad, says) in [
        (json!({"max_units": 0}), "max_units"),
        (json!({"max_units": 3, "nope": 1}), "nope"),
        (json!({"min_lexical_score": 2.0}), "min_lexical_score"),
        (json!([1, 2]), "JSON object"),
    ] {
        let (s, v) = d.admin(Method::PUT, "/api/memory/policy", Some(bad)).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
        assert!(v.to_string().contains(says), "{says}: {v}");
    }
    let (_, v) = d.admin(Method::GET, "/api/memory/policy", None).await;
    assert_eq!(v["policy"]["max_units"], 1, "refused changes left it alone");
    let history = v["history"].as_array().unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0]["reason"], "changed by the user");
    assert_eq!(history[0]["new"]["max_units"], 1);

    // The agent's next prompt gets one memory, not three.
    for c in [
        "The billing service deploys with helm",
        "The billing service runs on port 8080",
        "The billing service owner is Dana",
    ] {
        add(&d, "default", c).await;
    }
    let body = d
        .chat("s1", "default", "what about the billing service?", false)
        .await;
    let prompt = prompt_text(&body);
    assert_eq!(prompt.matches("billing service").count(), 2, "{prompt}");

    let out = d.home.run(&["memory", "policy"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("scope default: stored policy"), "{text}");
    assert!(text.contains("\"max_units\": 1"), "{text}");
    assert!(text.contains("changed by the user"), "{text}");

    let out = d.home.run(&["memory", "policy", "--reset"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\"max_units\": 5"), "{text}");
    assert!(
        text.contains("reset to the configured policy by the user (cli)"),
        "{text}"
    );

    let (s, v) = d
        .admin(Method::POST, "/api/memory/policy/reset?scope=other", None)
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["scope"], "other");
    let (_, v) = d
        .admin(Method::GET, "/api/memory/policy?scope=other", None)
        .await;
    assert_eq!(
        v["history"][0]["reason"],
        "reset to the configured policy by the user"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn prompts_that_find_nothing_lower_the_threshold_one_step_with_a_reason() {
    let d = Daemon::start("").await;
    let topics = ["billing", "search", "ledger", "mailer", "gateway"];
    for i in 0..25 {
        let t = topics[i % topics.len()];
        add(
            &d,
            "adapt",
            &format!("The {t} service deploys from the release branch on {t}-host"),
        )
        .await;
    }
    for i in 0..50 {
        d.chat(&format!("s{i}"), "adapt", "zebra quantum violin", false)
            .await;
    }
    // The worker decides after the 50th retrieval; wait for its stored change.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let v = loop {
        let (_, v) = d
            .admin(Method::GET, "/api/memory/policy?scope=adapt", None)
            .await;
        if !v["history"].as_array().unwrap().is_empty() {
            break v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no adaptation within 20 s: {v}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let score = v["policy"]["min_lexical_score"].as_f64().unwrap();
    assert!((score - 0.10).abs() < 1e-6, "{v}");
    let reason = v["history"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains(
            "50 of the last 50 prompts found no memory although the scope holds 25 units"
        ),
        "{reason}"
    );
    assert!(reason.contains("from 0.15 to 0.10"), "{reason}");
    assert_eq!(
        v["history"].as_array().unwrap().len(),
        1,
        "one step per window"
    );
    let (_, other) = d.admin(Method::GET, "/api/memory/policy", None).await;
    assert_eq!(other["history"], json!([]), "other scopes untouched");
}
