//! The engine's client for background-job models, against the fake upstream: both protocols,
//! structured output and its fallback, errors that never show the key, and embeddings.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream, Fault};
use metaclaw_engine::llm::{Completion, Endpoint, LlmError, complete, embed};
use metaclaw_engine::secrets::Secret;
use metaclaw_proxy::seams::Protocol;
use serde_json::json;

const KEY: &str = "sk-fake-upstream-key-0001";

async fn fake() -> FakeUpstream {
    FakeUpstream::start(FakeOptions {
        api_key: Some(KEY.into()),
        ..FakeOptions::default()
    })
    .await
    .unwrap()
}

fn endpoint(protocol: Protocol, base_url: String) -> Endpoint {
    Endpoint {
        protocol,
        base_url,
        model: "evolver-model".into(),
        api_key: Some(Secret::new(KEY)),
        extra_headers: vec![("x-team".into(), "skills".into())],
        timeout: Duration::from_secs(20),
    }
}

fn request(schema: bool) -> Completion {
    Completion {
        system: "You write skills.".into(),
        user: "Summarise the session.".into(),
        max_tokens: 512,
        json_schema: schema.then(|| {
            (
                "skills".to_owned(),
                json!({ "type": "object", "properties": { "skills": { "type": "array" } } }),
            )
        }),
    }
}

const SCRIPTED: &str = r#"{"skills": [{"name": "retry-flaky-tests"}]}"#;

#[tokio::test]
async fn openai_sends_the_schema_as_response_format() {
    let f = fake().await;
    f.push_reply(SCRIPTED);
    let ep = endpoint(Protocol::Openai, f.base_url_openai());
    let text = complete(&reqwest::Client::new(), &ep, &request(true))
        .await
        .unwrap();
    assert_eq!(text, SCRIPTED);

    let reqs = f.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(r.header("x-team"), Some("skills"));
    assert_eq!(r.body["model"], "evolver-model");
    assert_eq!(r.body["max_tokens"], 512);
    assert_eq!(r.body["messages"][0]["content"], "You write skills.");
    assert_eq!(r.body["messages"][1]["content"], "Summarise the session.");
    let format = &r.body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "skills");
    assert_eq!(format["json_schema"]["strict"], false);
    assert_eq!(format["json_schema"]["schema"]["type"], "object");

    // Without a schema there is no response_format, and the fake's own reply comes back.
    let text = complete(&reqwest::Client::new(), &ep, &request(false))
        .await
        .unwrap();
    assert_eq!(text, "Echo: Summarise the session.");
    assert!(f.requests()[1].body.get("response_format").is_none());
    f.shutdown().await;
}

#[tokio::test]
async fn openai_retries_without_response_format_when_refused() {
    let f = fake().await;
    f.reject_response_format(true);
    f.push_reply(SCRIPTED);
    let ep = endpoint(Protocol::Openai, f.base_url_openai());
    let text = complete(&reqwest::Client::new(), &ep, &request(true))
        .await
        .unwrap();
    assert_eq!(text, SCRIPTED);

    let reqs = f.requests();
    assert_eq!(reqs.len(), 2, "one refusal, one retry");
    assert!(reqs[0].body.get("response_format").is_some());
    assert!(reqs[1].body.get("response_format").is_none());
    let system = reqs[1].body["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("You write skills."), "{system}");
    assert!(system.contains("JSON schema"), "{system}");
    f.shutdown().await;
}

#[tokio::test]
async fn anthropic_puts_the_schema_in_the_system_prompt() {
    let f = fake().await;
    f.push_reply(SCRIPTED);
    let ep = endpoint(Protocol::Anthropic, f.base_url_anthropic());
    let text = complete(&reqwest::Client::new(), &ep, &request(true))
        .await
        .unwrap();
    assert_eq!(text, SCRIPTED);

    let r = &f.requests()[0];
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some(KEY));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("authorization"), None);
    assert_eq!(r.body["max_tokens"], 512);
    assert!(r.body.get("response_format").is_none());
    let system = r.body["system"].as_str().unwrap();
    assert!(system.starts_with("You write skills."), "{system}");
    assert!(
        system.contains("JSON only") || system.contains("JSON object only"),
        "{system}"
    );
    assert_eq!(r.body["messages"][0]["content"], "Summarise the session.");

    // A base that already ends in /v1 is not doubled.
    f.push_reply("plain");
    let ep = endpoint(Protocol::Anthropic, f.base_url_openai());
    assert_eq!(
        complete(&reqwest::Client::new(), &ep, &request(false))
            .await
            .unwrap(),
        "plain"
    );
    assert_eq!(f.requests()[1].path, "/v1/messages");
    f.shutdown().await;
}

