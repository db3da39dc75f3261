//! Programmatic rollout through the real binary: with `rl.openclaw_env_data_dir` set in mode
//! `rl`, MetaClaw plays a task from the JSONL file through its own proxy; the trained model
//! (the fake backend, scripted with the toy tokenizer) calls `run_command`, the command
//! really runs and its output reaches the next prompt, the session is ended, and every
//! step is stored as a sample.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::{Duration, Instant};

use common::daemon::{Home, free_port};
use metaclaw_e2e::fake_tinker::FakeTinker;
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream};
use metaclaw_e2e::toy_model;
use serde_json::Value;

const MODEL: &str = "Toy/toy-model";
const TASK_ID: &str = "task-echo-0001";
const INSTRUCTION: &str = "Print rollout-ok in the terminal, then finish.";

/// Bounded poll on a condition only the daemon's progress makes true.
async fn wait_for<T>(what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Installs the toy tokenizer in `home` and starts the daemon against the fake backend.
async fn start(home: &Home, toy: &toy_model::ToyModel, tinker: &FakeTinker) {
    toy.install(home.path(), MODEL).unwrap();
    let mut start = home.cmd("file", &["start", "--daemon"]);
    start.env("METACLAW_RL_API_KEY", tinker.api_key());
    let o = tokio::task::spawn_blocking(move || start.output().unwrap())
        .await
        .unwrap();
    assert!(o.status.success(), "{o:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn rollout_runs_the_models_commands_through_the_proxy_and_stores_samples() {
    let toy = toy_model::build().unwrap();
    let tinker = FakeTinker::start(toy.fake_options()).await.unwrap();
    tinker.push_completion(toy.encode(
        r#"<tool_call>{"name":"run_command","arguments":{"command":"echo rollout-ok"}}</tool_call><|im_end|>"#,
    ));
    tinker.push_completion(toy.encode(
        r#"<tool_call>{"name":"run_command","arguments":{"command":"done"}}</tool_call><|im_end|>"#,
    ));
    let upstream = FakeUpstream::start(FakeOptions::default()).await.unwrap();

    let tasks = tempfile::tempdir().unwrap();
    std::fs::write(
        tasks.path().join("train.jsonl"),
        format!(
            "this line is not a task\n{{\"task_id\":\"{TASK_ID}\",\"instruction\":\"{INSTRUCTION}\"}}\n{{\"task_id\":\"no-instruction\"}}\n"
        ),
    )
    .unwrap();
    let port = free_port();
    // The judge is unreachable: samples stay unjudged, so nothing trains them away, and
    // with batch_size 1 the rollout pauses once 4 samples wait.
    let judge_port = free_port();
    let home = Home::new(&format!(
        "mode: rl
proxy:
  port: {port}
llm:
  api_base: {}
  model_id: toy-served
rl:
  backend: tinker
  base_url: {}
  model: {MODEL}
  batch_size: 1
  prm_url: http://127.0.0.1:{judge_port}/v1
  prm_model: judge
  prm_m: 1
  openclaw_env_data_dir: {}
  openclaw_env_concurrency: 1
",
        upstream.base_url_openai(),
        tinker.base_url(),
        tasks.path().display()
    ));
    start(&home, &toy, &tinker).await;
    let base = format!("http://127.0.0.1:{port}");
    let token = home.admin_token();
    let http = reqwest::Client::new();
    let get = async |path: &str| -> Value {
        http.get(format!("{base}{path}"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    };

    // Step 1, step 2 and the closing request were sampled by the trained model.
    let sampled = wait_for("three sampled turns", async || {
        let s = tinker.sampled();
        (s.len() >= 3).then_some(s)
    })
    .await;
    let first = toy.decode(&sampled[0].prompt);
    assert!(first.contains(INSTRUCTION), "{first}");
    assert!(
        first.contains("run_command"),
        "the tool is offered: {first}"
    );
    // The command ran and its output went back: the command's text alone has no `Output:`.
    let second = toy.decode(&sampled[1].prompt);
    assert!(second.contains("Output:\nrollout-ok"), "{second}");
    let closing = toy.decode(&sampled[2].prompt);
    assert!(closing.contains("Task complete."), "{closing}");

    // The first episode's session (a later round may have started another): main turns
    // answered by the trained model, then ended.
    let session = wait_for("the rollout session's turns", async || {
        let _ = http
            .post(format!("{base}/api/recorder/flush"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        let turns = get("/api/turns?limit=100").await;
        turns["turns"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| {
                t["session_id"]
                    .as_str()
                    .is_some_and(|s| s.starts_with(&format!("env-{TASK_ID}-")))
            })
            .min_by_key(|t| t["id"].as_i64().unwrap())
            .map(|t| t["session_id"].as_str().unwrap().to_owned())
    })
    .await;
    // Two steps and the closing request.
    let turns = wait_for("the episode's three turns", async || {
        let _ = http
            .post(format!("{base}/api/recorder/flush"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        let turns = get(&format!("/api/turns?session={session}")).await;
        let turns = turns["turns"].as_array().unwrap().clone();
        (turns.len() >= 3).then_some(turns)
    })
    .await;
    assert_eq!(turns.len(), 3, "{turns:?}");
    assert!(
        turns
            .iter()
            .all(|t| t["turn_type"] == "main" && t["upstream"] == "trained-model"),
        "{turns:?}"
    );
    let db = home.path().join("metaclaw.db");
    wait_for("the session to end", async || {
        let store = metaclaw_store::Store::open_read_only(&db).ok()?;
        store
            .session(&session)
            .ok()
            .flatten()
            .filter(|s| s.ended_at_ms.is_some())
    })
    .await;

    // Every step is a sample waiting for training; the scratch directory is gone.
    let learning = get("/api/learning").await;
    assert_eq!(learning["state"], "ready", "{learning}");
    assert!(
        learning["samples"]["waiting"].as_u64().unwrap() >= 2,
        "{learning}"
    );
    let scratch = home.path().join("rollout").join(&session);
    wait_for("the scratch directory to be removed", async || {
        (!scratch.exists()).then_some(())
    })
    .await;

    // The episode's outcome is logged; the bad lines were counted, not fatal.
    let episode = wait_for("the episode's log line", async || {
        daemon_log(&home).lines().find_map(|l| {
            (l.contains("rollout episode finished")
                && l.contains(&format!("session=\"{session}\"")))
            .then(|| l.to_owned())
        })
    })
    .await;
    assert!(episode.contains(&format!("task={TASK_ID}")), "{episode}");
    assert!(episode.contains("steps=2"), "{episode}");
    assert!(episode.contains("ended=task complete"), "{episode}");
    assert!(
        daemon_log(&home).contains("skipped=2"),
        "the two bad lines are counted"
    );

    // Back-pressure: nothing trains (the judge is unreachable), so once 4 × batch_size
    // samples wait the rollout pauses; at that point every sampled reply is a stored sample.
    wait_for("the rollout to pause for training", async || {
        daemon_log(&home)
            .contains("samples wait for training (pausing at 4)")
            .then_some(())
    })
    .await;
    let learning = get("/api/learning").await;
    let waiting = learning["samples"]["waiting"].as_u64().unwrap();
    assert!(waiting >= 4, "{learning}");
    assert_eq!(tinker.sampled().len() as u64, waiting, "{learning}");
}

/// Every log file of the home, concatenated.
fn daemon_log(home: &Home) -> String {
    let Ok(dir) = std::fs::read_dir(home.path().join("logs")) else {
        return String::new();
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_task_file_turns_the_rollout_off_with_one_warning_and_the_engine_serves() {
    let toy = toy_model::build().unwrap();
    let tinker = FakeTinker::start(toy.fake_options()).await.unwrap();
    let tasks = tempfile::tempdir().unwrap();
    let port = free_port();
    let home = Home::new(&format!(
        "mode: rl
proxy:
  port: {port}
rl:
  backend: tinker
  base_url: {}
  model: {MODEL}
  prm_url: ''
  openclaw_env_data_dir: {}
  openclaw_env_split: nosuch
",
        tinker.base_url(),
        tasks.path().display()
    ));
    start(&home, &toy, &tinker).await;

    let log = wait_for("the rollout's warning", async || {
        let log = daemon_log(&home);
        log.contains("programmatic rollout is off").then_some(log)
    })
    .await;
    let file = tasks.path().join("nosuch.jsonl");
    assert!(log.contains(&file.display().to_string()), "{log}");
    // The engine goes on: the trained model connects and serves.
    let http = reqwest::Client::new();
    let token = home.admin_token();
    let learning = wait_for("the trained model to be ready", async || {
        let v: Value = http
            .get(format!("http://127.0.0.1:{port}/api/learning"))
            .bearer_auth(&token)
            .send()
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        (v["state"] == "ready").then_some(v)
    })
    .await;
    assert_eq!(learning["samples"]["waiting"], 0, "{learning}");
    assert!(tinker.sampled().is_empty());
}
