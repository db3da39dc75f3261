//! `/api/scheduler` through the real binary: the status shape, the event stream delivering
//! a pause as it happens, and clear 400s for bad input.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::Duration;

use common::daemon::{Home, free_port};
use serde_json::{Value, json};

struct Daemon {
    home: Home,
    base: String,
    token: String,
    http: reqwest::Client,
}

async fn start() -> Daemon {
    let port = free_port();
    let home = Home::new(&format!(
        "proxy:\n  port: {port}\nscheduler:\n  gate_background_learning: true\n"
    ));
    home.start_daemon().await;
    let token = home.admin_token();
    Daemon {
        home,
        base: format!("http://127.0.0.1:{port}"),
        token,
        http: reqwest::Client::new(),
    }
}

impl Daemon {
    async fn get(&self, path: &str) -> (u16, Value) {
        let r = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    }

    async fn post(&self, path: &str, body: &str) -> (u16, Value) {
        let r = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap())
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn status_has_the_window_its_sources_the_pause_and_the_next_window() {
    let d = start().await;
    let (code, s) = d.get("/api/scheduler").await;
    assert_eq!(code, 200, "{s}");
    assert_eq!(s["running"], true);
    assert!(
        ["waiting", "open", "running"].contains(&s["state"].as_str().unwrap()),
        "{s}"
    );
    assert_eq!(s["pause"], Value::Null);
    assert_eq!(s["gate_background_learning"], true);
    assert_eq!(s["min_window_minutes"], 15);
    assert_eq!(s["sources"]["sleep_hours"], "23:00–07:00", "{s}");
    assert_eq!(s["sources"]["idle_threshold_minutes"], 30);
    assert!(s["sources"]["idle_probe"].is_string(), "{s}");
    assert_eq!(s["sources"]["calendar"], false);
    let reasons: Vec<&str> = s["readings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["reason"].as_str().unwrap())
        .collect();
    assert_eq!(reasons, ["sleep", "idle"], "{s}");
    for r in s["readings"].as_array().unwrap() {
        assert!(
            ["open", "closed", "unavailable"].contains(&r["state"].as_str().unwrap()),
            "{r}"
        );
    }
    // Sleep hours always predict a window.
    assert!(s["next"]["starts"].is_string(), "{s}");
    assert!(
        s["text"]["next_window"]
            .as_str()
            .unwrap()
            .starts_with("next window: "),
        "{s}"
    );
    assert!(s["at"].is_string());

    let r = d
        .http
        .get(format!("{}/api/scheduler", d.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
}

/// Reads server-sent events until one named `name` arrives (bounded), returning its data.
async fn next_named(
    resp: &mut reqwest::Response,
    buf: &mut String,
    name: &str,
    seen: &mut Vec<String>,
) -> Value {
    let wait = async {
        loop {
            while let Some(end) = buf.find("\n\n") {
                let block: String = buf.drain(..end + 2).collect();
                let mut event = "message";
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(e) = line.strip_prefix("event:") {
                        event = e.trim();
                    } else if let Some(d) = line.strip_prefix("data:") {
                        data.push_str(d.trim_start());
                    }
                }
                if data.is_empty() {
                    continue; // keep-alive comment
                }
                seen.push(event.to_string());
                if event == name {
                    return serde_json::from_str::<Value>(&data).unwrap();
                }
            }
            match resp.chunk().await.unwrap() {
                Some(chunk) => buf.push_str(&String::from_utf8_lossy(&chunk)),
                None => panic!("the stream ended; saw {seen:?}"),
            }
        }
    };
    match tokio::time::timeout(Duration::from_secs(10), wait).await {
        Ok(v) => v,
        Err(_) => panic!("no `{name}` event within 10 s; saw {seen:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_event_stream_starts_with_a_snapshot_and_delivers_a_pause() {
    let d = start().await;
    let mut resp = d
        .http
        .get(format!("{}/api/scheduler/events", d.base))
        .bearer_auth(&d.token)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let (mut buf, mut seen) = (String::new(), Vec::new());
    let first = next_named(&mut resp, &mut buf, "snapshot", &mut seen).await;
    assert_eq!(seen, ["snapshot"], "the snapshot comes first");
    assert_ne!(first["state"], "paused", "{first}");

    let (code, paused) = d.post("/api/scheduler/pause", r#"{"for": "2h"}"#).await;
    assert_eq!(code, 200, "{paused}");
    let event = next_named(&mut resp, &mut buf, "paused", &mut seen).await;
    assert_eq!(event["event"], "paused", "{event}");
    assert_eq!(event["until"], paused["pause"]["until"], "{event}");
    let snapshot = next_named(&mut resp, &mut buf, "snapshot", &mut seen).await;
    assert_eq!(snapshot["state"], "paused", "{snapshot}");

    let (code, _) = d.post("/api/scheduler/resume", "").await;
    assert_eq!(code, 200);
    next_named(&mut resp, &mut buf, "resumed", &mut seen).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pause_takes_for_until_or_nothing_and_refuses_bad_input_with_400() {
    let d = start().await;
    let bad = [
        (r#"{"for": "2x"}"#, "not a duration"),
        (r#"{"for": "0m"}"#, "at least a minute"),
        (r#"{"until": "25:00"}"#, "not a time"),
        (r#"{"until": "2020-01-01T00:00:00Z"}"#, "in the past"),
        (r#"{"for": "1h", "until": "18:00"}"#, "not both"),
        (r#"{"forr": "1h"}"#, "unknown field"),
        ("not json", "the body must be"),
    ];
    for (body, says) in bad {
        let (code, err) = d.post("/api/scheduler/pause", body).await;
        assert_eq!(code, 400, "{body}: {err}");
        let msg = err["error"]["message"].as_str().unwrap();
        assert!(msg.contains(says), "{body}: {msg}");
    }
    // None of them paused anything.
    let (_, s) = d.get("/api/scheduler").await;
    assert_eq!(s["pause"], Value::Null, "{s}");
    assert!(!d.home.path().join("scheduler/pause.json").exists());

    let (code, s) = d.post("/api/scheduler/pause", "{}").await;
    assert_eq!(code, 200, "{s}");
    assert_eq!(s["state"], "paused");
    assert_eq!(s["pause"]["until"], Value::Null, "until resumed: {s}");
    assert_eq!(s["text"]["state"], "paused until resumed");

    let until = "2099-01-01T00:00:00Z";
    let (code, s) = d
        .post("/api/scheduler/pause", &json!({"until": until}).to_string())
        .await;
    assert_eq!(code, 200, "{s}");
    assert_eq!(s["pause"]["until"], until, "{s}");

    let (code, s) = d.post("/api/scheduler/resume", "").await;
    assert_eq!(code, 200, "{s}");
    assert_eq!(s["pause"], Value::Null);
    assert_ne!(s["state"], "paused");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_open_event_stream_does_not_hold_up_stop() {
    let d = start().await;
    let mut resp = d
        .http
        .get(format!("{}/api/scheduler/events", d.base))
        .bearer_auth(&d.token)
        .send()
        .await
        .unwrap();
    let (mut buf, mut seen) = (String::new(), Vec::new());
    next_named(&mut resp, &mut buf, "snapshot", &mut seen).await;

    let mut stop = d.home.cmd("file", &["stop"]);
    let stopped = tokio::time::timeout(
        Duration::from_secs(20),
        tokio::task::spawn_blocking(move || stop.output().unwrap()),
    )
    .await;
    let out = stopped.expect("stop hung with a stream open").unwrap();
    assert!(out.status.success(), "{out:?}");
    // And the stream ends with the engine.
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while let Ok(Some(_)) = resp.chunk().await {}
    })
    .await;
    assert!(ended.is_ok(), "the stream outlived the engine");
}
