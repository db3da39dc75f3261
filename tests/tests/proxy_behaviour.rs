//! The proxy in process against the fake upstream: bad input, auth, Host check, fallbacks,
//! timeouts, cancellation, sessions, recording, metrics.

#![allow(clippy::unwrap_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::time::Duration;

use common::{Harness, PROXY_KEY, upstream};
use metaclaw_e2e::fake_upstream::Fault;
use metaclaw_proxy::seams::{EndReason, Protocol, ReplyCapture, SessionEvent};
use serde_json::{Value, json};

fn chat(text: &str) -> Value {
    json!({"model": "m", "messages": [{"role": "user", "content": text}]})
}

async fn json_of(r: reqwest::Response) -> (u16, Value) {
    let s = r.status().as_u16();
    (s, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn bad_input_gets_a_clear_4xx_in_the_routes_shape() {
    let h = Harness::start(Protocol::Openai).await;
    let cases: Vec<(&str, String, u16, &str)> = vec![
        (
            "/v1/chat/completions",
            "{not json".into(),
            400,
            "not valid JSON",
        ),
        ("/v1/chat/completions", "[1,2]".into(), 400, "JSON object"),
        (
            "/v1/chat/completions",
            r#"{"messages":[]}"#.into(),
            400,
            "must not be empty",
        ),
        (
            "/v1/chat/completions",
            r#"{"messages":[{"role":"user","content":7}]}"#.into(),
            400,
            "messages[0].content",
        ),
        (
            "/v1/chat/completions",
            r#"{"model":1,"messages":[{"role":"user","content":"x"}]}"#.into(),
            400,
            "`model`",
        ),
        (
            "/v1/messages",
            r#"{"max_tokens":5,"messages":[{"role":"user","content":"x"}]}"#.into(),
            400,
            "`model` is required",
        ),
        (
            "/v1/chat/completions",
            format!(
                r#"{{"messages":[{{"role":"user","content":"{}"}}]}}"#,
                "x".repeat(2 * 1024 * 1024)
            ),
            413,
            "max_body_mb",
        ),
    ];
    for (path, body, status, needle) in cases {
        let (s, v) = json_of(h.post(path).body(body).send().await.unwrap()).await;
        assert_eq!(s, status, "{path}: {v}");
        let msg = if path == "/v1/messages" {
            assert_eq!(v["type"], "error");
            v["error"]["message"].as_str().unwrap().to_string()
        } else {
            v["error"]["message"].as_str().unwrap().to_string()
        };
        assert!(msg.contains(needle), "{msg} should mention {needle}");
    }
    assert_eq!(
        h.fake.request_count(),
        0,
        "nothing bad reached the upstream"
    );
    // And the proxy still serves.
    let (s, v) = json_of(
        h.post("/v1/chat/completions")
            .json(&chat("ok?"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 200, "{v}");
}

#[tokio::test]
async fn auth_host_and_unknown_paths() {
    let h = Harness::start(Protocol::Openai).await;
    let url = format!("{}/v1/chat/completions", h.base);
    let r = h.http.post(&url).json(&chat("x")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let r = h
        .http
        .post(&url)
        .header("x-api-key", "nope")
        .json(&chat("x"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = h
        .http
        .post(&url)
        .header("x-api-key", PROXY_KEY)
        .json(&chat("x"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = h
        .post("/v1/chat/completions")
        .header("host", "attacker.example")
        .json(&chat("x"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403, "DNS rebinding guard");
    let r = h.http.get(format!("{}/nope", h.base)).send().await.unwrap();
    assert_eq!(r.status(), 404);
    let r = h
        .http
        .head(format!("{}/v1/whatever", h.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let r = h
        .http
        .get(format!("{}/healthz", h.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.json::<Value>().await.unwrap(), json!({"ok": true}));
}

#[tokio::test]
async fn fallback_takes_over_when_primary_fails_before_any_byte() {
    // Primary: nothing listens there. Fallback: the fake.
    let h = Harness::with(|cfg, fake| {
        let mut dead = upstream(fake, Protocol::Openai, "dead");
        dead.base_url = "http://127.0.0.1:9/v1".into();
        cfg.upstreams = vec![dead, upstream(fake, Protocol::Anthropic, "backup")];
    })
    .await;
    let (s, v) = json_of(
        h.post("/v1/chat/completions")
            .json(&chat("hi"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["choices"][0]["message"]["content"], "Echo: hi");
    let turns = h.sink.wait_turns(|t| t.len() == 1).await;
    assert_eq!(turns[0].upstream, "backup");
    assert_eq!(turns[0].upstream_protocol, Protocol::Anthropic);
}

#[tokio::test]
async fn fallback_on_429_and_5xx_but_last_error_passes_through() {
    let h = Harness::with(|cfg, fake| {
        cfg.upstreams = vec![
            upstream(fake, Protocol::Openai, "first"),
            upstream(fake, Protocol::Openai, "second"),
        ];
    })
    .await;
    h.fake.push_fault(Fault::ServerError);
    let (s, v) = json_of(
        h.post("/v1/chat/completions")
            .json(&chat("a"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (s, v["choices"][0]["message"]["content"].as_str()),
        (200, Some("Echo: a"))
    );
    // Both fail: the client sees the last upstream's status, body and Retry-After.
    let r = h
        .post("/v1/chat/completions")
        .json(&chat("[[fault:429]] b"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "7");
    let v: Value = r.json().await.unwrap();
    assert!(v["error"]["message"].is_string());
}

#[tokio::test]
async fn retry_after_and_status_survive_translation() {
    let h = Harness::start(Protocol::Anthropic).await;
    let r = h
        .post("/v1/chat/completions")
        .json(&chat("[[fault:429]] x"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "7");
    let v: Value = r.json().await.unwrap();
    assert!(
        v["error"]["message"].as_str().unwrap().contains("429"),
        "{v}"
    );
    let r = h
        .post("/v1/chat/completions")
        .json(&chat("[[fault:529]] x"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 529);
}

#[tokio::test]
async fn first_byte_timeout_gives_504_and_the_proxy_keeps_serving() {
    let h = Harness::with(|cfg, fake| {
        cfg.upstreams = vec![upstream(fake, Protocol::Openai, "primary")];
        cfg.first_byte_timeout = Duration::from_millis(300);
    })
    .await;
    let (s, v) = json_of(
        h.post("/v1/chat/completions")
            .json(&chat("[[fault:hang]] x"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 504, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no response")
    );
    let (s, _) = json_of(
        h.post("/v1/chat/completions")
            .json(&chat("fine"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 200);
}

#[tokio::test]
async fn client_disconnect_cancels_the_upstream_request_and_is_recorded() {
    let h = Harness::start(Protocol::Openai).await;
    let mut body = chat("[[fault:chunk_delay:200]] one two three four five six seven eight");
    body["stream"] = json!(true);
    let mut resp = h
        .post("/v1/chat/completions")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let first = resp.chunk().await.unwrap();
    assert!(first.is_some());
    drop(resp);
    assert!(
        h.fake
            .wait_cancelled_streams(1, Duration::from_secs(10))
            .await,
        "the upstream saw the cancellation"
    );
    let turns = h.sink.wait_turns(|t| t.len() == 1).await;
    assert!(
        turns[0]
            .error
            .as_deref()
            .unwrap()
            .contains("client disconnected")
    );
    assert!(turns[0].ttft_ms.is_some());
}

/// SDKs hang up as soon as they read the final event; the upstream may not have closed its end
/// yet. The reply the client took whole is recorded whole, in either protocol.
#[tokio::test]
async fn a_client_that_leaves_after_the_final_event_leaves_a_complete_turn() {
    for (path, body, end) in [
        (
            "/v1/chat/completions",
            json!({"model":"m","stream":true,"messages":[{"role":"user","content":"[[fault:hold_open]] a b c"}]}),
            "[DONE]",
        ),
        (
            "/v1/messages",
            json!({"model":"m","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"[[fault:hold_open]] a b c"}]}),
            "message_stop",
        ),
    ] {
        for up in [Protocol::Openai, Protocol::Anthropic] {
            let h = Harness::start(up).await;
            let mut resp = h.post(path).json(&body).send().await.unwrap();
            assert_eq!(resp.status(), 200);
            let mut read = String::new();
            while !read.contains(end) {
                let chunk = resp.chunk().await.unwrap();
                let chunk =
                    chunk.unwrap_or_else(|| panic!("{path} via {up:?} ended early: {read}"));
                read.push_str(&String::from_utf8_lossy(&chunk));
            }
            drop(resp);
            let turns = h.sink.wait_turns(|t| t.len() == 1).await;
            assert_eq!(turns[0].error, None, "{path} via {up:?}");
            assert_eq!(turns[0].status, 200);
        }
    }
}

#[tokio::test]
async fn upstream_death_mid_stream_reaches_the_client_as_an_error_event() {
    for (path, body) in [
        (
            "/v1/chat/completions",
            json!({"model":"m","stream":true,"messages":[{"role":"user","content":"[[fault:disconnect_mid_stream]] a b c d"}]}),
        ),
        (
            "/v1/messages",
            json!({"model":"m","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"[[fault:disconnect_mid_stream]] a b c d"}]}),
        ),
    ] {
        for up in [Protocol::Openai, Protocol::Anthropic] {
            let h = Harness::start(up).await;
            let text = h
                .post(path)
                .json(&body)
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert!(text.contains("upstream"), "{path} via {up:?}: {text}");
            assert!(text.contains("error"), "{path} via {up:?}: {text}");
            let turns = h.sink.wait_turns(|t| t.len() == 1).await;
            assert!(turns[0].error.is_some());
        }
    }
}

#[tokio::test]
async fn malformed_upstream_chunk_does_not_break_a_translated_stream() {
    let h = Harness::start(Protocol::Anthropic).await;
    let body = json!({"model":"m","stream":true,"messages":[{"role":"user","content":"[[fault:malformed_sse]] still works"}]});
    let text = h
        .post("/v1/chat/completions")
        .json(&body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let content: String = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter_map(|v| {
            v["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    assert_eq!(content, "Echo: still works");
    assert!(text.trim_end().ends_with("data: [DONE]"));
}

#[tokio::test]
async fn session_done_ends_the_session_after_its_turn_is_recorded() {
    let h = Harness::start(Protocol::Openai).await;
    let r = h
        .post("/v1/chat/completions")
        .header("x-session-id", "s-done")
        .header("x-session-done", "true")
        .json(&chat("bye"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let events = h
        .sink
        .wait_events(|e| e.iter().any(|e| matches!(e, SessionEvent::Ended { .. })))
        .await;
    assert!(
        matches!(&events[0], SessionEvent::Started { session_id, .. } if session_id == "s-done")
    );
    assert!(
        matches!(&events[1], SessionEvent::Ended { session_id, reason: EndReason::Explicit, main_turns: 1, .. } if session_id == "s-done")
    );
    assert_eq!(h.state.sessions.open_count(), 0);
    let turns = h.sink.wait_turns(|t| t.len() == 1).await;
    let forwarded: Value = serde_json::from_slice(&turns[0].request).unwrap();
    assert!(forwarded.get("session_done").is_none());
}

#[tokio::test]
async fn idle_sessions_are_ended_by_the_sweeper() {
    let h = Harness::with(|cfg, fake| {
        cfg.upstreams = vec![upstream(fake, Protocol::Openai, "primary")];
        cfg.session_idle_timeout = Duration::from_millis(200);
    })
    .await;
    let mut rx = h.state.sessions.subscribe();
    let mut body = chat("hello");
    body["session_id"] = json!("idle-1");
    h.post("/v1/chat/completions")
        .json(&body)
        .send()
        .await
        .unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Ok(SessionEvent::Ended {
                session_id, reason, ..
            }) = rx.recv().await
            {
                return (session_id, reason);
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(ended, ("idle-1".to_string(), EndReason::Idle));
}

#[tokio::test]
async fn turns_record_forwarded_request_reply_timing_and_side_type() {
    let h = Harness::start(Protocol::Openai).await;
    let mut body = chat("measure me");
    body["stream"] = json!(true);
    let r = h
        .post("/v1/chat/completions")
        .header("x-turn-type", "side")
        .json(&body)
        .send()
        .await
        .unwrap();
    let overhead: f64 = r.headers()["x-metaclaw-overhead-ms"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((0.0..1000.0).contains(&overhead));
    let _ = r.text().await.unwrap();
    let turns = h.sink.wait_turns(|t| t.len() == 1).await;
    let t = &turns[0];
    assert_eq!(t.turn_type.as_str(), "side");
    assert_eq!(t.status, 200);
    assert!(t.error.is_none());
    let ReplyCapture::Sse(chunks) = &t.reply else {
        panic!("expected SSE capture")
    };
    let reply = metaclaw_wire::assemble::assemble_openai_sse(chunks).unwrap();
    assert_eq!(
        reply["choices"][0]["message"]["content"],
        "Echo: measure me"
    );
    let fwd: Value = serde_json::from_slice(&t.request).unwrap();
    assert_eq!(fwd["model"], "fake-model");
    assert!(t.ttft_ms.unwrap() <= t.total_ms);
}

#[tokio::test]
async fn metrics_and_models() {
    let h = Harness::start(Protocol::Openai).await;
    h.post("/v1/chat/completions")
        .json(&chat("x"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let m = h
        .http
        .get(format!("{}/metrics", h.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        m.contains("metaclaw_requests_total{route=\"chat_completions\",status=\"200\"} 1"),
        "{m}"
    );
    assert!(m.contains("metaclaw_overhead_seconds_count 1"), "{m}");
    let v: Value = h
        .http
        .get(format!("{}/v1/models", h.base))
        .bearer_auth(PROXY_KEY)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["data"][0]["id"], "fake-model");
}

#[tokio::test]
async fn count_tokens_forwards_to_anthropic_and_estimates_otherwise() {
    let body =
        json!({"model":"m","messages":[{"role":"user","content":"count these words please"}]});
    for up in [Protocol::Anthropic, Protocol::Openai] {
        let h = Harness::start(up).await;
        let (s, v) = json_of(
            h.post("/v1/messages/count_tokens")
                .json(&body)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(s, 200, "{v}");
        assert!(v["input_tokens"].as_u64().unwrap() > 0);
    }
}

#[tokio::test]
async fn rate_limits_and_overload_keep_their_error_types_across_protocols() {
    // (upstream fault, client route, the type the client's SDK expects)
    for (up, path, fault, expected) in [
        (
            Protocol::Anthropic,
            "/v1/chat/completions",
            "429",
            "rate_limit_error",
        ),
        (Protocol::Openai, "/v1/messages", "429", "rate_limit_error"),
        (Protocol::Openai, "/v1/messages", "529", "overloaded_error"),
    ] {
        let h = Harness::start(up).await;
        let body = json!({"model":"m","max_tokens":16,
            "messages":[{"role":"user","content":format!("[[fault:{fault}]] x")}]});
        let (s, v) = json_of(h.post(path).json(&body).send().await.unwrap()).await;
        assert_eq!(s.to_string(), fault, "{v}");
        let ty = v["error"]["type"].as_str().unwrap_or_default();
        assert_eq!(ty, expected, "{up:?} {path} {fault}: {v}");
    }
}

#[tokio::test]
async fn a_whole_reply_that_stalls_after_its_headers_is_given_up_on_after_the_idle_timeout() {
    let h = Harness::with(|cfg, fake| {
        cfg.upstreams = vec![upstream(fake, Protocol::Openai, "primary")];
        cfg.first_byte_timeout = Duration::from_millis(300);
    })
    .await;
    let started = std::time::Instant::now();
    // Half the body, then nothing for 5 s: far beyond the 300 ms idle limit, far below the
    // 600 s whole-request limit.
    let (s, v) = json_of(
        h.post("/v1/chat/completions")
            .json(&chat("[[fault:chunk_delay:5000]] x"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(s, 504, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("stopped sending"),
        "{v}"
    );
    assert!(started.elapsed() < Duration::from_secs(4));
}

#[tokio::test]
async fn a_stream_closed_before_its_final_event_is_an_error_in_every_combination() {
    for (path, body) in [
        (
            "/v1/chat/completions",
            json!({"model":"m","stream":true,"messages":[{"role":"user","content":"[[fault:end_early]] a b c d e f g"}]}),
        ),
        (
            "/v1/messages",
            json!({"model":"m","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"[[fault:end_early]] a b c d e f g"}]}),
        ),
    ] {
        for up in [Protocol::Openai, Protocol::Anthropic] {
            let h = Harness::start(up).await;
            let text = h
                .post(path)
                .json(&body)
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert!(text.contains("final event"), "{path} via {up:?}: {text}");
            // No invented clean ending.
            assert!(!text.contains("[DONE]"), "{path} via {up:?}: {text}");
            assert!(!text.contains("message_stop"), "{path} via {up:?}: {text}");
            assert!(!text.contains("end_turn"), "{path} via {up:?}: {text}");
            let turns = h.sink.wait_turns(|t| t.len() == 1).await;
            let error = turns[0].error.as_deref().unwrap_or_default();
            assert!(error.contains("final event"), "{error}");
        }
    }
}

/// Reads until the server closes the connection; false if it is still open at `deadline`.
async fn closed_by_server(stream: &mut tokio::net::TcpStream, within: Duration) -> bool {
    use tokio::io::AsyncReadExt;
    let mut buf = vec![0u8; 64 * 1024];
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue,
            Err(_) => return false,
        }
    }
}

#[tokio::test]
async fn half_sent_and_idle_connections_are_closed() {
    use tokio::io::AsyncWriteExt;
    let h = Harness::with(|cfg, fake| {
        cfg.upstreams = vec![upstream(fake, Protocol::Openai, "primary")];
        cfg.connection_timeout = Duration::from_millis(500);
    })
    .await;
    let addr = h.base.trim_start_matches("http://").to_string();

    // Headers that never finish.
    let mut half = tokio::net::TcpStream::connect(&addr).await.unwrap();
    half.write_all(b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        .await
        .unwrap();
    assert!(
        closed_by_server(&mut half, Duration::from_secs(5)).await,
        "a half-sent request kept its connection"
    );

    // A kept-alive connection that answered once and then sits idle.
    let mut idle = tokio::net::TcpStream::connect(&addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    assert!(
        closed_by_server(&mut idle, Duration::from_secs(5)).await,
        "an idle keep-alive connection was kept"
    );

    // A connection that keeps working is not cut: three requests 300 ms apart (each gap
    // under the limit) all answer.
    let client = reqwest::Client::new();
    for _ in 0..3 {
        let r = client
            .get(format!("{}/healthz", h.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        tokio::time::sleep(Duration::from_millis(300)).await; // the gap under test, not a wait
    }
}
