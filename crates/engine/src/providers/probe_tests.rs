//! The connection test against a local fake provider: a good key, a refused key, a model
//! that is not offered, no model list, a slow server, a closed port.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::*;
use crate::config::LlmApi;
use crate::secrets::Secret;

const GOOD_KEY: &str = "sk-good-KEY-1234567890";
const BAD_KEY: &str = "sk-wrong-LEAK-987654321";

/// `None` when the key is the good one, else the refusal to send.
fn refusal(headers: &HeaderMap) -> Option<Response> {
    let bearer = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let x_api_key = headers.get("x-api-key").and_then(|v| v.to_str().ok());
    match bearer.or(x_api_key) {
        Some(GOOD_KEY) => None,
        // Echoes the key, as some providers do: the probe must mask it.
        Some(other) => Some(status(
            401,
            json!({"error": {"message": format!("Incorrect API key provided: {other}")}}),
        )),
        None => Some(status(401, json!({"error": {"message": "missing key"}}))),
    }
}

fn status(code: u16, body: Value) -> Response {
    (StatusCode::from_u16(code).unwrap(), Json(body)).into_response()
}

async fn models(headers: HeaderMap) -> Response {
    if let Some(r) = refusal(&headers) {
        return r;
    }
    let ids = if headers.contains_key("x-api-key") {
        vec!["claude-test-20250101"]
    } else {
        vec!["fake-model", "other-model"]
    };
    let data: Vec<Value> = ids.iter().map(|id| json!({"id": id})).collect();
    Json(json!({"object": "list", "data": data})).into_response()
}

/// Serves the listed models and `served-unlisted`; anything else is `model_not_found`.
async fn completion(headers: HeaderMap, Json(body): Json<Value>) -> Response {
    if let Some(r) = refusal(&headers) {
        return r;
    }
    assert_eq!(body["max_tokens"], 1, "a test costs one token");
    let model = body["model"].as_str().unwrap_or_default();
    let known = [
        "fake-model",
        "other-model",
        "served-unlisted",
        "claude-alias",
    ];
    if known.contains(&model) {
        return Json(json!({"choices": [{"message": {"content": "p"}}]})).into_response();
    }
    if headers.contains_key("x-api-key") {
        return status(
            404,
            json!({"type": "error", "error": {"type": "not_found_error", "message": format!("model: {model}")}}),
        );
    }
    status(
        404,
        json!({"error": {"code": "model_not_found", "message": format!("The model `{model}` does not exist")}}),
    )
}

async fn slow() -> Response {
    tokio::time::sleep(Duration::from_secs(5)).await;
    Json(json!({"data": []})).into_response()
}

async fn broken() -> Response {
    status(500, json!({"error": {"message": "upstream exploded"}}))
}

/// OpenRouter's shape: the list needs no key, `/key` does.
async fn public_models() -> Response {
    Json(json!({"data": [{"id": "fake-model"}]})).into_response()
}

async fn key_info(headers: HeaderMap) -> Response {
    if let Some(r) = refusal(&headers) {
        return r;
    }
    Json(json!({"data": {"label": "sk-good…"}})).into_response()
}

