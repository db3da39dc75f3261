//! Does the agent get better? A user states a rule once; later conversations (new session
//! ids) need it. The fake model answers those right only when the rule is in its prompt, and
//! learns exactly the rules a prompt states when asked to write skills or memories.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::Duration;

use common::daemon::{Home, PROXY_KEY, free_port};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream, Task};
use serde_json::{Value, json};

const RULE: &str = "From now on, always write meeting times in ISO 8601 with the +08:00 offset.";
/// Asks for ISO 8601 but not for the offset: only the learned rule supplies `+08:00`.
const QUESTION: &str = "Give me the standup meeting time tomorrow in ISO 8601.";
const RIGHT: &str = "2026-12-03T09:30:00+08:00";

struct Agent {
    /// Kept alive for the agent's lifetime: the model, and the home whose drop stops the daemon.
    _fake: FakeUpstream,
    _home: Home,
    port: u16,
    token: String,
}

async fn start(config: &str) -> Agent {
    let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    fake.add_task(Task {
        asks: "standup meeting time".into(),
        needs: "+08:00".into(),
        right: RIGHT.into(),
        wrong: "2026-12-03T09:30:00".into(),
    });
    let port = free_port();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\n  model_id: fake-model\nproxy:\n  port: {port}\n{config}",
        fake.base_url_openai()
    ));
    home.start_daemon().await;
    let token = home.admin_token();
    Agent {
        _fake: fake,
        _home: home,
        port,
        token,
    }
}

impl Agent {
    async fn ask(&self, session: &str, text: &str, done: bool) -> String {
        let mut req = reqwest::Client::new()
            .post(format!(
                "http://127.0.0.1:{}/v1/chat/completions",
                self.port
            ))
            .bearer_auth(PROXY_KEY)
            .header("x-session-id", session)
            .json(&json!({"model":"agent","messages":[{"role":"user","content":text}]}));
        if done {
            req = req.header("x-session-done", "true");
        }
        let r: Value = req.send().await.unwrap().json().await.unwrap();
        r["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// The daemon's log, for failure messages.
    fn log(&self) -> String {
        let o = self._home.run(&["logs", "-n", "60"]);
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    async fn admin(&self, path: &str) -> Value {
        reqwest::Client::new()
            .get(format!("http://127.0.0.1:{}{path}", self.port))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Session 1 states the rule and ends; then four new conversations ask the question.
    /// Returns how many of the four were answered right.
    async fn scenario(&self, learned: impl AsyncFn(&Agent)) -> usize {
        self.ask("s1", &format!("Hi! {RULE} Thanks."), true).await;
        learned(self).await;
        let mut right = 0;
        for s in 2..=5 {
            if self.ask(&format!("s{s}"), QUESTION, false).await == RIGHT {
                right += 1;
            }
        }
        right
    }
}

/// Waits for the session-end evolution to be logged. Bounded poll: the evolution runs in the
/// background and the log is the only thing to watch.
async fn evolution_logged(agent: &Agent) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let log = agent.admin("/api/skills/log").await;
        if !log["events"].as_array().unwrap().is_empty() {
            assert_eq!(log["events"][0]["outcome"], "added", "{log}");
            return;
        }
        assert!(std::time::Instant::now() < deadline, "no evolution: {log}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until the rule is stored as a memory, through the compatibility search route.
/// Bounded poll: extraction runs in the background after the session ends.
async fn memory_stored(agent: &Agent) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let found: Value = reqwest::Client::new()
            .get(format!(
                "http://127.0.0.1:{}/v1/memory/search?q=meeting%20times%20ISO",
                agent.port
            ))
            .bearer_auth(PROXY_KEY)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if let Some(hit) = found.as_array().and_then(|a| a.first()) {
            assert!(hit["content"].as_str().unwrap().contains("+08:00"), "{hit}");
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "nothing remembered; log:\n{}",
            agent.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn memory_remembers_a_stated_rule_and_later_sessions_get_it_right() {
    let agent = start("skills:\n  enabled: false\n").await;
    let right = agent.scenario(memory_stored).await;
    assert_eq!(right, 4, "sessions 2–5 with the remembered rule");
}

#[tokio::test(flavor = "multi_thread")]
async fn skills_learn_a_stated_rule_and_later_sessions_get_it_right() {
    let agent = start("skills:\n  evolution_every_n_turns: 0\nmemory:\n  enabled: false\n").await;
    let right = agent.scenario(evolution_logged).await;
    let search = agent
        .admin(&format!("/api/skills/search?q={}", urlencode(QUESTION)))
        .await;
    assert_eq!(right, 4, "sessions 2–5 with the learned skill: {search}");
    let skill = agent
        .admin("/api/skills/rule-write-meeting-times-iso")
        .await;
    assert_eq!(skill["source"], "evolved", "{skill}");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_learning_later_sessions_get_it_wrong() {
    let agent = start("skills:\n  auto_evolve: false\nmemory:\n  enabled: false\n").await;
    let right = agent.scenario(async |_| {}).await;
    assert_eq!(right, 0, "nothing learned, nothing right");
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
