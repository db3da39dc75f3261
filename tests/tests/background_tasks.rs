//! The engine's background tasks in status, through the binary: each one is named and
//! running in `/api/status` and `metaclaw status`, and `metaclaw stop` waits for them (the
//! restart of a task that panicked is shown by `supervise`'s own tests).

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use common::daemon::{Home, free_port, stdout};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread")]
async fn every_background_task_is_named_running_in_status_and_stopped_with_the_engine() {
    let chat = FakeUpstream::start(FakeOptions::default()).await.unwrap();
    let port = free_port();
    let home = Home::new(&format!(
        "llm:\n  api: openai\n  api_base: {}\n  model_id: chat-model\nproxy:\n  port: {port}\n",
        chat.base_url_openai()
    ));
    home.start_daemon().await;

    let status: Value = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{port}/api/status"))
        .bearer_auth(home.admin_token())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let tasks = status["tasks"].as_array().unwrap();
    let named = |name: &str| {
        tasks
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no task {name:?} in {tasks:?}"))
    };
    for name in [
        "training-window ticker",
        "skill library reload",
        "skill evolution worker",
        "memory worker",
        "request activity",
        "proxy server",
    ] {
        let task = named(name);
        assert_eq!(task["state"], "running", "{task}");
        assert_eq!(task["restarts"], 0, "{task}");
        assert!(task["last_panic"].is_null(), "{task}");
    }
    assert!(tasks.iter().all(|t| t["state"] == "running"), "{tasks:?}");

    let text = stdout(&home.run(&["status"]));
    let line = format!("tasks:      {} background tasks running", tasks.len());
    assert!(text.contains(&line), "{text}");
    assert!(!text.contains("after a panic"), "{text}");

    let stopped = home.run(&["stop"]);
    assert!(stopped.status.success(), "{stopped:?}");
    let after = home.run(&["status"]);
    assert_eq!(after.status.code(), Some(3), "{after:?}");
    // Every task ended by itself on shutdown: none had to be aborted at the deadline.
    let logs = std::fs::read_dir(home.path().join("logs")).unwrap();
    let text: String = logs
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default())
        .collect();
    assert!(text.contains("MetaClaw is serving"), "{text}");
    assert!(!text.contains("did not stop in time"), "{text}");
}
