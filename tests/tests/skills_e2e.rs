//! Skills through the real binary: built-in skills injected into a turn, the block kept
//! byte-identical across a restart, the turn's record, and live reload of an edited skill.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::Duration;

use common::daemon::{Home, PROXY_KEY, free_port, stdout};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream, RecordedRequest};
use serde_json::{Value, json};

const QUESTION: &str = "My pytest suite fails with an ImportError after I renamed a module. How do I debug this failing test?";

async fn chat(port: u16, session: &str, messages: &Value) {
    let r = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
        .bearer_auth(PROXY_KEY)
        .header("x-session-id", session)
        .json(&json!({"model":"x","messages":messages}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

fn through_last_message(req: &RecordedRequest) -> String {
    let messages = req.body["messages"].as_array().unwrap();
    let last = serde_json::to_string(messages.last().unwrap()).unwrap();
    let end = req.raw.find(&last).unwrap() + last.len();
    req.raw[..end].to_string()
}

fn status(home: &Home) -> Value {
    let o = home.run(&["status", "--json"]);
    assert!(o.status.success(), "{o:?}");
    serde_json::from_str(&stdout(&o)).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn built_in_skills_are_injected_and_stay_byte_identical_across_a_restart() {
    let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let port = free_port();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\n  model_id: fake-model\nproxy:\n  port: {port}\n",
        fake.base_url_openai()
    ));
    home.start_daemon().await;
    let mut messages = vec![json!({"role":"user","content":QUESTION})];
    chat(port, "conv-1", &Value::from(messages.clone())).await;

    let first = fake.requests().pop().unwrap();
    let sent = first.body["messages"][0]["content"].as_str().unwrap();
    assert!(sent.starts_with(QUESTION), "the user's text comes first");
    assert!(sent.contains("<metaclaw-context>\n## Skills"), "{sent}");
    assert!(
        sent.contains("### writing-tests-first") || sent.contains("### flaky-test-triage"),
        "a testing skill was picked: {sent}"
    );
    assert!(
        !sent.contains("### account-security-basics"),
        "nothing unrelated"
    );
    let generation = status(&home)["skills"]["generation"].as_u64().unwrap();
    assert!(generation >= 1);

    // A clean stop drains the remembered block with the turn; a new process must put the
    // same bytes back when the client resends the message.
    assert!(home.run(&["stop"]).status.success());
    let store = metaclaw_store::Store::open_read_only(&home.path().join("metaclaw.db")).unwrap();
    let turns = store.session_turns("conv-1").unwrap();
    assert_eq!(turns.len(), 1);
    assert!(!turns[0].injected_skills.is_empty());
    assert!(
        turns[0]
            .injected_skills
            .iter()
            .all(|s| sent.contains(&format!("### {s}\n")))
    );
    assert_eq!(turns[0].skill_generation, generation);
    drop(store);

    home.start_daemon().await;
    messages.push(json!({"role":"assistant","content":"Check the import path."}));
    messages.push(json!({"role":"user","content":"Thanks. Now write a haiku about autumn."}));
    chat(port, "conv-1", &Value::from(messages)).await;
    let second = fake.requests().pop().unwrap();
    assert!(
        second.raw.starts_with(&through_last_message(&first)),
        "prefix changed across the restart:\n{}\n---\n{}",
        first.raw,
        second.raw
    );
    assert_eq!(second.raw.matches("<metaclaw-context>").count(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edited_skill_is_served_without_a_restart() {
    let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let port = free_port();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\n  model_id: fake-model\nproxy:\n  port: {port}\n",
        fake.base_url_openai()
    ));
    home.start_daemon().await;
    let before = status(&home)["skills"]["generation"].as_u64().unwrap();

    let file = home.path().join("skills/writing-tests-first/SKILL.md");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        format!("{text}\n\nEDITED-MARKER: run the one failing test first.\n"),
    )
    .unwrap();

    // The watcher debounces and reloads in the background (a plain write may be seen half
    // done first, then whole); poll the admin API until the engine serves the new text.
    // Bounded poll: nothing else to wait on.
    let token = home.admin_token();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let skill: Value = reqwest::Client::new()
            .get(format!(
                "http://127.0.0.1:{port}/api/skills/writing-tests-first"
            ))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if skill["body"]
            .as_str()
            .unwrap_or_default()
            .contains("EDITED-MARKER")
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the edit was never picked up"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(status(&home)["skills"]["generation"].as_u64().unwrap() > before);
    chat(port, "conv-2", &json!([{"role":"user","content":QUESTION}])).await;
    let sent = fake.requests().pop().unwrap().body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(sent.contains("EDITED-MARKER"), "{sent}");
}
