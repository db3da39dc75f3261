//! A real daemon with memory on and skills off, in front of a fake upstream, and the HTTP
//! calls the memory tests make: as the agent (proxy key), as a person (admin token).

use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::daemon::{Home, PROXY_KEY, free_port};

pub struct MemoryDaemon {
    pub fake: FakeUpstream,
    pub home: Home,
    pub port: u16,
    pub token: String,
}

impl MemoryDaemon {
    /// A daemon with skills off whose chat goes to a fresh fake upstream; `extra` is
    /// appended to the config.
    pub async fn start(extra: &str) -> MemoryDaemon {
        Self::start_with("", extra).await
    }

    /// [`Self::start`] with `skills` more lines under `skills:` (indented), such as the
    /// embedding source memory shares with skills.
    pub async fn start_with(skills: &str, extra: &str) -> MemoryDaemon {
        let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
        let port = free_port();
        let home = Home::new(&format!(
            "llm:\n  api: openai\n  api_base: {}\n  model_id: fake-model\nproxy:\n  port: {port}\nskills:\n  enabled: false\n{skills}{extra}",
            fake.base_url_openai()
        ));
        home.start_daemon().await;
        let token = home.admin_token();
        MemoryDaemon {
            fake,
            home,
            port,
            token,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// A call as the agent (with the proxy key).
    pub async fn agent(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        self.call(PROXY_KEY, method, path, body).await
    }

    /// A call as a person (with the admin token).
    pub async fn admin(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        self.call(&self.token, method, path, body).await
    }

    async fn call(
        &self,
        key: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = reqwest::Client::new()
            .request(method, self.url(path))
            .bearer_auth(key);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        let status = r.status();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    pub async fn chat(&self, session: &str, scope: &str, text: &str, done: bool) -> Value {
        let mut req = reqwest::Client::new()
            .post(self.url("/v1/chat/completions"))
            .bearer_auth(PROXY_KEY)
            .header("x-session-id", session)
            .header("x-memory-scope", scope)
            .json(&json!({"model":"m","messages":[{"role":"user","content":text}]}));
        if done {
            req = req.header("x-session-done", "true");
        }
        let r = req.send().await.unwrap();
        assert_eq!(r.status(), 200);
        let requests = self.fake.requests();
        let chat = requests
            .iter()
            .rev()
            .find(|r| r.path.contains("/chat/completions"))
            .unwrap();
        chat.body.clone()
    }

    /// The database and its write-ahead log, where every write lands first.
    pub fn db_bytes(&self) -> Vec<u8> {
        let mut bytes = std::fs::read(self.home.path().join("metaclaw.db")).unwrap();
        bytes.extend(std::fs::read(self.home.path().join("metaclaw.db-wal")).unwrap_or_default());
        bytes
    }
}
