//! A real daemon in mode `rl` against an in-process fake training backend (serving the toy
//! model's tokenizer from its Hugging Face host), a fake judge and a fake upstream LLM, and
//! the calls the weight-learning tests make: chat as the agent, `/api/learning` and
//! `train_step` as a person.

use std::process::Command;
use std::time::Duration;

use super::events::EventStream;
use metaclaw_e2e::fake_judge::FakeJudge;
use metaclaw_e2e::fake_tinker::{FakeTinker, FakeTinkerOptions};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use metaclaw_e2e::toy_model::{self, ToyModel};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::daemon::{Home, PROXY_KEY, free_port};

pub const TINKER_KEY: &str = "tml-e2e-backend-key-0123456789";
pub const JUDGE_KEY: &str = "sk-judge-e2e-key";
pub const MODEL: &str = "Toy/toy-model";

/// Where the daemon finds the tokenizer.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TokenizerFrom {
    /// Already under `$METACLAW_HOME/models/`.
    Installed,
    /// Only on the fake Hugging Face host (`HF_ENDPOINT`).
    Download,
}

pub struct RlSetup {
    pub mode: &'static str,
    pub batch_size: u32,
    pub tokenizer: TokenizerFrom,
    /// A backend URL nothing listens on, instead of the fake's.
    pub backend_down: bool,
    /// The skill library on (without evolution), so its generation can change.
    pub skills: bool,
    /// On-policy distillation toward the fake judge's teacher endpoint.
    pub opd: bool,
    /// The pause before learning retries after a failure, instead of 30 s.
    pub backoff_ms: Option<u64>,
}

impl Default for RlSetup {
    fn default() -> Self {
        Self {
            mode: "rl",
            batch_size: 2,
            tokenizer: TokenizerFrom::Installed,
            backend_down: false,
            skills: false,
            opd: false,
            backoff_ms: None,
        }
    }
}

pub struct RlDaemon {
    pub toy: ToyModel,
    pub tinker: FakeTinker,
    pub judge: FakeJudge,
    pub upstream: FakeUpstream,
    pub home: Home,
    pub port: u16,
    /// Where the config points the backend (the fake's URL unless `backend_down`).
    pub backend_url: String,
    backoff_ms: Option<u64>,
    http: reqwest::Client,
}

impl RlDaemon {
    /// Starts the fakes and the daemon; returns once the daemon answers HTTP.
    pub async fn start(setup: RlSetup) -> RlDaemon {
        let toy = toy_model::build().unwrap();
        let tinker = FakeTinker::start(FakeTinkerOptions {
            api_key: TINKER_KEY.into(),
            ..toy.fake_options()
        })
        .await
        .unwrap();
        let judge = FakeJudge::start().await.unwrap();
        let upstream = FakeUpstream::start(FakeOptions::default()).await.unwrap();
        let backend_url = if setup.backend_down {
            format!("http://127.0.0.1:{}", free_port())
        } else {
            tinker.base_url()
        };
        let port = free_port();
        let home = Home::new(&format!(
            "mode: {mode}\n\
             llm:\n  api: openai\n  api_base: {llm}\n  model_id: toy-served\n\
             proxy:\n  port: {port}\n\
             skills:\n  enabled: {skills}\n  auto_evolve: false\n\
             memory:\n  enabled: false\n\
             rl:\n  backend: tinker\n  base_url: {backend_url}\n  model: {MODEL}\n  lora_rank: 8\n  \
             batch_size: {batch}\n  prm_url: {judge}\n  prm_model: judge\n  prm_m: 1\n  \
             checkpoint_every: 1\n  max_new_tokens: 64\n\
             opd:\n  enabled: {opd}\n  teacher_url: {judge}\n  teacher_model: teacher\n  \
             kl_penalty_coef: 1.0\n",
            mode = setup.mode,
            skills = setup.skills,
            llm = upstream.base_url_openai(),
            batch = setup.batch_size,
            judge = judge.base_url(),
            opd = setup.opd,
        ));
        match setup.tokenizer {
            TokenizerFrom::Installed => toy.install(home.path(), MODEL).unwrap(),
            TokenizerFrom::Download => toy.serve_on(&tinker, MODEL),
        }
        let d = RlDaemon {
            toy,
            tinker,
            judge,
            upstream,
            home,
            port,
            backend_url,
            backoff_ms: setup.backoff_ms,
            http: reqwest::Client::new(),
        };
        d.start_process().await;
        d
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = self.home.cmd("file", args);
        c.env("METACLAW_RL_API_KEY", TINKER_KEY)
            .env("METACLAW_RL_PRM_API_KEY", JUDGE_KEY)
            .env("METACLAW_OPD_TEACHER_API_KEY", JUDGE_KEY)
            .env("HF_ENDPOINT", self.tinker.hf_base_url())
            .env_remove("TINKER_API_KEY")
            .env_remove("TINKER_BASE_URL")
            .env_remove("HF_TOKEN");
        if let Some(ms) = self.backoff_ms {
            c.env("METACLAW_LEARNING_BACKOFF_MS", ms.to_string());
        }
        c
    }

