//! Tell it once, and it stays told: a rule taught as a correction comes back for the very
//! same request on five later days, each day's routine session learned from in between.
//!
//! The learning model is terse (it only restates the rule; nothing it writes names the kind
//! of task), and the request shares no word with the rule, so neither a description nor word
//! matching can bring the rule back: the memory's standing-rules profile must, and a learned
//! skill must be found through the request it was learned from. Each day's session ends with
//! "Thanks." and is learned from before the next day, so yesterday's session summary, which
//! holds the same request, is there to crowd the rule out.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::{Duration, Instant};

use common::daemon::{Home, PROXY_KEY, free_port};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream, Task};
use serde_json::{Value, json};

const REQUEST: &str =
    "Write the log line for the stand-up meeting that began at nine this morning.";
const RULE: &str =
    "No. From now on, always write every timestamp in ISO 8601 with the +08:00 offset.";
const RIGHT: &str = "2026-12-07T09:00:00+08:00 stand-up began";

struct Agent {
    _fake: FakeUpstream,
    home: Home,
    port: u16,
    token: String,
    memory: bool,
    skills: bool,
}

async fn start(memory: bool, skills: bool) -> Agent {
    let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    fake.read_lessons(true);
    fake.terse_lessons(true);
    fake.add_task(Task {
        asks: "log line for the stand-up meeting".into(),
        needs: "+08:00".into(),
        right: RIGHT.into(),
        wrong: "09:00 stand-up began".into(),
    });
    let port = free_port();
    let skills_yaml = if skills {
        "skills:\n  evolution_every_n_turns: 0\n"
    } else {
        "skills:\n  enabled: false\n"
    };
    let memory_yaml = if memory {
        "memory:\n  flush_every: 0\n"
    } else {
        "memory:\n  enabled: false\n"
    };
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\n  model_id: fake-model\nproxy:\n  port: {port}\n{skills_yaml}{memory_yaml}",
        fake.base_url_openai()
    ));
    home.start_daemon().await;
    let token = home.admin_token();
    Agent {
        _fake: fake,
        home,
        port,
        token,
        memory,
        skills,
    }
}

impl Agent {
    async fn chat(&self, session: &str, messages: Value, done: bool) -> String {
        let mut req = reqwest::Client::new()
            .post(format!(
                "http://127.0.0.1:{}/v1/chat/completions",
                self.port
            ))
            .bearer_auth(PROXY_KEY)
            .header("x-session-id", session)
            .json(&json!({"model": "agent", "messages": messages}));
        if done {
            req = req.header("x-session-done", "true");
        }
        let r: Value = req.send().await.unwrap().json().await.unwrap();
        r["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .to_string()
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

    /// Session-end learning jobs finished so far: (extractions, evolutions).
    async fn learned(&self) -> (u64, u64) {
        let status = self.admin("/api/status").await;
        let n = |v: &Value| v.as_u64().unwrap_or(0);
        (
            n(&status["learning_calls"]["by_purpose"]["extraction"]["calls"]),
            n(&status["skills"]["evolutions"]) + n(&status["skills"]["evolutions_failed"]),
        )
    }

    /// Waits (bounded) until `sessions` sessions were learned from by each part that is on.
    async fn settle(&self, sessions: u64) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let (extractions, evolutions) = self.learned().await;
            let memory_done = !self.memory || extractions >= sessions;
            let skills_done = !self.skills || evolutions >= sessions;
            if memory_done && skills_done {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "learning did not settle ({extractions} extractions, {evolutions} evolutions of {sessions})"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Teaches the rule as a correction, then asks the request on five later days. Returns
    /// the days the answer followed the rule, and what the model was sent on a day it did not.
    async fn five_days(&self) -> (usize, Vec<String>) {
        let first = self
            .chat(
                "teach",
                json!([{"role": "user", "content": REQUEST}]),
                false,
            )
            .await;
        assert!(!first.contains("+08:00"), "nothing taught yet: {first}");
        let messages = json!([
            {"role": "user", "content": REQUEST},
            {"role": "assistant", "content": first},
            {"role": "user", "content": RULE},
        ]);
        self.chat("teach", messages, true).await;
        self.settle(1).await;
        let (mut right, mut missed) = (0, Vec::new());
        for day in 1..=5u64 {
            let session = format!("day-{day}");
            let answer = self
                .chat(
                    &session,
                    json!([{"role": "user", "content": REQUEST}]),
                    false,
                )
                .await;
            if answer == RIGHT {
                right += 1;
            } else {
                let block = self.admin("/api/status").await;
                missed.push(format!("day {day}: {answer:?} ({})", block["memory"]));
            }
            let messages = json!([
                {"role": "user", "content": REQUEST},
                {"role": "assistant", "content": answer},
                {"role": "user", "content": "Thanks."},
            ]);
            self.chat(&session, messages, true).await;
            self.settle(day + 1).await;
        }
        (right, missed)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn memory_brings_a_taught_rule_back_on_five_later_days() {
    let agent = start(true, false).await;
    let (right, missed) = agent.five_days().await;
    let units = agent.admin("/api/memory?limit=50").await;
    assert_eq!(right, 5, "{missed:?}\nmemories: {units}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_learned_skill_comes_back_through_the_request_it_was_learned_from() {
    let agent = start(false, true).await;
    let (right, missed) = agent.five_days().await;
    let skills = agent.admin("/api/skills").await;
    assert_eq!(right, 5, "{missed:?}\nskills: {skills}");
}

#[tokio::test(flavor = "multi_thread")]
async fn memory_and_skills_together_bring_it_back_on_five_later_days() {
    let agent = start(true, true).await;
    let (right, missed) = agent.five_days().await;
    assert_eq!(right, 5, "{missed:?}");
    drop(agent.home);
}
