//! `skills.review: ask` and skill history, through the binary: a learned skill waits as a
//! proposal and is not injected (checked on the request the provider receives), approving
//! it makes it live, rejecting discards it, and a rollback restores the previous file byte
//! for byte.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::Duration;

use common::daemon::{Home, PROXY_KEY, free_port, stdout};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use serde_json::{Value, json};

const DATES: &str = "From now on, write dates as YYYY-MM-DD in every report.";
const BULLETS: &str = "From now on, summarise meetings in exactly three bullets.";

async fn chat(port: u16, session: &str, text: &str) {
    let r = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
        .bearer_auth(PROXY_KEY)
        .header("x-session-id", session)
        .json(&json!({"model": "x", "messages": [{"role": "user", "content": text}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

async fn admin(home: &Home, port: u16, method: &str, path: &str, body: Value) -> (u16, Value) {
    let client = reqwest::Client::new();
    let url = format!("http://127.0.0.1:{port}{path}");
    let request = match method {
        "GET" => client.get(url),
        "PUT" => client.put(url).json(&body),
        _ => client.post(url).json(&body),
    };
    let r = request
        .bearer_auth(home.admin_token())
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// The text of the newest request the provider received, after a main turn of a new
/// session asking `text`.
async fn sent_upstream(upstream: &FakeUpstream, port: u16, session: &str, text: &str) -> String {
    upstream.clear_requests();
    chat(port, session, text).await;
    upstream.requests().pop().unwrap().body.to_string()
}

/// Waits (bounded) until the running engine's library holds `name` or not.
async fn until_served(home: &Home, port: u16, name: &str, present: bool) {
    for _ in 0..200 {
        let (status, _) = admin(
            home,
            port,
            "GET",
            &format!("/api/skills/{name}"),
            Value::Null,
        )
        .await;
        if (status == 200) == present {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "{name} never became {}",
        if present { "served" } else { "absent" }
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn with_review_ask_a_learned_skill_is_injected_only_once_approved() {
    let (upstream, learner) = (
        FakeUpstream::start(FakeOptions::default()).await.unwrap(),
        FakeUpstream::start(FakeOptions::default()).await.unwrap(),
    );
    let port = free_port();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\n  model_id: chat-model\nproxy:\n  port: {port}\n\
         skills:\n  evolver_api_base: {}\n  evolver_model: learner\n  auto_evolve: false\n  review: ask\n",
        upstream.base_url_openai(),
        learner.base_url_openai(),
    ));
    home.start_daemon().await;
    let library = home.path().join("skills");

    // Learned: a proposal, not a skill of the library.
    chat(port, "s-dates", DATES).await;
    let (_, out) = admin(
        &home,
        port,
        "POST",
        "/api/skills/evolve",
        json!({"session_id": "s-dates"}),
    )
    .await;
    assert_eq!(out["outcome"], "proposed", "{out}");
    assert_eq!(out["added"], json!([]), "{out}");
    let dates = out["proposed"][0].as_str().unwrap().to_owned();
    assert!(!library.join(&dates).exists());
    let listed: Value =
        serde_json::from_str(&stdout(&home.run(&["skills", "proposals", "--json"]))).unwrap();
    assert_eq!(listed["proposals"][0]["name"], dates.as_str(), "{listed}");
    assert_eq!(
        listed["proposals"][0]["sessions"],
        json!(["s-dates"]),
        "{listed}"
    );
    let (_, api) = admin(&home, port, "GET", "/api/skills/proposals", Value::Null).await;
    assert!(
        api["proposals"][0]["text"]
            .as_str()
            .unwrap()
            .contains("YYYY-MM-DD"),
        "{api}"
    );
    assert_eq!(api["proposals"][0]["current"], Value::Null, "{api}");

    let before = sent_upstream(
        &upstream,
        port,
        "s-report-1",
        "Write the weekly report for the team.",
    )
    .await;
    assert!(
        !before.contains("YYYY-MM-DD"),
        "a proposal was injected: {before}"
    );

    // Approved: live, and injected.
    let path = format!("/api/skills/proposals/{dates}/approve");
    let (status, _) = admin(&home, port, "POST", &path, Value::Null).await;
    assert_eq!(status, 200);
    until_served(&home, port, &dates, true).await;
    let after = sent_upstream(
        &upstream,
        port,
        "s-report-2",
        "Write the weekly report for the team.",
    )
    .await;
    assert!(
        after.contains("YYYY-MM-DD"),
        "the approved skill was not injected: {after}"
    );

    // Rejected: gone, never in the library.
    chat(port, "s-bullets", BULLETS).await;
    let (_, out) = admin(
        &home,
        port,
        "POST",
        "/api/skills/evolve",
        json!({"session_id": "s-bullets"}),
    )
    .await;
    let bullets = out["proposed"][0].as_str().unwrap().to_owned();
    let rejected = home.run(&["skills", "reject", &bullets]);
    assert!(rejected.status.success(), "{rejected:?}");
    assert!(stdout(&home.run(&["skills", "proposals"])).contains("no learned skill waits"));
    let sent = sent_upstream(
        &upstream,
        port,
        "s-meeting",
        "Summarise the meeting we just had.",
    )
    .await;
    assert!(
        !sent.contains("three bullets"),
        "a rejected skill was injected: {sent}"
    );
    assert!(!library.join(&bullets).exists());
    let again = home.run(&["skills", "reject", &bullets]);
    assert!(!again.status.success());
}

/// A running daemon whose library serves `tea-brewing` as `original` (written by hand):
/// its upstream (kept alive), home, port and the skill's file.
async fn serving_tea(original: &str) -> (FakeUpstream, Home, u16, std::path::PathBuf) {
    let upstream = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let port = free_port();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\n  model_id: chat-model\nproxy:\n  port: {port}\n\
         skills:\n  auto_evolve: false\n",
        upstream.base_url_openai(),
    ));
    home.start_daemon().await;
    let file = home.path().join("skills/tea-brewing/SKILL.md");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, original).unwrap();
    until_served(&home, port, "tea-brewing", true).await;
    (upstream, home, port, file)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rollback_restores_the_previous_file_byte_for_byte_and_can_be_undone() {
    // Spacing no writer would produce: a rollback must restore the bytes, not re-render.
    let original = "---\nname: tea-brewing\ndescription: Use when brewing tea or choosing a teapot\n---\n\n# Tea\n\nWarm the pot first.   \n\n\n";
    let (_upstream, home, port, file) = serving_tea(original).await;

    let edited = original.replace("Warm the pot first.", "Use boiling water for black tea.");
    let (status, out) = admin(
        &home,
        port,
        "PUT",
        "/api/skills/tea-brewing",
        json!({"text": edited}),
    )
    .await;
    assert_eq!(status, 200, "{out}");
    let changed = std::fs::read(&file).unwrap();
    assert_ne!(changed, original.as_bytes());

    let (_, history) = admin(
        &home,
        port,
        "GET",
        "/api/skills/tea-brewing/history",
        Value::Null,
    )
    .await;
    assert_eq!(history["versions"][0]["n"], 1, "{history}");
    assert_eq!(history["versions"][0]["reason"], "edited", "{history}");
    assert_eq!(history["versions"][0]["text"], original, "{history}");
    assert_eq!(history["current"]["effect"]["turns"], 0, "{history}");

    let rolled = home.run(&["skills", "rollback", "tea-brewing"]);
    assert!(rolled.status.success(), "{rolled:?}");
    assert_eq!(std::fs::read(&file).unwrap(), original.as_bytes());
    // The rollback is recorded: the edited file is the newest version, and rolling back
    // again (through the API) brings it back.
    let listed: Value = serde_json::from_str(&stdout(&home.run(&[
        "skills",
        "history",
        "tea-brewing",
        "--json",
    ])))
    .unwrap();
    let reasons: Vec<&str> = listed["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["reason"].as_str().unwrap())
        .collect();
    assert_eq!(reasons, ["rollback", "edited"], "{listed}");
    let (status, out) = admin(
        &home,
        port,
        "POST",
        "/api/skills/tea-brewing/rollback",
        Value::Null,
    )
    .await;
    assert_eq!((status, &out["restored"]), (200, &json!(2)), "{out}");
    assert_eq!(std::fs::read(&file).unwrap(), changed);

    // A version that is not there changes nothing and says why.
    let (status, out) = admin(
        &home,
        port,
        "POST",
        "/api/skills/tea-brewing/rollback",
        json!({"to": 99}),
    )
    .await;
    assert_eq!(status, 400, "{out}");
    assert_eq!(std::fs::read(&file).unwrap(), changed);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_made_outside_metaclaw_is_a_version_that_rolls_back() {
    let original = "---\nname: tea-brewing\ndescription: Use when brewing tea\n---\n\nWarm the pot first.   \n";
    let (_upstream, home, port, file) = serving_tea(original).await;

    // An editor rewrites the file; the watcher reloads it and keeps what it replaced.
    let edited = original.replace("Warm the pot first.", "Never warm the pot.");
    std::fs::write(&file, &edited).unwrap();
    let mut history = Value::Null;
    for _ in 0..200 {
        history = admin(
            &home,
            port,
            "GET",
            "/api/skills/tea-brewing/history",
            Value::Null,
        )
        .await
        .1;
        if history["versions"][0]["reason"] == "edited outside MetaClaw" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        history["versions"][0]["reason"], "edited outside MetaClaw",
        "{history}"
    );
    assert_eq!(history["versions"][0]["text"], original, "{history}");
    assert_eq!(
        history["versions"].as_array().unwrap().len(),
        1,
        "{history}"
    );

    let rolled = home.run(&["skills", "rollback", "tea-brewing"]);
    assert!(rolled.status.success(), "{rolled:?}");
    assert_eq!(std::fs::read(&file).unwrap(), original.as_bytes());
    // The rollback is MetaClaw's own write: one version for it, none taken for an outside edit.
    let (_, after) = admin(
        &home,
        port,
        "GET",
        "/api/skills/tea-brewing/history",
        Value::Null,
    )
    .await;
    let reasons: Vec<&str> = after["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["reason"].as_str().unwrap())
        .collect();
    assert_eq!(reasons, ["rollback", "edited outside MetaClaw"], "{after}");
}
