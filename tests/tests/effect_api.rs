//! What learning does, through the `metaclaw` binary: `/api/effect` counts what followed
//! the turns that carried each skill and memory (from the user's next message, in real
//! multi-turn conversations), flags a skill followed by corrections more often than the
//! rest, and compares held-out sessions (`learning.holdout`) with the others.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::{Duration, Instant};

use common::daemon::{Home, PROXY_KEY, free_port};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use reqwest::Method;
use serde_json::{Value, json};

const DEBUG: &str = "My pytest suite fails with an ImportError after I renamed a module. How do I debug this failing test?";
const CORRECTION: &str = "No, that's wrong: the test still fails with the same error.";
const HAIKU: &str = "Write a haiku about autumn leaves falling on a quiet lake.";
const GOING_ON: &str = "Lovely. Now one about the first snow of winter.";

struct Daemon {
    fake: FakeUpstream,
    /// Stops the daemon when dropped.
    _home: Home,
    port: u16,
    token: String,
}

impl Daemon {
    async fn start(extra: &str) -> Daemon {
        let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
        let port = free_port();
        let home = Home::new(&format!(
            "llm:\n  api: openai\n  api_base: {}\n  model_id: fake-model\nproxy:\n  port: {port}\n{extra}",
            fake.base_url_openai()
        ));
        home.start_daemon().await;
        let token = home.admin_token();
        Daemon {
            fake,
            _home: home,
            port,
            token,
        }
    }

