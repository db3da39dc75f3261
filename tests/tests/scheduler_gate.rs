//! `scheduler.gate_background_learning` through the real binary: a session's skill
//! evolution waits while no window is open (here: paused) and runs once one opens (resume,
//! inside the sleep hours). Children run with TZ=UTC.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::daemon::{Home, PROXY_KEY, free_port};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream, Fault};
use serde_json::{Value, json};

/// How long a step, a window change or an answer may take before the test calls it stuck.
/// Generous because the suite also runs on a loaded machine (`scripts/test.sh --stress`):
/// what is waited for here is either prompt or never happens (a held step, a missing stop).
const PATIENCE: Duration = Duration::from_secs(20);
const RULE: &str = "From now on, always write meeting times in ISO 8601 with the +08:00 offset.";

fn hhmm(secs: u64) -> String {
    let of_day = secs % (24 * 3600);
    format!("{:02}:{:02}", of_day / 3600, (of_day % 3600) / 60)
}

fn ok(home: &Home, args: &[&str]) -> String {
    let o = home.cmd("file", args).env("TZ", "UTC").output().unwrap();
    assert!(o.status.success(), "metaclaw {args:?}: {o:?}");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

async fn admin(port: u16, token: &str, method: reqwest::Method, path: &str) -> Value {
    reqwest::Client::new()
        .request(method, format!("http://127.0.0.1:{port}{path}"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

struct Gated {
    fake: FakeUpstream,
    home: Home,
    port: u16,
    token: String,
}

/// A daemon inside its sleep hours with the gate on, started paused (only the pause keeps
/// the window shut), after one session whose end asks for an evolution.
async fn paused_after_a_session() -> Gated {
    let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let port = free_port();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\n  model_id: fake-model\nproxy:\n  port: {port}\n\
         skills:\n  evolution_every_n_turns: 0\nmemory:\n  enabled: false\n\
         scheduler:\n  gate_background_learning: true\n  sleep_start: '{}'\n  sleep_end: '{}'\n",
        fake.base_url_openai(),
        hhmm(now - 3600),
        hhmm(now + 3 * 3600),
    ));
    ok(&home, &["pause"]);
    ok(&home, &["start", "--daemon"]);
    let token = home.admin_token();

    let reply = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
        .bearer_auth(PROXY_KEY)
        .header("x-session-id", "gated-1")
        .header("x-session-done", "true")
        .json(&json!({"model": "agent", "messages": [{"role": "user", "content": RULE}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        reply.status().as_u16(),
        200,
        "chat is never held by the gate"
    );
    admin(port, &token, reqwest::Method::POST, "/api/recorder/flush").await;
    Gated {
        fake,
        home,
        port,
        token,
    }
}

impl Gated {
    async fn get(&self, path: &str) -> Value {
        admin(self.port, &self.token, reqwest::Method::GET, path).await
    }

    async fn events(&self) -> Vec<Value> {
        self.get("/api/skills/log").await["events"]
            .as_array()
            .unwrap()
            .clone()
    }

    /// Polls until `done` holds of `path`'s answer (bounded: the work is in the background).
    async fn wait_for(&self, path: &str, within: Duration, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = std::time::Instant::now() + within;
        loop {
            let v = self.get(path).await;
            if done(&v) {
                return v;
            }
            assert!(std::time::Instant::now() < deadline, "{path}: {v}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn gated_evolution_waits_for_a_window_then_runs() {
    let g = paused_after_a_session().await;
    let (fake, home, port, token) = (&g.fake, &g.home, g.port, g.token.as_str());
    // The session's end reached the worker, which held the evolution instead of running it.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !daemon_log(home).contains("skill evolution held until a training window opens") {
        assert!(std::time::Instant::now() < deadline, "{}", daemon_log(home));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let log = admin(port, token, reqwest::Method::GET, "/api/skills/log").await;
    assert!(
        log["events"].as_array().unwrap().is_empty(),
        "evolved while paused: {log}"
    );
    assert_eq!(fake.request_count(), 1, "only the chat reached the model");

    ok(home, &["resume"]);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let log = admin(port, token, reqwest::Method::GET, "/api/skills/log").await;
        if let Some(first) = log["events"].as_array().unwrap().first() {
            assert_eq!(first["outcome"], "added", "{log}");
            assert_eq!(first["trigger"], "session_end", "{log}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no evolution after the window opened: {log}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The window is free again once the evolution is done (the permit is dropped after
    // the event is logged).
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let s = admin(port, token, reqwest::Method::GET, "/api/scheduler").await;
        if s["state"] == "open" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{s}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_evolution_in_flight_stops_when_the_window_closes_and_runs_again_in_the_next() {
    let g = paused_after_a_session().await;
    // The evolver's answer never comes: the evolution is in flight until stopped.
    g.fake.push_fault(Fault::Hang);
    ok(&g.home, &["resume"]);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while g.fake.request_count() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the evolver was never asked"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let running = g.get("/api/scheduler").await;
    assert_eq!(running["state"], "running", "{running}");
    assert_eq!(running["owner"], "skills.evolution", "{running}");

    // The window closes (paused): the evolution stops and hands the window back.
    ok(&g.home, &["pause"]);
    let stopped = g
        .wait_for("/api/scheduler", PATIENCE, |s| {
            s["state"] == "paused" && s["stopping"].is_null()
        })
        .await;
    assert_eq!(stopped["pause"]["until"], Value::Null, "{stopped}");
    assert!(
        g.events().await.is_empty(),
        "a stopped evolution is not logged"
    );

    // The next window runs it again, from the same turns.
    ok(&g.home, &["resume"]);
    let log = g
        .wait_for("/api/skills/log", Duration::from_secs(30), |l| {
            !l["events"].as_array().unwrap().is_empty()
        })
        .await;
    let events = log["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{log}");
    assert_eq!(events[0]["outcome"], "added", "{log}");
    assert_eq!(events[0]["session_ids"], json!(["gated-1"]), "{log}");
    assert_eq!(
        g.fake.request_count(),
        3,
        "chat, the stopped call, the rerun"
    );
}

/// Every log file of the home, concatenated (the daemon's daily log and its own output).
fn daemon_log(home: &Home) -> String {
    let Ok(dir) = std::fs::read_dir(home.path().join("logs")) else {
        return String::new();
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect()
}
