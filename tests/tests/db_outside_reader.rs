//! Another program reading the live database (a user's `sqlite3 metaclaw.db`, a support
//! script) must not disturb the running engine: SQLite's own locks protect the write-ahead
//! log only while the engine holds them, so nothing in the engine may drop them.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use std::time::Duration;

use common::daemon::{Home, PROXY_KEY, free_port, wait_healthy};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use serde_json::{Value, json};

async fn turn(client: &reqwest::Client, base: &str, n: usize) {
    let r = client
        .post(format!("{base}/v1/chat/completions"))
        .bearer_auth(PROXY_KEY)
        .header("x-session-id", format!("reader-{}", n % 3))
        .json(&json!({"model":"m","stream": n.is_multiple_of(2),
            "messages":[{"role":"user","content":format!("question number {n}")}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    r.bytes().await.unwrap();
}

/// Waits until the engine says `n` turns are recorded (committed to the database).
async fn wait_recorded(client: &reqwest::Client, base: &str, token: &str, n: u64) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let status: Value = client
            .get(format!("{base}/api/status"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if status["turns_recorded"].as_u64() == Some(n) {
            return status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{n} turns never recorded: {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await; // polling a counter, bounded
    }
}

/// What a user or a support script does: the `sqlite3` shell (read-write, default settings)
/// reads and exits. Its close is where SQLite checkpoints and deletes the log when it believes
/// no other process has the database open.
fn outside_read(db: &std::path::Path) -> i64 {
    let out = std::process::Command::new("sqlite3")
        .arg(db)
        .arg("SELECT COUNT(*) FROM turns")
        .output()
        .expect("the sqlite3 shell (Debian package sqlite3; scripts/deps.sh installs it)");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_outside_reader_loses_no_acknowledged_turn_across_a_kill() {
    let fake = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let port = free_port();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\nproxy:\n  port: {port}\n",
        fake.base_url_openai()
    ));
    let mut child = home
        .cmd("file", &["start", "--headless"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let client = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    wait_healthy(&client, &base, "metaclaw did not start").await;
    let token = home.admin_token();
    let db = home.path().join("metaclaw.db");

    for n in 0..10 {
        turn(&client, &base, n).await;
    }
    wait_recorded(&client, &base, &token, 10).await;
    // Admin reads and writes open the database inside the engine while its long-lived
    // connections are open; none of that may release the engine's locks.
    assert!(home.run(&["status"]).status.success());
    for (method, path, body) in [
        (reqwest::Method::GET, "/api/memory/stats", None),
        (reqwest::Method::GET, "/api/memory", None),
        (
            reqwest::Method::POST,
            "/api/memory",
            Some(json!({"kind": "preference", "content": "Prefers answers in Celsius."})),
        ),
    ] {
        let mut req = client
            .request(method, format!("{base}{path}"))
            .bearer_auth(&token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        assert!(r.status().is_success(), "{path}: {}", r.status());
    }

    assert_eq!(outside_read(&db), 10);
    let wal = db.with_file_name("metaclaw.db-wal");
    assert!(
        wal.exists(),
        "the outside reader deleted the engine's write-ahead log"
    );

    for n in 10..20 {
        turn(&client, &base, n).await;
    }
    let status = wait_recorded(&client, &base, &token, 20).await;
    assert_eq!(outside_read(&db), 20, "{status}");
    for n in 20..30 {
        turn(&client, &base, n).await;
    }
    wait_recorded(&client, &base, &token, 30).await;

    child.kill().unwrap(); // SIGKILL: no checkpoint, no clean close
    child.wait().unwrap();

    let store = metaclaw_store::Store::open_read_only(&db).unwrap();
    store.integrity_check().unwrap();
    assert_eq!(
        store.stats().unwrap().turns,
        30,
        "every acknowledged turn survives the kill"
    );
}
