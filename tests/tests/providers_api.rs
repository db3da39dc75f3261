//! Provider presets and the connection test through the real binary: the presets with the
//! configured one, a test with the stored key, a refused key, a key that stays home, and
//! malformed requests.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use common::daemon::{Home, free_port};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const STORED_KEY: &str = "sk-stored-e2e-1234567890";
const WRONG_KEY: &str = "sk-wrong-e2e-LEAK-0987654321";

struct Daemon {
    fake: FakeUpstream,
    /// Held for its `Drop`, which stops the daemon.
    _home: Home,
    port: u16,
    token: String,
}

impl Daemon {
    async fn start() -> Daemon {
        let fake = FakeUpstream::start(FakeOptions {
            api_key: Some(STORED_KEY.into()),
            ..FakeOptions::default()
        })
        .await
        .unwrap();
        let port = free_port();
        let home = Home::new(&format!(
            "llm:\n  provider: custom\n  api: openai\n  api_base: {}\n  model_id: fake-model\nproxy:\n  port: {port}\nskills:\n  enabled: false\n",
            fake.base_url_openai()
        ));
        // The file backend's store, as `metaclaw config set llm.api_key` would write it.
        std::fs::write(
            home.path().join("secrets.yaml"),
            format!("llm.api_key: {STORED_KEY}\n"),
        )
        .unwrap();
        home.start_daemon().await;
        let token = home.admin_token();
        Daemon {
            fake,
            _home: home,
            port,
            token,
        }
    }

    async fn call(&self, method: Method, path: &str, body: Option<&str>) -> (StatusCode, String) {
        let mut req = reqwest::Client::new()
            .request(method, format!("http://127.0.0.1:{}{path}", self.port))
            .bearer_auth(&self.token);
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_owned());
        }
        let r = req.send().await.unwrap();
        (r.status(), r.text().await.unwrap())
    }

    async fn test(&self, body: Value) -> Value {
        let (s, text) = self
            .call(Method::POST, "/api/providers/test", Some(&body.to_string()))
            .await;
        assert_eq!(s, StatusCode::OK, "{text}");
        assert!(
            !text.contains(STORED_KEY) && !text.contains(WRONG_KEY),
            "{text}"
        );
        serde_json::from_str(&text).unwrap()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn presets_and_connection_tests_through_the_admin_api() {
    let d = Daemon::start().await;
    let base = d.fake.base_url_openai();

    let (s, text) = d.call(Method::GET, "/api/providers", None).await;
    assert_eq!(s, StatusCode::OK, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    let presets = v["presets"].as_array().unwrap();
    assert_eq!(presets.len(), 11);
    let ollama = presets.iter().find(|p| p["name"] == "ollama").unwrap();
    assert_eq!(ollama["api_base"], "http://127.0.0.1:11434/v1");
    assert_eq!(ollama["key_required"], false);
    let openrouter = presets.iter().find(|p| p["name"] == "openrouter").unwrap();
    assert_eq!(openrouter["api_base"], "https://openrouter.ai/api/v1");
    assert_eq!(openrouter["api"], "openai");
    assert_eq!(openrouter["key_required"], true);
    assert_eq!(openrouter["extra_headers"]["X-Title"], "MetaClaw");
    let anthropic = presets.iter().find(|p| p["name"] == "anthropic").unwrap();
    assert_eq!(anthropic["api"], "anthropic");
    assert_eq!(v["configured"]["preset"], "custom");
    assert_eq!(v["configured"]["api_base"], base.as_str());
    assert_eq!(v["configured"]["model_id"], "fake-model");
    assert_eq!(v["configured"]["key_stored"], true);

    // No key given: the stored one goes to the configured base, and the model is listed.
    let r = d
        .test(json!({"provider": "custom", "api_base": base}))
        .await;
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["checked"], "models");
    assert_eq!(r["model_listed"], true);
    assert_eq!(r["models"], json!(["fake-model"]));
    assert!(r["latency_ms"].is_u64());
    let listed = d.fake.requests();
    let models = listed
        .iter()
        .rev()
        .find(|r| r.path == "/v1/models")
        .unwrap();
    assert_eq!(
        models.header("authorization"),
        Some(format!("Bearer {STORED_KEY}").as_str())
    );

    let r = d
        .test(json!({"provider": "custom", "api_base": base, "api_key": WRONG_KEY}))
        .await;
    assert_eq!(r["ok"], false, "{r}");
    assert_eq!(r["error"]["kind"], "auth");
    assert_eq!(r["error"]["status"], 401);
    let said = r["error"]["message"].as_str().unwrap();
    assert!(said.starts_with("the provider refused the key"), "{said}");

    // Another host never gets the stored key.
    let before = d.fake.requests().len();
    let r = d.test(json!({"provider": "openai"})).await;
    assert_eq!(r["ok"], false, "{r}");
    assert_eq!(r["error"]["kind"], "auth");
    assert_eq!(r["error"]["message"], "no API key: OpenAI needs one");
    assert_eq!(d.fake.requests().len(), before);

    let r = d
        .test(json!({"provider": "custom", "api_base": "http://127.0.0.1:1/v1", "model": "m"}))
        .await;
    assert_eq!(r["error"]["kind"], "network", "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("cannot reach 127.0.0.1:1: "),
        "{r}"
    );

    for bad in [
        "not json",
        r#"{"api_base": "http://x"}"#,
        r#"{"provider": "nope"}"#,
        r#"{"provider": "custom"}"#,
        r#"{"provider": "custom", "api_base": "ftp://x"}"#,
        r#"{"provider": "custom", "api_base": "http://x", "api": "grpc"}"#,
        r#"{"provider": "openai", "key": "x"}"#,
    ] {
        let (s, text) = d.call(Method::POST, "/api/providers/test", Some(bad)).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{bad}: {text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert!(v["error"]["message"].is_string(), "{text}");
    }

    let r = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{}/api/providers", d.port))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
}
