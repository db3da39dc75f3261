//! Extraction and reconciliation through the binary against a fake extraction model: a
//! changed preference supersedes the old one, a repeated fact is not stored twice, a
//! malformed answer loses nothing, and without any model the rules still remember.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use common::daemon::{Home, PROXY_KEY, free_port};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use serde_json::{Value, json};

struct Daemon {
    _chat: FakeUpstream,
    extractor: FakeUpstream,
    _home: Home,
    port: u16,
    token: String,
}

async fn start(with_model: bool) -> Daemon {
    let chat = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let extractor = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let port = free_port();
    // Without a model, the main LLM would be the extractor; an Anthropic-only main LLM with
    // no extractor settings still resolves one, so "no model" is a config without llm.
    let config = if with_model {
        format!(
            "llm:\n  api: openai\n  api_base: {}\n  model_id: chat\nmemory:\n  extractor_api_base: {}\n  extractor_model: extractor\nskills:\n  enabled: false\nproxy:\n  port: {port}\n",
            chat.base_url_openai(),
            extractor.base_url_openai()
        )
    } else {
        format!("skills:\n  enabled: false\nproxy:\n  port: {port}\n")
    };
    let home = Home::new(&config);
    home.start_daemon().await;
    let token = home.admin_token();
    Daemon {
        _chat: chat,
        extractor,
        _home: home,
        port,
        token,
    }
}

impl Daemon {
    /// Pushes one turn for `session` through the compatibility route (no upstream needed).
    async fn turn(&self, session: &str, text: &str) {
        let r = reqwest::Client::new()
            .post(format!("http://127.0.0.1:{}/v1/memory/buffer_turn", self.port))
            .bearer_auth(PROXY_KEY)
            .json(&json!({"session_id": session, "turn": {"prompt_text": text, "response_text": "OK."}}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }

    async fn extract(&self, session: &str) -> Value {
        reqwest::Client::new()
            .post(format!("http://127.0.0.1:{}/api/memory/extract", self.port))
            .bearer_auth(&self.token)
            .json(&json!({"session_id": session}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    async fn units(&self, status: &str) -> Vec<Value> {
        let page: Value = reqwest::Client::new()
            .get(format!(
                "http://127.0.0.1:{}/api/memory?kind=preference&status={status}",
                self.port
            ))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        page["units"].as_array().unwrap().clone()
    }
}

fn answer(content: &str) -> String {
    json!({"memories": [{"kind": "preference", "content": content, "fact_key": "pref:indentation",
                          "importance": 0.8, "confidence": 0.9, "tags": ["style"], "source_turn": null}]})
    .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_preference_supersedes_a_repeat_is_ignored_and_garbage_loses_nothing() {
    let d = start(true).await;

    d.turn("s1", "I indent with tabs.").await;
    d.extractor.push_reply(answer("Indents code with tabs."));
    let out = d.extract("s1").await;
    assert_eq!(
        out["added"].as_array().unwrap().len(),
        2,
        "the fact and the session summary: {out}"
    );
    let request = d.extractor.requests().pop().unwrap();
    assert_eq!(
        request.body["response_format"]["json_schema"]["name"],
        "memories"
    );

    d.turn("s2", "Actually I switched to spaces, four of them.")
        .await;
    d.extractor
        .push_reply(answer("Indents code with four spaces."));
    let out = d.extract("s2").await;
    assert_eq!(
        out["superseded"].as_array().unwrap().len(),
        2,
        "the old preference, and the previous session's summary by this one: {out}"
    );
    let active = d.units("active").await;
    assert_eq!(active.len(), 1);
    assert_eq!(active[0]["content"], "Indents code with four spaces.");
    let old = d.units("superseded").await;
    assert_eq!(old[0]["content"], "Indents code with tabs.");
    assert_eq!(old[0]["superseded_by"], active[0]["id"]);

    d.turn("s3", "Remember: four spaces.").await;
    d.extractor
        .push_reply(answer("Indents code with four spaces."));
    let out = d.extract("s3").await;
    assert_eq!(out["ignored"], 1, "{out}");
    assert_eq!(d.units("active").await.len(), 1, "not stored twice");

    // An unusable answer is sent back once with the reason; the repaired answer is stored.
    d.turn("s4", "I also prefer dark themes.").await;
    d.extractor
        .push_reply("I'd rather not answer in JSON today.");
    d.extractor.push_reply(
        json!({"memories": [{"kind": "preference", "content": "Prefers dark themes.", "fact_key": "pref:theme",
                              "importance": 0.7, "confidence": 0.9, "tags": [], "source_turn": null}]})
        .to_string(),
    );
    let calls = d.extractor.request_count();
    let out = d.extract("s4").await;
    assert!(out["error"].is_null(), "{out}");
    assert_eq!(out["extractor"], "model", "{out}");
    assert_eq!(d.extractor.request_count(), calls + 2, "one repair");
    let repair = d.extractor.requests().pop().unwrap().body.to_string();
    assert!(repair.contains("could not be used"), "{repair}");
    assert!(repair.contains("I'd rather not answer in JSON today."));
    assert!(
        repair.contains("I also prefer dark themes."),
        "the task itself again"
    );
    assert_eq!(d.units("active").await.len(), 2);

    // Unusable twice: the rules read the turns at once, and the model is not asked again
    // for them.
    d.turn("s5", "I prefer answers in German.").await;
    d.extractor.push_reply("No JSON from me.");
    d.extractor.push_reply("Still no JSON.");
    let calls = d.extractor.request_count();
    let out = d.extract("s5").await;
    assert_eq!(d.extractor.request_count(), calls + 2);
    assert_eq!(out["extractor"], "rules", "{out}");
    let fallback = out["fallback"].as_str().unwrap();
    assert!(
        fallback.contains("not usable") && fallback.contains("repaired once"),
        "{out}"
    );
    let again = d.extract("s5").await;
    assert_eq!(again["turns"], 0, "the turns were read: {again}");
    assert_eq!(d.extractor.request_count(), calls + 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_model_the_rules_remember_in_several_languages() {
    let d = start(false).await;
    d.turn("r1", "I prefer short answers with code first.")
        .await;
    d.turn("r1", "我更喜欢用中文回答。").await;
    let out = d.extract("r1").await;
    assert_eq!(out["extractor"], "rules", "{out}");
    let contents: Vec<String> = d
        .units("active")
        .await
        .iter()
        .map(|u| u["content"].as_str().unwrap().to_string())
        .collect();
    assert!(
        contents.iter().any(|c| c.contains("short answers")),
        "{contents:?}"
    );
    assert!(contents.iter().any(|c| c.contains("中文")), "{contents:?}");
    assert_eq!(d.extractor.request_count(), 0);
}