async fn fake_provider() -> String {
    let app = Router::new()
        .route("/v1/models", get(models))
        .route("/v1/chat/completions", post(completion))
        .route("/v1/messages", post(completion))
        .route("/nolist/v1/chat/completions", post(completion))
        .route("/slow/v1/models", get(slow))
        .route("/broken/v1/models", get(broken))
        .route("/public/v1/models", get(public_models))
        .route("/public/v1/key", get(key_info));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // A fake provider for the test, not an engine task.
    #[allow(clippy::disallowed_methods)]
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

fn target(base: String, api: LlmApi, model: &str, key: Option<&str>) -> Target {
    Target {
        api_base: base,
        api,
        model: model.into(),
        api_key: key.map(Secret::new),
        extra_headers: Vec::new(),
        key_check: None,
        timeout: Duration::from_secs(2),
    }
}

async fn run(t: &Target) -> Result<Connected, ProbeError> {
    let result = probe(&reqwest::Client::new(), t).await;
    let shown = format!("{t:?} {result:?}");
    for key in [GOOD_KEY, BAD_KEY] {
        assert!(!shown.contains(key), "key leaked: {shown}");
    }
    result
}

fn err(r: Result<Connected, ProbeError>) -> ProbeError {
    match r {
        Ok(c) => panic!("expected an error, got {c:?}"),
        Err(e) => e,
    }
}

#[tokio::test]
async fn a_good_key_and_a_listed_model_pass_on_the_model_list() {
    let base = fake_provider().await;
    let c = run(&target(
        format!("{base}/v1"),
        LlmApi::Openai,
        "fake-model",
        Some(GOOD_KEY),
    ))
    .await
    .unwrap();
    assert_eq!(c.checked, Check::Models);
    assert_eq!(c.model_listed, Some(true));
    assert_eq!(c.models, ["fake-model", "other-model"]);
    assert_eq!(c.models_total, 2);

    let report = test_connection(
        &reqwest::Client::new(),
        &target(format!("{base}/v1/"), LlmApi::Openai, "", Some(GOOD_KEY)),
    )
    .await;
    let v = serde_json::to_value(&report).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["checked"], "models");
    assert_eq!(v["model_listed"], Value::Null, "no model given");
    assert!(v["latency_ms"].is_u64());
    assert_eq!(v["error"], Value::Null);
}

