//! `scheduler.gate_background_learning` holds memory consolidation through the real binary:
//! with `memory.auto_consolidate` on, an extraction that changes a scope while no window is
//! open (paused) leaves its duplicates unmerged; once the window opens (resume, inside the
//! sleep hours) the consolidation runs. Children run with TZ=UTC.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::daemon::{Home, PROXY_KEY, free_port};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use reqwest::Method;
use serde_json::{Value, json};

const DUPLICATE: &str = "Deploys happen on Tuesdays.";

fn hhmm(secs: u64) -> String {
    let of_day = secs % (24 * 3600);
    format!("{:02}:{:02}", of_day / 3600, (of_day % 3600) / 60)
}

struct Daemon {
    _chat: FakeUpstream,
    extractor: FakeUpstream,
    _home: Home,
    port: u16,
    token: String,
}

impl Daemon {
    /// Memory on with automatic consolidation, the gate on, inside the sleep hours.
    async fn start() -> Daemon {
        let chat = FakeUpstream::start(FakeOptions::default()).await.unwrap();
        let extractor = FakeUpstream::start(FakeOptions::default()).await.unwrap();
        let port = free_port();
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let home = Home::new(&format!(
            "llm:\n  api: openai\n  api_base: {}\n  model_id: chat\nproxy:\n  port: {port}\n\
             skills:\n  enabled: false\n\
             memory:\n  enabled: true\n  auto_consolidate: true\n  extractor_api_base: {}\n  extractor_model: extractor\n\
             scheduler:\n  gate_background_learning: true\n  sleep_start: '{}'\n  sleep_end: '{}'\n",
            chat.base_url_openai(),
            extractor.base_url_openai(),
            hhmm(now - 3600),
            hhmm(now + 3 * 3600),
        ));
        let mut start = home.cmd("file", &["start", "--daemon"]);
        start.env("TZ", "UTC");
        let o = tokio::task::spawn_blocking(move || start.output().unwrap())
            .await
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        let token = home.admin_token();
        Daemon {
            _chat: chat,
            extractor,
            _home: home,
            port,
            token,
        }
    }

    async fn call(&self, key: &str, method: Method, path: &str, body: Option<Value>) -> Value {
        let mut req = reqwest::Client::new()
            .request(method, format!("http://127.0.0.1:{}{path}", self.port))
            .bearer_auth(key);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        assert!(r.status().is_success(), "{path}: {r:?}");
        r.json().await.unwrap_or(Value::Null)
    }

    async fn admin(&self, method: Method, path: &str, body: Option<Value>) -> Value {
        self.call(&self.token, method, path, body).await
    }

    /// The active units saying [`DUPLICATE`].
    async fn duplicates(&self) -> usize {
        let page = self
            .admin(Method::GET, "/api/memory?status=active&limit=100", None)
            .await;
        page["units"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|u| u["content"] == DUPLICATE)
            .count()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn gated_consolidation_waits_for_a_window_then_merges() {
    let d = Daemon::start().await;
    let paused = d
        .admin(Method::POST, "/api/scheduler/pause", Some(json!({})))
        .await;
    assert_eq!(paused["state"], "paused", "{paused}");

    // Two units saying the same thing, added by hand (which never consolidates).
    for _ in 0..2 {
        d.admin(
            Method::POST,
            "/api/memory",
            Some(json!({"kind": "semantic", "content": DUPLICATE})),
        )
        .await;
    }
    assert_eq!(d.duplicates().await, 2);

    // An extraction that changes the default scope: with no gate it would consolidate
    // before answering.
    d.call(
        PROXY_KEY,
        Method::POST,
        "/v1/memory/buffer_turn",
        Some(json!({"session_id": "s1",
                    "turn": {"prompt_text": "I indent with tabs.", "response_text": "OK."}})),
    )
    .await;
    d.extractor.push_reply(
        json!({"memories": [{"kind": "preference", "content": "Indents code with tabs.",
                             "fact_key": "pref:indentation", "importance": 0.8,
                             "confidence": 0.9, "tags": ["style"], "source_turn": null}]})
        .to_string(),
    );
    let out = d
        .admin(
            Method::POST,
            "/api/memory/extract",
            Some(json!({"session_id": "s1"})),
        )
        .await;
    assert_eq!(out["scope"], "default", "{out}");
    assert!(
        !out["added"].as_array().unwrap().is_empty(),
        "the extraction changed the scope: {out}"
    );
    assert_eq!(
        d.duplicates().await,
        2,
        "consolidated while no window was open"
    );
    let s = d.admin(Method::GET, "/api/scheduler", None).await;
    assert_eq!(s["state"], "paused", "{s}");

    // The window opens: the held consolidation merges the two into one.
    d.admin(Method::POST, "/api/scheduler/resume", None).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while d.duplicates().await != 1 {
        assert!(
            Instant::now() < deadline,
            "no consolidation after the window opened"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let merged = d
        .admin(Method::GET, "/api/memory?status=superseded&limit=100", None)
        .await;
    let superseded = merged["units"].as_array().unwrap();
    assert!(
        superseded.iter().any(|u| u["content"] == DUPLICATE),
        "the other copy is superseded, not lost: {merged}"
    );
    // The new preference was not merged into anything.
    let tabs = d
        .admin(
            Method::GET,
            "/api/memory?kind=preference&status=active",
            None,
        )
        .await;
    assert_eq!(
        tabs["units"][0]["content"], "Indents code with tabs.",
        "{tabs}"
    );
}
