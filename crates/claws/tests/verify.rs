//! `verify` against a tiny local server speaking both protocols.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use metaclaw_claws::verify::{VerifyError, verify, verify_agent};
use metaclaw_claws::{Endpoint, Protocol};
use serde_json::{Value, json};

const KEY: &str = "mc-proxy-key-0123456789abcdef";

fn body_ok(body: &str) -> bool {
    let v: Value = serde_json::from_str(body).unwrap_or_default();
    v["max_tokens"] == 1 && v["messages"][0]["content"] == "ping" && v["model"] == "m1"
}

async fn openai(headers: HeaderMap, body: String) -> (StatusCode, String) {
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok());
    if auth != Some(&format!("Bearer {KEY}")) {
        return (
            StatusCode::UNAUTHORIZED,
            r#"{"error":{"message":"bad key"}}"#.into(),
        );
    }
    assert!(body_ok(&body), "{body}");
    (
        StatusCode::OK,
        json!({"model": "m1", "choices": []}).to_string(),
    )
}

async fn anthropic(headers: HeaderMap, body: String) -> (StatusCode, String) {
    let h = |k: &str| {
        headers
            .get(k)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    if h("x-api-key").as_deref() != Some(KEY) {
        return (StatusCode::FORBIDDEN, "forbidden".into());
    }
    assert_eq!(h("anthropic-version").as_deref(), Some("2023-06-01"));
    assert!(body_ok(&body), "{body}");
    (
        StatusCode::OK,
        json!({"model": "m1", "content": []}).to_string(),
    )
}

async fn broken() -> (StatusCode, String) {
    (
        StatusCode::BAD_GATEWAY,
        r#"{"error":{"message":"upstream provider unreachable"}}"#.into(),
    )
}

async fn slow() -> StatusCode {
    tokio::time::sleep(Duration::from_secs(10)).await;
    StatusCode::OK
}

async fn serve() -> String {
    let app = Router::new()
        .route("/v1/chat/completions", post(openai))
        .route("/v1/messages", post(anthropic))
        .route("/broken/v1/chat/completions", post(broken))
        .route("/slow/v1/chat/completions", post(slow));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

fn ep(protocol: Protocol, base: String, key: &str) -> Endpoint {
    Endpoint {
        protocol,
        base,
        api_key: key.into(),
        model: "m1".into(),
    }
}

const T: Duration = Duration::from_secs(5);

#[tokio::test]
async fn both_protocols_succeed_with_the_right_key() {
    let base = serve().await;
    let v = verify(&ep(Protocol::OpenAi, format!("{base}/v1"), KEY), T)
        .await
        .unwrap();
    assert_eq!(v.status, 200);
    assert_eq!(v.model.as_deref(), Some("m1"));
    assert!(v.url.ends_with("/v1/chat/completions"));
    let v = verify(&ep(Protocol::Anthropic, base.clone(), KEY), T)
        .await
        .unwrap();
    assert_eq!(v.status, 200);
    assert!(v.url.ends_with("/v1/messages"));
}

#[tokio::test]
async fn a_wrong_key_names_the_agent_and_never_shows_the_key() {
    let base = serve().await;
    for e in [
        ep(
            Protocol::OpenAi,
            format!("{base}/v1"),
            "sk-wrong-key-0123456789",
        ),
        ep(Protocol::Anthropic, base.clone(), "sk-wrong-key-0123456789"),
    ] {
        let err = verify_agent("openclaw", &e, T).await.unwrap_err();
        assert!(matches!(err, VerifyError::WrongKey { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(
            msg.contains("the key in openclaw's config is not MetaClaw's proxy key"),
            "{msg}"
        );
        assert!(!msg.contains("sk-wrong-key") && !format!("{err:?}").contains("sk-wrong-key"));
    }
}

#[tokio::test]
async fn a_refused_port_says_metaclaw_is_not_running() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    for e in [
        ep(Protocol::OpenAi, format!("http://127.0.0.1:{port}/v1"), KEY),
        ep(Protocol::Anthropic, format!("http://127.0.0.1:{port}"), KEY),
    ] {
        let err = verify(&e, T).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "MetaClaw is not running on 127.0.0.1:{port} (connection refused): start it, then verify again"
            )
        );
    }
}

#[tokio::test]
async fn not_found_server_errors_and_timeouts_are_told_apart() {
    let base = serve().await;
    // An OpenAI base without /v1.
    let err = verify(&ep(Protocol::OpenAi, base.clone(), KEY), T)
        .await
        .unwrap_err();
    assert!(matches!(err, VerifyError::NotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("/v1"));

    let err = verify(&ep(Protocol::OpenAi, format!("{base}/broken/v1"), KEY), T)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        VerifyError::Server {
            url: format!("{base}/broken/v1/chat/completions"),
            status: 502,
            message: "upstream provider unreachable".into(),
        }
    );

    let err = verify(
        &ep(Protocol::OpenAi, format!("{base}/slow/v1"), KEY),
        Duration::from_millis(300),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, VerifyError::Timeout { .. }), "{err:?}");

    let err = verify(&ep(Protocol::OpenAi, "127.0.0.1:1/v1".into(), KEY), T)
        .await
        .unwrap_err();
    assert!(matches!(err, VerifyError::BadBase { .. }));
}