    /// `metaclaw start --daemon`; returns once it answers.
    pub async fn start_process(&self) {
        let mut c = self.command(&["start", "--daemon"]);
        let o = tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap();
        assert!(o.status.success(), "start: {o:?}\n{}", self.log_tail());
    }

    /// `metaclaw stop`; returns once the daemon is gone.
    pub async fn stop_process(&self) {
        let mut c = self.command(&["stop"]);
        let o = tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap();
        assert!(o.status.success(), "stop: {o:?}");
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn admin_token(&self) -> String {
        self.home.admin_token()
    }

    /// The end of the daemon's log, for failure messages.
    pub fn log_tail(&self) -> String {
        let log =
            std::fs::read_to_string(self.home.path().join("logs/daemon.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// `GET /api/learning` with the admin token.
    pub async fn learning(&self) -> Value {
        let r = self
            .http
            .get(self.url("/api/learning"))
            .bearer_auth(self.admin_token())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        r.json().await.unwrap()
    }

    /// Polls `/api/learning` (bounded) until `pred` holds; returns that view.
    pub async fn wait_learning(
        &self,
        what: &str,
        secs: u64,
        pred: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = std::time::Instant::now() + Duration::from_secs(secs);
        loop {
            let v = self.learning().await;
            if pred(&v) {
                return v;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{what}: not within {secs} s; /api/learning = {v:#}\nlog:\n{}",
                self.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub async fn wait_ready(&self) -> Value {
        self.wait_learning("the trained model serving", 60, |v| v["state"] == "ready")
            .await
    }

    /// Polls (bounded) until `pred` holds for the fake judge's requests.
    pub async fn wait_judge(&self, what: &str, pred: impl Fn(&[(String, Value)]) -> bool) {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while !pred(&self.judge.requests()) {
            assert!(
                std::time::Instant::now() < deadline,
                "{what}: judge requests {:#?}\nlog:\n{}",
                self.judge.requests(),
                self.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The next sampled sequence (on any sampler) is exactly `text`'s tokens.
    pub fn script(&self, text: &str) {
        self.tinker.push_completion(self.toy.encode(text));
    }

    /// `POST /v1/chat/completions` as the agent in `session`.
    pub async fn chat(&self, session: &str, body: &Value, done: bool) -> reqwest::Response {
        self.agent_post("/v1/chat/completions", session, body, done)
            .await
    }

    /// `POST /v1/messages` (Anthropic) as the agent in `session`.
    pub async fn messages(&self, session: &str, body: &Value, done: bool) -> reqwest::Response {
        self.agent_post("/v1/messages", session, body, done).await
    }

    async fn agent_post(
        &self,
        path: &str,
        session: &str,
        body: &Value,
        done: bool,
    ) -> reqwest::Response {
        let mut req = self
            .http
            .post(self.url(path))
            .bearer_auth(PROXY_KEY)
            .header("x-session-id", session)
            .json(body);
        if done {
            req = req.header("x-session-done", "true");
        }
        req.send().await.unwrap()
    }

    /// A one-message user turn; returns the assistant message after checking the status.
    pub async fn say(&self, session: &str, text: &str, done: bool) -> Value {
        let body = json!({"model": "agent", "messages": [{"role": "user", "content": text}]});
        let r = self.chat(session, &body, done).await;
        assert_eq!(r.status(), 200);
        let v: Value = r.json().await.unwrap();
        v["choices"][0]["message"].clone()
    }

    /// An admin call with the admin token.
    pub async fn admin(&self, method: reqwest::Method, path: &str) -> (StatusCode, Value) {
        let r = self
            .http
            .request(method, self.url(path))
            .bearer_auth(self.admin_token())
            .send()
            .await
            .unwrap();
        let status = r.status();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// `POST /v1/admin/train_step` with `bearer` (none: no Authorization header).
    pub async fn train_step(&self, bearer: Option<&str>) -> (StatusCode, Value) {
        let mut req = self.http.post(self.url("/v1/admin/train_step"));
        if let Some(b) = bearer {
            req = req.bearer_auth(b);
        }
        let r = req.send().await.unwrap();
        let status = r.status();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// The backend's and the judge's keys (given by environment) are in neither the
    /// config nor the daemon's log.
    pub fn assert_no_secrets_on_disk(&self) {
        let log = std::fs::read_to_string(self.home.path().join("logs/daemon.log")).unwrap();
        let config = std::fs::read_to_string(self.home.path().join("config.yaml")).unwrap();
        assert!(log.contains("training step"), "the log is the daemon's");
        for key in [TINKER_KEY, JUDGE_KEY] {
            assert!(!log.contains(key) && !config.contains(key));
        }
    }

    /// `/api/events`, opened now.
    pub async fn events(&self) -> EventStream {
        let resp = self
            .http
            .get(self.url("/api/events"))
            .bearer_auth(self.admin_token())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        EventStream::new(resp)
    }

    /// Chat requests the upstream LLM received.
    pub fn upstream_chats(&self) -> usize {
        self.upstream
            .requests()
            .iter()
            .filter(|r| r.path.contains("/chat/completions"))
            .count()
    }
}