    async fn admin(&self, method: Method, path: &str) -> (u16, Value) {
        let r = reqwest::Client::new()
            .request(method, format!("http://127.0.0.1:{}{path}", self.port))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    async fn effect(&self) -> Value {
        let (s, v) = self.admin(Method::GET, "/api/effect?days=1").await;
        assert_eq!(s, 200, "{v}");
        v
    }

    /// One conversation of the user's `words`, each sent with what came before; returns
    /// each request as forwarded upstream.
    async fn conversation(&self, session: &str, words: &[&str]) -> Vec<String> {
        let mut chat = Chat::new(session);
        let mut forwarded = Vec::new();
        for text in words {
            forwarded.push(chat.say(self, text).await);
        }
        forwarded
    }

    /// Waits until the served library shows `name` as `disabled` (edits reach it through
    /// the file watcher).
    async fn wait_disabled(&self, name: &str, disabled: bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let (_, skill) = self
                .admin(Method::GET, &format!("/api/skills/{name}"))
                .await;
            if skill["disabled"] == disabled {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{name} never became disabled={disabled}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// A conversation in progress: each message is sent with everything before it.
struct Chat {
    session: String,
    messages: Vec<Value>,
}

impl Chat {
    fn new(session: &str) -> Chat {
        Chat {
            session: session.into(),
            messages: Vec::new(),
        }
    }

    /// Sends the user's `text`; returns the request as forwarded upstream.
    async fn say(&mut self, d: &Daemon, text: &str) -> String {
        self.messages.push(json!({"role": "user", "content": text}));
        self.send(d).await
    }

    /// Sends the last request again, as an agent does after an error or a timeout.
    async fn retry(&mut self, d: &Daemon) -> String {
        self.messages.pop();
        self.send(d).await
    }

    async fn send(&mut self, d: &Daemon) -> String {
        let r = reqwest::Client::new()
            .post(format!("http://127.0.0.1:{}/v1/chat/completions", d.port))
            .bearer_auth(PROXY_KEY)
            .header("x-session-id", &self.session)
            .json(&json!({"model": "m", "messages": self.messages}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let reply: Value = r.json().await.unwrap();
        let sent = d.fake.requests().pop().unwrap();
        self.messages.push(
            json!({"role": "assistant", "content": reply["choices"][0]["message"]["content"]}),
        );
        sent.raw
    }
}

fn carried(sent: &str) -> bool {
    sent.contains("<metaclaw-context>")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_skill_followed_by_corrections_is_flagged_and_a_memory_is_counted() {
    let d = Daemon::start("").await;
    let created = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{}/api/memory", d.port))
        .bearer_auth(&d.token)
        .json(&json!({"kind": "project_state", "content": "The pytest suite lives in tests/unit and runs with tox."}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 200);

    // Nothing yet: no turns, nothing claimed.
    let empty = d.effect().await;
    assert_eq!(empty["baseline"]["turns"], 0);
    assert_eq!(empty["baseline"]["correction_rate"], Value::Null);
    assert_eq!(empty["holdout"]["share"], 0.0);
    assert_eq!(empty["holdout"]["verdict"], Value::Null);
    assert_eq!(empty["min_sample"], 20);
    for days in ["0", "93", "x"] {
        let (s, v) = d
            .admin(Method::GET, &format!("/api/effect?days={days}"))
            .await;
        assert_eq!(s, 400, "days={days}: {v}");
    }

    // 21 conversations where the debugging answer is corrected, 21 where the poem is liked.
    for i in 0..21 {
        let sent = d
            .conversation(&format!("debug-{i}"), &[DEBUG, CORRECTION])
            .await;
        assert!(
            carried(&sent[0]),
            "a testing skill is injected: {}",
            sent[0]
        );
        d.conversation(&format!("poem-{i}"), &[HAIKU, GOING_ON])
            .await;
    }
    let report = d.effect().await;
    let base = &report["baseline"];
    assert_eq!(base["turns"], 84, "{base}");
    assert_eq!(
        base["labelled"], 42,
        "the first message of each conversation"
    );
    assert_eq!(base["corrections"], 21, "{base}");
    assert_eq!(
        base["thanks"], 0,
        "the poem's follow-up goes on without a word of thanks"
    );

    // Every skill that came with the debugging question was followed by a correction each
    // time; the poem's turns (with or without a skill) never were.
    let flagged: Vec<&Value> = report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| !s["flag"].is_null())
        .collect();
    assert!(!flagged.is_empty(), "{report}");
    for skill in &flagged {
        assert_eq!(skill["labelled"], 21, "{skill}");
        assert_eq!(skill["corrections"], 21, "{skill}");
        assert_eq!(skill["correction_rate"], 1.0);
        assert_eq!(skill["without_rate"], 0.0);
        assert!(skill["block_tokens"].as_u64().unwrap() > 0);
        let why = skill["flag"].as_str().unwrap();
        assert!(
            why.contains("100% of the time (21 of 21), against 0% without it (0 of 21)"),
            "{why}"
        );
    }
    for skill in report["skills"].as_array().unwrap() {
        if skill["flag"].is_null() {
            assert!(
                skill["correction_rate"] != 1.0 || skill["labelled"].as_u64().unwrap() < 20,
                "an always-corrected skill with enough turns must be flagged: {skill}"
            );
        }
    }

    // The memory about the test suite came with the debugging question too.
    let memory = &report["memories"].as_array().unwrap()[0];
    assert!(memory["turns"].as_u64().unwrap() >= 21, "{memory}");
    assert!(memory["flag"].is_null(), "memories are never flagged");
    assert!(!memory["item"].as_str().unwrap().starts_with("memory:"));

    // An agent's retry is not the user speaking: counted apart, and the user's next words
    // label the resent turn.
    let mut chat = Chat::new("retried");
    chat.say(&d, DEBUG).await;
    chat.retry(&d).await;
    chat.say(&d, "Thanks, that fixed it.").await;
    let base = &d.effect().await["baseline"];
    assert_eq!(base["retries"], 1, "{base}");
    assert_eq!(base["thanks"], 1, "{base}");
    assert_eq!(base["labelled"], 43, "{base}");

    // A flagged skill disabled from the flag is no longer injected; undone, it is again.
    // (The forwarded request is JSON text: the block's newlines are escaped in it.)
    let name = flagged[0]["item"].as_str().unwrap().to_owned();
    let before = d.conversation("before-disable", &[DEBUG]).await;
    assert!(
        before[0].contains(&format!("### {name}\\n")),
        "{}",
        before[0]
    );
    let (s, _) = d
        .admin(Method::POST, &format!("/api/skills/{name}/disable"))
        .await;
    assert_eq!(s, 200);
    d.wait_disabled(&name, true).await;
    let without = d.conversation("after-disable", &[DEBUG]).await;
    assert!(
        !without[0].contains(&format!("### {name}\\n")),
        "{}",
        without[0]
    );
    let (s, _) = d
        .admin(Method::POST, &format!("/api/skills/{name}/enable"))
        .await;
    assert_eq!(s, 200);
    d.wait_disabled(&name, false).await;
    let again = d.conversation("after-undo", &[DEBUG]).await;
    assert!(again[0].contains(&format!("### {name}\\n")), "{}", again[0]);
}

#[tokio::test(flavor = "multi_thread")]
async fn held_out_sessions_get_no_block_and_are_compared_once_both_arms_have_enough() {
    let d = Daemon::start("learning:\n  holdout: 0.5\n").await;
    let (mut with, mut without) = (0_u64, 0_u64);
    let mut i = 0;
    let mut checked_early = false;
    // Held-out sessions are corrected, the others are not, until each arm has 20.
    while with < 20 || without < 20 {
        let mut chat = Chat::new(&format!("s-{i}"));
        i += 1;
        let first = chat.say(&d, DEBUG).await;
        let next = if carried(&first) {
            with += 1;
            GOING_ON
        } else {
            without += 1;
            CORRECTION
        };
        let second = chat.say(&d, next).await;
        assert_eq!(
            carried(&second),
            carried(&first),
            "a session stays in its arm"
        );
        if !checked_early && with >= 5 && without >= 5 {
            checked_early = true;
            let early = d.effect().await;
            assert_eq!(early["holdout"]["verdict"], Value::Null, "{early}");
            assert_eq!(early["holdout"]["without"]["sessions"], without);
        }
        assert!(i < 200, "both arms should fill with a share of 0.5");
    }
    let report = d.effect().await;
    let h = &report["holdout"];
    assert_eq!(h["share"], 0.5);
    assert_eq!(h["with"]["sessions"], with, "{h}");
    assert_eq!(h["without"]["sessions"], without, "{h}");
    assert_eq!(
        h["without"]["block_tokens"], 0,
        "nothing injected when held out"
    );
    assert!(h["with"]["block_tokens"].as_u64().unwrap() > 0);
    // Each session's first message is labelled by the second.
    assert_eq!(h["without"]["labelled"], without, "{h}");
    assert_eq!(h["without"]["corrections"], without);
    assert_eq!(h["with"]["corrections"], 0);
    let verdict = h["verdict"].as_str().unwrap();
    assert!(
        verdict.contains("fewer corrections with them, beyond chance"),
        "{verdict}"
    );
    assert!(
        verdict.contains(&format!("{without} sessions)")),
        "{verdict}"
    );
}

#[test]
fn a_holdout_above_a_half_is_refused_with_its_key() {
    let home = Home::new("");
    let o = home.run(&["config", "set", "learning.holdout", "0.7"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("learning.holdout"), "{err}");
    assert!(err.contains("between 0 and 0.5"), "{err}");
    let o = home.run(&["config", "set", "learning.holdout", "0.1"]);
    assert!(o.status.success(), "{o:?}");
}
