//! What learning costs is recorded per UTC day and purpose, through the real binary: the
//! embedding calls that index the skills and embed a turn's question are counted with the
//! tokens the provider reported, in the database, and are still there after a restart.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use common::daemon::{Home, PROXY_KEY, free_port};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use serde_json::{Value, json};

struct Daemon {
    home: Home,
    port: u16,
}

impl Daemon {
    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    async fn admin(&self, method: reqwest::Method, path: &str) -> Value {
        let r = reqwest::Client::new()
            .request(method, self.url(path))
            .bearer_auth(self.home.admin_token())
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{path}: {}", r.status());
        r.json().await.unwrap()
    }

    /// Readiness: the skills' vectors are in (a bounded poll on what the engine reports).
    async fn wait_semantic(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let found = self
                .admin(
                    reqwest::Method::GET,
                    "/api/skills/search?q=debug%20a%20test",
                )
                .await;
            if found["semantic"] == true {
                return;
            }
            assert!(Instant::now() < deadline, "no semantic index: {found}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn usage(&self) -> Vec<Value> {
        self.admin(reqwest::Method::POST, "/api/recorder/flush")
            .await;
        let v = self
            .admin(reqwest::Method::GET, "/api/learning/usage?days=1")
            .await;
        v["days"].as_array().unwrap().clone()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn learning_calls_are_recorded_per_day_and_purpose_and_survive_a_restart() {
    let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let port = free_port();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\n  model_id: fake-model\nproxy:\n  port: {port}\n\
         skills:\n  auto_evolve: false\n  retrieval_mode: embedding\n  embedding_source: api\n  embedding_model: fake-embed\n\
         memory:\n  auto_extract: false\n  retrieval_mode: keyword\n",
        fake.base_url_openai()
    ));
    home.start_daemon().await;
    let d = Daemon { home, port };
    d.wait_semantic().await;
    // The turn's question is embedded before the turn is forwarded.
    let r = reqwest::Client::new()
        .post(d.url("/v1/chat/completions"))
        .bearer_auth(PROXY_KEY)
        .json(&json!({"model": "m", "messages": [
            {"role": "user", "content": "My pytest suite fails after a rename; how do I debug it?"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    let days = d.usage().await;
    let made = fake.embedding_requests();
    assert!(made >= 2, "the index and the question were embedded");
    assert_eq!(days.len(), 1, "{days:?}");
    let row = &days[0];
    assert_eq!(row["purpose"], "embeddings");
    assert_eq!(row["calls"], made, "{row}");
    assert_eq!(row["failed"], 0, "{row}");
    assert!(row["input_tokens"].as_u64().unwrap() > 0, "{row}");
    let today = row["day"].as_str().unwrap().to_string();
    assert_eq!(today.len(), 10);

    assert!(d.home.run(&["stop"]).status.success());
    d.home.start_daemon().await;
    let again = d.usage().await;
    assert_eq!(again, days, "the day's counts come back from the database");
    assert_eq!(
        fake.embedding_requests(),
        made,
        "vectors came from the cache"
    );
}
