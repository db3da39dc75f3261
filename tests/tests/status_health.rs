//! Lost recordings in status, through the binary: a database deleted while running, and a
//! database that refuses writes (as a full disk does), are named by `metaclaw status` (text
//! and JSON) and `/api/status` instead of "last error: none".

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use common::daemon::{Home, PROXY_KEY, free_port, stdout};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use serde_json::{Value, json};

struct Daemon {
    _chat: FakeUpstream,
    home: Home,
    port: u16,
}

async fn start() -> Daemon {
    let chat = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let port = free_port();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\n  model_id: chat-model\nproxy:\n  port: {port}\nskills:\n  enabled: false\nmemory:\n  enabled: false\n",
        chat.base_url_openai()
    ));
    home.start_daemon().await;
    Daemon {
        _chat: chat,
        home,
        port,
    }
}

impl Daemon {
    async fn turns(&self, n: usize) {
        let http = reqwest::Client::new();
        for i in 0..n {
            let r = http
                .post(format!(
                    "http://127.0.0.1:{}/v1/chat/completions",
                    self.port
                ))
                .bearer_auth(PROXY_KEY)
                .header("x-session-id", "s")
                .json(&json!({"model":"m","messages":[{"role":"user","content":format!("turn {i}")}]}))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
        }
    }

    async fn admin(&self, method: reqwest::Method, path: &str) -> Value {
        let r = reqwest::Client::new()
            .request(method, format!("http://127.0.0.1:{}{path}", self.port))
            .bearer_auth(self.home.admin_token())
            .send()
            .await
            .unwrap();
        r.json().await.unwrap_or(Value::Null)
    }

    /// Waits until every turn sent so far went through the recorder.
    async fn flush(&self) {
        self.admin(reqwest::Method::POST, "/api/recorder/flush")
            .await;
    }

    fn status_json(&self) -> Value {
        serde_json::from_str(&stdout(&self.home.run(&["status", "--json"]))).unwrap()
    }

    fn status_text(&self) -> String {
        stdout(&self.home.run(&["status"]))
    }

    fn db(&self) -> std::path::PathBuf {
        self.home.path().join("metaclaw.db")
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_database_deleted_while_running_is_named_with_the_turns_it_lost() {
    let d = start().await;
    d.turns(2).await;
    d.flush().await;
    let before = d.status_json();
    assert_eq!(before["health"]["recorder"]["failed_writes"], 0);
    assert!(before["health"]["database"].is_null(), "{before}");

    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", d.db().display()));
    }
    d.turns(5).await;
    d.flush().await;

    let status = d.status_json();
    let recorder = &status["health"]["recorder"];
    assert_eq!(recorder["failed_writes"], 5, "{status}");
    let problem = status["health"]["database"].as_str().unwrap();
    assert!(problem.contains("metaclaw.db was deleted"), "{problem}");
    let api = d.admin(reqwest::Method::GET, "/api/status").await;
    assert_eq!(api["health"]["recorder"], *recorder);

    let text = d.status_text();
    assert!(
        text.contains("5 turns not recorded: the database file metaclaw.db was deleted"),
        "{text}"
    );
    assert!(text.contains("database:   the database file"), "{text}");
    assert!(!text.contains("last error: none"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn writes_the_database_refuses_are_counted_with_its_reason() {
    let d = start().await;
    d.turns(1).await;
    d.flush().await;
    // What a full disk looks like to the recorder: every insert into `turns` fails.
    let store = metaclaw_store::Store::open(&d.db()).unwrap();
    store
        .connection()
        .execute_batch(
            "CREATE TRIGGER full BEFORE INSERT ON turns BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;",
        )
        .unwrap();
    drop(store);
    d.turns(3).await;
    d.flush().await;

    let status = d.status_json();
    let recorder = &status["health"]["recorder"];
    assert_eq!(recorder["failed_writes"], 3, "{status}");
    assert!(
        recorder["last_write_error"]
            .as_str()
            .unwrap()
            .contains("database or disk is full"),
        "{status}"
    );
    assert_eq!(status["turns_recorded"], 1);
    assert!(
        status["last_problem"]
            .as_str()
            .unwrap()
            .starts_with("recorder: the database refused the write"),
        "{status}"
    );
    let text = d.status_text();
    assert!(
        text.contains("3 turns not recorded: the database refused the write")
            && text.contains("database or disk is full"),
        "{text}"
    );
    assert!(
        text.contains("last error: recorder: the database refused the write"),
        "{text}"
    );
}
