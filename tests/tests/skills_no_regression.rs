//! A learned skill survives a learning model that has nothing to say, through the binary: a
//! rule the user taught is learned, then later unrelated sessions are evolved on while the
//! model answers with filler ("Nothing new"), an empty list, prose, the template restated,
//! or a different rule under the skill's name. Every skill file stays byte for byte as it
//! was, the generation does not move, and the refusals are in the evolution log.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::daemon::{Home, PROXY_KEY, free_port, stdout};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use serde_json::{Value, json};

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

async fn evolve(home: &Home, port: u16, session: &str) -> Value {
    let r = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/api/skills/evolve"))
        .bearer_auth(home.admin_token())
        .json(&json!({"session_id": session}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    r.json().await.unwrap()
}

/// Every `SKILL.md` of the library, by folder, as bytes.
fn files(library: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(library)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("SKILL.md").is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(p.join("SKILL.md")).unwrap())
        })
        .collect()
}

fn generation(home: &Home) -> u64 {
    let v: Value = serde_json::from_str(&stdout(&home.run(&["status", "--json"]))).unwrap();
    v["skills"]["generation"].as_u64().unwrap()
}

/// An answer proposing `body` for the skill `name`, as a model filling every field would.
fn proposal(name: &str, description: &str, body: &str) -> String {
    json!({"skills": [{
        "name": name,
        "description": description,
        "category": "general",
        "tags": [],
        "body": body,
        "improves": name
    }]})
    .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_filler_answer_leaves_every_skill_unchanged() {
    let (upstream, learner) = (
        FakeUpstream::start(FakeOptions::default()).await.unwrap(),
        FakeUpstream::start(FakeOptions::default()).await.unwrap(),
    );
    let port = free_port();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\n  model_id: chat-model\nproxy:\n  port: {port}\n\
         skills:\n  evolver_api_base: {}\n  evolver_model: learner\n  auto_evolve: false\n",
        upstream.base_url_openai(),
        learner.base_url_openai(),
    ));
    home.start_daemon().await;
    let library = home.path().join("skills");

    // The user teaches a rule; the learning model writes it down.
    chat(
        port,
        "s-teach",
        "From now on, write dates as YYYY-MM-DD in every report.",
    )
    .await;
    let taught = evolve(&home, port, "s-teach").await;
    let name = taught["added"][0].as_str().unwrap().to_owned();
    let text = String::from_utf8(files(&library)[&name].clone()).unwrap();
    assert!(text.contains("write dates as YYYY-MM-DD"), "{text}");
    let before = files(&library);
    let generation_before = generation(&home);

    let restated = "# Title\n\n## When to use\n\n## Steps\n\n## Anti-patterns\n";
    let answers: Vec<(Vec<String>, &str)> = vec![
        (
            vec![proposal(
                &name,
                "Nothing new was learned in this session.",
                "Nothing new was learned in this session.",
            )],
            "body says nothing",
        ),
        (vec![json!({"skills": []}).to_string()], ""),
        // Prose twice: the answer and its one repair.
        (vec!["Nothing new.".into(), "Nothing new.".into()], ""),
        (
            vec![proposal(&name, "Use when writing any report.", restated)],
            "body says nothing",
        ),
        (
            vec![proposal(
                &name,
                "Use when summarising a meeting for the team.",
                "Summarise every meeting as three bullets: decisions, owners, next steps.",
            )],
            "would drop what",
        ),
    ];
    for (i, (replies, refusal)) in answers.into_iter().enumerate() {
        let session = format!("s-later-{i}");
        chat(
            port,
            &session,
            "Summarise this meeting for the team, please.",
        )
        .await;
        for reply in replies {
            learner.push_reply(reply);
        }
        let out = evolve(&home, port, &session).await;
        assert_eq!(out["added"], json!([]), "{out}");
        assert_eq!(out["improved"], json!([]), "{out}");
        if !refusal.is_empty() {
            assert!(
                out["rejected"][0]["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains(refusal)),
                "{out}"
            );
        }
        assert_eq!(files(&library), before, "answer {i} changed a skill: {out}");
    }
    assert_eq!(generation(&home), generation_before);
    let log = stdout(&home.run(&["skills", "log", "--full"]));
    assert!(
        log.contains("body says nothing") && log.contains(&format!("would drop what \"{name}\"")),
        "{log}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rules_taught_in_separate_sessions_stay_separate_skills() {
    let (upstream, learner) = (
        FakeUpstream::start(FakeOptions::default()).await.unwrap(),
        FakeUpstream::start(FakeOptions::default()).await.unwrap(),
    );
    let port = free_port();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\n  model_id: chat-model\nproxy:\n  port: {port}\n\
         skills:\n  evolver_api_base: {}\n  evolver_model: learner\n  auto_evolve: false\n",
        upstream.base_url_openai(),
        learner.base_url_openai(),
    ));
    home.start_daemon().await;
    // A plain learning model: each rule becomes a skill of the same template.
    let rules = [
        "From now on, write dates as YYYY-MM-DD in every report",
        "From now on, summarise meetings in exactly three bullets",
        "From now on, prefix commit messages with the ticket number",
    ];
    for (i, rule) in rules.iter().enumerate() {
        let session = format!("s-rule-{i}");
        chat(port, &session, &format!("{rule}.")).await;
        let out = evolve(&home, port, &session).await;
        assert_eq!(out["outcome"], "added", "{out}");
    }
    let bodies: Vec<String> = files(&home.path().join("skills"))
        .into_values()
        .map(|b| String::from_utf8(b).unwrap())
        .collect();
    for rule in rules {
        let holding = bodies.iter().filter(|b| b.contains(rule)).count();
        assert_eq!(holding, 1, "{rule}: {holding} skills hold it");
    }
}
