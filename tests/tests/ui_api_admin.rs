//! The admin API behind the desktop UI's screens, through the real binary: setup (read,
//! apply, restart in place, verify), settings, the sleep-hours preview, the charts' series,
//! the log view, the calendar connect, and the live event stream.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use common::daemon::{Home, free_port};
use common::events::EventStream;
use metaclaw_e2e::fake_google::FakeGoogle;
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const KEY: &str = "sk-ui-api-e2e-1234567890";
const WRONG_KEY: &str = "sk-ui-api-wrong-0987654321";

/// The OS keychain inside the test script's D-Bus session; the file store elsewhere.
fn backend() -> &'static str {
    if std::env::var("METACLAW_TEST_KEYCHAIN").as_deref() == Ok("1") {
        "keychain"
    } else {
        "file"
    }
}

struct Daemon {
    home: Home,
    port: u16,
    token: String,
    http: reqwest::Client,
}

impl Daemon {
    async fn start(home: Home, port: u16, backend: &str, env: &[(&str, String)]) -> Daemon {
        let mut start = home.cmd(backend, &["start", "--daemon"]);
        for (k, v) in env {
            start.env(k, v);
        }
        let o = tokio::task::spawn_blocking(move || start.output().unwrap())
            .await
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        let token = home.admin_token();
        Daemon {
            home,
            port,
            token,
            http: reqwest::Client::new(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> (StatusCode, String) {
        let mut req = self
            .http
            .request(method, self.url(path))
            .bearer_auth(&self.token);
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        let r = req.send().await.unwrap();
        (r.status(), r.text().await.unwrap())
    }

    async fn json(&self, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let (s, text) = self.call(method, path, body).await;
        assert!(!text.contains(KEY), "a key in the answer: {text}");
        (s, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// `/api/events`, opened now.
    async fn events(&self) -> EventStream {
        let resp = self
            .http
            .get(self.url("/api/events"))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        assert!(
            resp.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        EventStream::new(resp)
    }

    async fn chat(&self, text: &str) -> StatusCode {
        self.http
            .post(self.url("/v1/chat/completions"))
            .bearer_auth(common::daemon::PROXY_KEY)
            .header("content-type", "application/json")
            .body(
                json!({"model": "fake-model", "messages": [{"role": "user", "content": text}]})
                    .to_string(),
            )
            .send()
            .await
            .unwrap()
            .status()
    }
}

fn fake_options() -> FakeOptions {
    FakeOptions {
        api_key: Some(KEY.into()),
        ..FakeOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn setup_on_a_fresh_home_applies_restarts_and_verifies() {
    let fake = FakeUpstream::start(fake_options()).await.unwrap();
    let port = free_port();
    let home = Home::new(&format!(
        "proxy:\n  port: {port}\nskills:\n  enabled: false\n"
    ));
    let d = Daemon::start(home, port, backend(), &[]).await;

    let (s, setup) = d.json(Method::GET, "/api/setup", None).await;
    assert_eq!(s, StatusCode::OK, "{setup}");
    assert_eq!(setup["configured"], false);
    assert_eq!(setup["key"]["stored"], false);
    assert_eq!(setup["key"]["source"], Value::Null);
    assert_eq!(setup["windows"]["sleep_start"], "23:00");
    assert_eq!(setup["windows"]["calendar"]["connected"], false);
    let modes: Vec<&str> = setup["modes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["skills_only", "rl", "madmax"]);

    // A refused answer writes nothing.
    let config = d.home.path().join("config.yaml");
    let before = std::fs::read(&config).unwrap();
    let base = fake.base_url_openai();
    let answers = json!({
        "provider": "custom", "api_base": base, "api": "openai", "model": "fake-model",
        "api_key": KEY, "mode": "skills_only", "agents": [],
        "sleep_start": "22:30", "sleep_end": "06:30",
    });
    let mut bad = answers.clone();
    bad["mode"] = json!("turbo");
    let (s, e) = d.json(Method::POST, "/api/setup/apply", Some(bad)).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    assert_eq!(e["error"]["field"], "mode");
    assert!(e["error"]["message"].as_str().unwrap().contains("mode"));
    assert_eq!(std::fs::read(&config).unwrap(), before);

    let (s, applied) = d
        .json(Method::POST, "/api/setup/apply", Some(answers))
        .await;
    assert_eq!(s, StatusCode::OK, "{applied}");
    assert_eq!(applied["key"], "stored");
    assert_eq!(applied["restart_required"], true);
    let written: Vec<&str> = applied["written"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    for k in [
        "llm.provider",
        "llm.api_base",
        "llm.model_id",
        "scheduler.sleep_start",
    ] {
        assert!(written.contains(&k), "{written:?}");
    }
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.contains(&base), "{text}");
    assert!(text.contains("22:30"), "{text}");
    assert!(!text.contains(KEY), "the key is not in the config file");
    let mode = std::fs::metadata(&config).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    if backend() == "keychain" {
        assert!(!d.home.path().join("secrets.yaml").exists());
    }

    // Restart in place: same port, same token, the new upstream.
    let (s, _) = d.call(Method::POST, "/api/restart", None).await;
    assert_eq!(s, StatusCode::OK);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(r) = d
            .http
            .get(d.url("/api/status"))
            .bearer_auth(&d.token)
            .send()
            .await
            && r.status() == StatusCode::OK
        {
            let status: Value = r.json().await.unwrap();
            if status["upstreams"][0]["base_url"] == json!(base) {
                assert_eq!(status["upstreams"][0]["key_source"], backend());
                break;
            }
        }
        assert!(Instant::now() < deadline, "the engine did not come back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (_, setup) = d.json(Method::GET, "/api/setup", None).await;
    assert_eq!(setup["configured"], true);
    assert_eq!(setup["key"]["stored"], true);
    assert_eq!(setup["key"]["source"], backend());
    assert_eq!(setup["answers"]["api_base"], json!(base));

    let mut events = d.events().await;
    let (s, verified) = d.json(Method::POST, "/api/setup/verify", None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(verified["ok"], true, "{verified}");
    assert!(
        verified["reply"].as_str().unwrap().starts_with("Echo: "),
        "{verified}"
    );
    assert!(verified["latency_ms"].is_u64());
    let turn = events.next_of("turn").await;
    assert_eq!(turn["kind"], "turn");
    assert_eq!(turn["status"], 200);
    assert!(turn["overhead_ms"].as_f64().unwrap() >= 0.0);

    // Two more requests: the series counts all three.
    assert_eq!(d.chat("first").await, StatusCode::OK);
    assert_eq!(d.chat("second").await, StatusCode::OK);
    events.next_of("turn").await;
    let (s, _) = d.call(Method::POST, "/api/recorder/flush", None).await;
    assert_eq!(s, StatusCode::OK);
    let (s, series) = d
        .json(Method::GET, "/api/stats/series?hours=1&buckets=6", None)
        .await;
    assert_eq!(s, StatusCode::OK, "{series}");
    let requests = series["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 6);
    let total: u64 = requests.iter().map(|b| b["count"].as_u64().unwrap()).sum();
    assert_eq!(total, 3, "{series}");
    let last = &requests[5];
    assert!(last["overhead_p50_ms"].as_f64().is_some(), "{series}");
    assert_eq!(
        series["bucket_ms"].as_i64().unwrap() * 6,
        series["to_ms"].as_i64().unwrap() - series["from_ms"].as_i64().unwrap()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_key_fails_verify_and_is_announced() {
    let fake = FakeUpstream::start(fake_options()).await.unwrap();
    let port = free_port();
    let home = Home::new(&format!(
        "llm:\n  provider: custom\n  api: openai\n  api_base: {}\n  model_id: fake-model\nproxy:\n  port: {port}\nskills:\n  enabled: false\n",
        fake.base_url_openai()
    ));
    std::fs::write(
        home.path().join("secrets.yaml"),
        format!("llm.api_key: {WRONG_KEY}\n"),
    )
    .unwrap();
    let d = Daemon::start(home, port, "file", &[]).await;
    let mut events = d.events().await;
    let (s, text) = d.call(Method::POST, "/api/setup/verify", None).await;
    assert_eq!(s, StatusCode::OK);
    assert!(!text.contains(WRONG_KEY), "{text}");
    let verified: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(verified["ok"], false, "{verified}");
    let error = verified["error"].as_str().unwrap();
    assert!(error.contains("refused the API key"), "{error}");
    let refused = events.next_of("upstream_auth_failed").await;
    assert_eq!(refused["status"], 401);
    assert!(!refused["upstream"].as_str().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn settings_preview_logs_memory_series_and_calendar() {
    let google = FakeGoogle::start().await.unwrap();
    google.set_events("primary", Vec::new());
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let secrets = google.write_client_secrets(dir.path()).unwrap();
    // No provider: the engine logs a warning at start, which the log view must show.
    let home = Home::new(&format!(
        "# my settings\nproxy:\n  port: {port}  # chosen\nskills:\n  enabled: false\nscheduler:\n  calendar:\n    credentials_path: {}\n",
        secrets.display()
    ));
    let d = Daemon::start(
        home,
        port,
        "file",
        &[("METACLAW_GOOGLE_CALENDAR_URL", google.root_url())],
    )
    .await;
    let config = d.home.path().join("config.yaml");

    let (s, settings) = d.json(Method::GET, "/api/settings", None).await;
    assert_eq!(s, StatusCode::OK, "{settings}");
    let find = |settings: &Value, key: &str| -> Value {
        settings["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["key"] == key)
            .cloned()
            .unwrap_or_else(|| panic!("no {key}"))
    };
    assert_eq!(find(&settings, "proxy.port")["value"], port);
    assert_eq!(find(&settings, "proxy.port")["type"], "int");
    assert_eq!(find(&settings, "mode")["type"], "choice");
    assert_eq!(find(&settings, "scheduler.sleep_start")["value"], "23:00");

    // One invalid value: 400 naming it, and the file untouched.
    let before = std::fs::read(&config).unwrap();
    let (s, e) = d
        .json(
            Method::PATCH,
            "/api/settings",
            Some(json!({"changes": {"memory.flush_every": 5, "proxy.port": "not a port"}})),
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    assert_eq!(e["error"]["field"], "proxy.port");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("proxy.port")
    );
    assert_eq!(std::fs::read(&config).unwrap(), before);
    let (s, e) = d
        .json(
            Method::PATCH,
            "/api/settings",
            Some(json!({"changes": {"scheduler.sleep_start": "08:00", "scheduler.sleep_end": "08:00"}})),
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("must differ"),
        "{e}"
    );
    assert_eq!(std::fs::read(&config).unwrap(), before);

    // Valid: written, comments kept; a start equal to the old end works with the new end.
    let (s, done) = d
        .json(
            Method::PATCH,
            "/api/settings",
            Some(json!({"changes": {"memory.flush_every": 7, "scheduler.sleep_start": "07:00", "scheduler.sleep_end": "15:00"}})),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{done}");
    assert_eq!(done["restart_required"], true);
    assert_eq!(done["written"].as_array().unwrap().len(), 3, "{done}");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.starts_with("# my settings\n"), "{text}");
    assert!(text.contains("# chosen"), "{text}");
    let (_, settings) = d.json(Method::GET, "/api/settings", None).await;
    assert_eq!(find(&settings, "memory.flush_every")["value"], 7);
    assert_eq!(find(&settings, "scheduler.sleep_end")["value"], "15:00");

    // The preview: the config's own refusal, or the next window with the proposed hours.
    let (s, e) = d
        .json(
            Method::GET,
            "/api/scheduler/preview?sleep_start=22:00&sleep_end=22:00",
            None,
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("must differ"),
        "{e}"
    );
    let (s, e) = d
        .json(
            Method::GET,
            "/api/scheduler/preview?sleep_start=25:00",
            None,
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    let (s, p) = d
        .json(
            Method::GET,
            "/api/scheduler/preview?sleep_start=22:00&sleep_end=06:00",
            None,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{p}");
    assert_eq!(p["sleep"], "22:00–06:00");
    let next = p["next_window"].as_str().unwrap();
    assert!(!next.is_empty() && !next.starts_with("next window"), "{p}");

    // Memories: the series' last total is what exists now.
    let mut events = d.events().await;
    for content in [
        "Prefers tabs over spaces.",
        "Works in UTC.",
        "Uses Rust daily.",
    ] {
        let (s, unit) = d
            .json(
                Method::POST,
                "/api/memory",
                Some(json!({"kind": "preference", "content": content})),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{unit}");
    }
    events.next_of("memory_changed").await;
    let (s, series) = d
        .json(Method::GET, "/api/stats/series?hours=24&buckets=24", None)
        .await;
    assert_eq!(s, StatusCode::OK, "{series}");
    let memories = series["memories"].as_array().unwrap();
    assert_eq!(memories.len(), 24);
    assert_eq!(memories[23]["total"], 3, "{series}");
    assert_eq!(memories[0]["total"], 0, "{series}");
    let requests: u64 = series["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["count"].as_u64().unwrap())
        .sum();
    assert_eq!(requests, 0);

    // Logs: warn and worse only (the missing provider was logged at start).
    let deadline = Instant::now() + Duration::from_secs(20);
    let lines = loop {
        let (s, logs) = d
            .json(Method::GET, "/api/logs?lines=50&level=warn", None)
            .await;
        assert_eq!(s, StatusCode::OK, "{logs}");
        let lines = logs["lines"].as_array().unwrap().clone();
        if lines.iter().any(|l| {
            l["text"]
                .as_str()
                .unwrap()
                .contains("no LLM provider configured")
        }) {
            assert!(logs["file"].as_str().unwrap().starts_with("metaclaw."));
            break lines;
        }
        assert!(Instant::now() < deadline, "{logs}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for l in &lines {
        let level = l["level"].as_str().unwrap();
        assert!(level == "WARN" || level == "ERROR", "{l}");
    }
    let (_, all) = d.json(Method::GET, "/api/logs?lines=500", None).await;
    assert!(
        all["lines"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["level"] == "INFO"),
        "{all}"
    );
    let (s, _) = d.json(Method::GET, "/api/logs?level=loud", None).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);

    // Calendar: the sign-in address of the (fake) Google, then disconnect.
    let (s, c) = d
        .json(Method::POST, "/api/scheduler/calendar/connect", None)
        .await;
    assert_eq!(s, StatusCode::OK, "{c}");
    let url = c["auth_url"].as_str().unwrap();
    assert!(url.starts_with(&google.root_url()), "{url}");
    assert!(url.contains("redirect_uri="), "{url}");
    // The test plays the browser: Google sends it back to the engine's loopback listener.
    let page = reqwest::get(url).await.unwrap();
    assert!(page.status().is_success(), "{}", page.status());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, setup) = d.json(Method::GET, "/api/setup", None).await;
        let calendar = &setup["windows"]["calendar"];
        if calendar["connected"] == true && calendar["enabled"] == true {
            break;
        }
        if Instant::now() >= deadline {
            let (_, logs) = d.json(Method::GET, "/api/logs?lines=30", None).await;
            panic!("never connected: {setup}\n{logs}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (s, c) = d
        .json(Method::POST, "/api/scheduler/calendar/disconnect", None)
        .await;
    assert_eq!(s, StatusCode::OK, "{c}");
    assert_eq!(c["ok"], true);
    let (_, setup) = d.json(Method::GET, "/api/setup", None).await;
    assert_eq!(setup["windows"]["calendar"]["connected"], false, "{setup}");
}

#[tokio::test(flavor = "multi_thread")]
async fn learned_skills_are_announced_and_counted_in_the_series() {
    let chat = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let evolver = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let port = free_port();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\n  model_id: chat-model\nproxy:\n  port: {port}\n\
         skills:\n  evolver_api_base: {}\n  evolver_model: evolver-model\n  evolution_every_n_turns: 0\n",
        chat.base_url_openai(),
        evolver.base_url_openai()
    ));
    let d = Daemon::start(home, port, "file", &[]).await;
    for text in [
        "npm install broke the build again after a teammate upgraded packages",
        "how do we stop dependency drift between machines?",
    ] {
        let r = d
            .http
            .post(d.url("/v1/chat/completions"))
            .bearer_auth(common::daemon::PROXY_KEY)
            .header("x-session-id", "s-learn")
            .header("content-type", "application/json")
            .body(
                json!({"model": "x", "messages": [{"role": "user", "content": text}]}).to_string(),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK);
    }
    let skill = json!({
        "name": "pin-dependency-lockfiles",
        "description": "Use when builds break because dependencies drifted between machines or CI.",
        "category": "coding",
        "tags": ["lockfile"],
        "body": "# Pin dependencies with lockfiles\n\n## When this applies\nA build breaks after dependencies drift.\n\n## Steps\n1. Commit the lockfile with every dependency change.\n2. Install with the frozen lockfile in CI (`npm ci`, `cargo build --locked`).\n3. Upgrade deliberately, one dependency at a time, and run the tests.\n\n## Anti-patterns\n- Deleting the lockfile to make an install error go away.\n",
        "improves": null
    });
    evolver.push_reply(json!({"skills": [skill]}).to_string());
    let mut events = d.events().await;
    let (s, out) = d
        .json(
            Method::POST,
            "/api/skills/evolve",
            Some(json!({"session_id": "s-learn"})),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{out}");
    assert_eq!(out["outcome"], "added", "{out}");
    let learned = events.next_of("skills_learned").await;
    assert_eq!(learned["names"], json!(["pin-dependency-lockfiles"]));

    let (_, status) = d.json(Method::GET, "/api/status", None).await;
    let count = status["skills"]["count"].as_u64().unwrap();
    let (s, series) = d
        .json(Method::GET, "/api/stats/series?hours=24&buckets=2", None)
        .await;
    assert_eq!(s, StatusCode::OK, "{series}");
    assert_eq!(series["skills"][1]["total"], count, "{series}");
    assert_eq!(series["skills"][0]["total"], count - 1, "{series}");
}