#[tokio::test]
async fn a_refused_key_is_an_auth_error_that_never_shows_the_key() {
    let base = fake_provider().await;
    for api in [LlmApi::Openai, LlmApi::Anthropic] {
        let b = match api {
            LlmApi::Openai => format!("{base}/v1"),
            LlmApi::Anthropic => base.clone(),
        };
        let e = err(run(&target(b, api, "fake-model", Some(BAD_KEY))).await);
        assert_eq!(e.kind, ErrorKind::Auth);
        assert_eq!(e.status, Some(401));
        assert!(
            e.message.starts_with("the provider refused the key"),
            "{}",
            e.message
        );
        assert!(
            e.message.contains("Incorrect API key provided: ****"),
            "{}",
            e.message
        );
        let json = serde_json::to_string(&e).unwrap();
        assert!(!json.contains(BAD_KEY) && !json.contains("LEAK"), "{json}");
    }
    let e = err(run(&target(format!("{base}/v1"), LlmApi::Openai, "", None)).await);
    assert_eq!(e.kind, ErrorKind::Auth);
    assert!(
        e.message.starts_with("the provider wants an API key"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn a_model_not_offered_names_the_available_ones() {
    let base = fake_provider().await;
    let e = err(run(&target(
        format!("{base}/v1"),
        LlmApi::Openai,
        "gpt-nope",
        Some(GOOD_KEY),
    ))
    .await);
    assert_eq!(e.kind, ErrorKind::Model);
    assert_eq!(
        e.message,
        "model gpt-nope is not offered; available: fake-model, other-model"
    );

    // Listed nowhere but served: the one-token request has the last word.
    let c = run(&target(
        format!("{base}/v1"),
        LlmApi::Openai,
        "served-unlisted",
        Some(GOOD_KEY),
    ))
    .await
    .unwrap();
    assert_eq!(
        (c.checked, c.model_listed),
        (Check::Completion, Some(false))
    );

    // Anthropic: `/v1` added to the base, `x-api-key`, aliases missing from the list.
    let c = run(&target(
        base.clone(),
        LlmApi::Anthropic,
        "claude-alias",
        Some(GOOD_KEY),
    ))
    .await
    .unwrap();
    assert_eq!(c.models, ["claude-test-20250101"]);
    assert_eq!(c.model_listed, Some(false));
    let e = err(run(&target(
        base,
        LlmApi::Anthropic,
        "claude-nope",
        Some(GOOD_KEY),
    ))
    .await);
    assert_eq!(e.kind, ErrorKind::Model);
    assert_eq!(
        e.message,
        "model claude-nope is not offered; available: claude-test-20250101"
    );
}

#[tokio::test]
async fn without_a_model_list_one_token_decides() {
    let base = fake_provider().await;
    let nolist = format!("{base}/nolist/v1");
    let c = run(&target(
        nolist.clone(),
        LlmApi::Openai,
        "fake-model",
        Some(GOOD_KEY),
    ))
    .await
    .unwrap();
    assert_eq!(
        (c.checked, c.model_listed, c.models_total),
        (Check::Completion, None, 0)
    );

    let e = err(run(&target(
        nolist.clone(),
        LlmApi::Openai,
        "gpt-nope",
        Some(GOOD_KEY),
    ))
    .await);
    assert_eq!(e.kind, ErrorKind::Model);
    assert_eq!(e.status, Some(404));
    let host = host_of(&base).unwrap();
    assert_eq!(
        e.message,
        format!("model gpt-nope is not offered by {host}: The model `gpt-nope` does not exist")
    );

    let e = err(run(&target(
        nolist.clone(),
        LlmApi::Openai,
        "fake-model",
        Some(BAD_KEY),
    ))
    .await);
    assert_eq!(e.kind, ErrorKind::Auth);

    let e = err(run(&target(nolist, LlmApi::Openai, "", Some(GOOD_KEY))).await);
    assert_eq!(e.kind, ErrorKind::Model);
    assert!(e.message.contains("name a model"), "{}", e.message);
}

#[tokio::test]
async fn other_answers_carry_the_status_and_the_providers_message() {
    let base = fake_provider().await;
    let e = err(run(&target(
        format!("{base}/broken/v1"),
        LlmApi::Openai,
        "m",
        Some(GOOD_KEY),
    ))
    .await);
    assert_eq!(e.kind, ErrorKind::Other);
    assert_eq!(e.status, Some(500));
    let host = host_of(&base).unwrap();
    assert_eq!(
        e.message,
        format!("{host} answered HTTP 500: upstream exploded")
    );
}

#[tokio::test]
async fn a_slow_server_or_a_closed_port_is_a_network_error_in_bounded_time() {
    let base = fake_provider().await;
    let mut slow = target(
        format!("{base}/slow/v1"),
        LlmApi::Openai,
        "m",
        Some(GOOD_KEY),
    );
    slow.timeout = Duration::from_millis(300);
    let started = std::time::Instant::now();
    let e = err(run(&slow).await);
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(e.kind, ErrorKind::Network);
    let host = host_of(&base).unwrap();
    assert_eq!(
        e.message,
        format!("cannot reach {host}: no answer within 0.3 s")
    );

    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let e = err(run(&target(
        format!("http://127.0.0.1:{port}/v1"),
        LlmApi::Openai,
        "m",
        Some(BAD_KEY),
    ))
    .await);
    assert_eq!(e.kind, ErrorKind::Network);
    assert!(
        e.message
            .starts_with(&format!("cannot reach 127.0.0.1:{port}: ")),
        "{}",
        e.message
    );
    assert!(!e.message.contains("http://"), "no URL: {}", e.message);

    let e = err(run(&target(
        "ftp://example.com".into(),
        LlmApi::Openai,
        "m",
        None,
    ))
    .await);
    assert_eq!(e.kind, ErrorKind::Other);
}

#[tokio::test]
async fn a_public_model_list_does_not_pass_a_wrong_key() {
    let base = fake_provider().await;
    let public = format!("{base}/public/v1");
    let mut t = target(public, LlmApi::Openai, "fake-model", Some(BAD_KEY));
    assert!(run(&t).await.is_ok(), "the list alone cannot tell");
    t.key_check = Some("key".into());
    let e = err(run(&t).await);
    assert_eq!(e.kind, ErrorKind::Auth);
    t.api_key = Some(Secret::new(GOOD_KEY));
    assert_eq!(run(&t).await.unwrap().model_listed, Some(true));
    assert_eq!(
        key_check_path("https://openrouter.ai/api/v1").as_deref(),
        Some("key")
    );
    assert_eq!(key_check_path("https://api.openai.com/v1"), None);
}