#[tokio::test]
async fn a_rejected_key_is_a_401_whose_text_never_shows_the_key() {
    let f = fake().await;
    let wrong = "sk-wrong-key-do-not-print-4242";
    for (protocol, base) in [
        (Protocol::Openai, f.base_url_openai()),
        (Protocol::Anthropic, f.base_url_anthropic()),
    ] {
        let mut ep = endpoint(protocol, base);
        ep.api_key = Some(Secret::new(wrong));
        let err = complete(&reqwest::Client::new(), &ep, &request(true))
            .await
            .unwrap_err();
        assert_eq!(err.status(), Some(401), "{err}");
        let text = err.to_string();
        assert!(!text.contains(wrong), "{text}");
        assert!(!format!("{err:?}").contains(wrong));
        assert!(text.contains(&format!("http://{}", f.addr())), "{text}");
        assert!(
            text.contains("401") && text.contains("evolver-model"),
            "{text}"
        );
        assert!(!text.contains("/v1"), "no path in the text: {text}");
    }
    // A 401 is not mistaken for a structured-output refusal: one request each, no retry.
    assert_eq!(f.requests().len(), 2);
    f.shutdown().await;
}

#[tokio::test]
async fn server_errors_timeouts_and_unreachable_hosts() {
    let f = fake().await;
    let ep = endpoint(Protocol::Openai, f.base_url_openai());
    f.push_fault(Fault::ServerError);
    let err = complete(&reqwest::Client::new(), &ep, &request(false))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(500));

    let mut quick = ep.clone();
    quick.timeout = Duration::from_millis(200);
    f.push_fault(Fault::Hang);
    let err = complete(&reqwest::Client::new(), &quick, &request(false))
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Timeout { .. }), "{err}");
    f.shutdown().await;

    // Port 1 is privileged and unused: the connection is refused.
    let closed = endpoint(Protocol::Openai, "http://127.0.0.1:1/v1".into());
    let err = complete(&reqwest::Client::new(), &closed, &request(false))
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Network { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.starts_with("the model `evolver-model` at http://127.0.0.1:1 could not be reached"),
        "{text}"
    );
    assert!(!text.contains(KEY) && !text.contains("/v1"), "{text}");
}

#[tokio::test]
async fn embeddings_come_back_in_input_order() {
    let f = fake().await;
    let mut ep = endpoint(Protocol::Openai, f.base_url_openai());
    ep.model = "text-embedding-3-small".into();
    let http = reqwest::Client::new();
    let inputs: Vec<String> = [
        "fix the flaky test",
        "deploy to production",
        "flaky test fix",
    ]
    .map(String::from)
    .to_vec();
    let vectors = embed(&http, &ep, &inputs).await.unwrap();
    assert_eq!(vectors.len(), 3);
    assert!(vectors.iter().all(|v| v.len() == 64));
    for (input, vector) in inputs.iter().zip(&vectors) {
        let alone = embed(&http, &ep, std::slice::from_ref(input))
            .await
            .unwrap();
        assert_eq!(&alone[0], vector, "{input}");
    }
    let cosine = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    assert!(cosine(&vectors[0], &vectors[2]) > 0.8);
    assert!(cosine(&vectors[0], &vectors[1]) < 0.5);

    let r = &f.requests()[0];
    assert_eq!(r.path, "/v1/embeddings");
    assert_eq!(r.body["model"], "text-embedding-3-small");
    assert_eq!(r.body["input"][1], "deploy to production");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );

    assert!(embed(&http, &ep, &[]).await.unwrap().is_empty());
    assert_eq!(f.embedding_requests(), 4, "no request for no inputs");

    f.push_fault(Fault::RateLimited);
    let err = embed(&http, &ep, &inputs).await.unwrap_err();
    assert_eq!(err.status(), Some(429));
    f.shutdown().await;
}
