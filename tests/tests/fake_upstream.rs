//! The fake upstream speaks both wire protocols as documented and every fault behaves as
//! specified. Driven over real HTTP with reqwest.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use metaclaw_e2e::fake_upstream::{FakeOptions, FakeUpstream, Fault};
use serde_json::{Value, json};

const KEY: &str = "upstream-key";

async fn fake() -> Result<FakeUpstream> {
    Ok(FakeUpstream::start(FakeOptions {
        api_key: Some(KEY.into()),
        ..FakeOptions::default()
    })
    .await?)
}

fn client() -> Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()?)
}

fn openai_body(text: &str, stream: bool, usage: bool) -> Value {
    let mut body = json!({
        "model": "fake-model",
        "messages": [
            { "role": "system", "content": "You are terse." },
            { "role": "user", "content": [{ "type": "text", "text": text }] },
        ],
        "stream": stream,
    });
    if usage {
        body["stream_options"] = json!({ "include_usage": true });
    }
    body
}

fn anthropic_body(text: &str, stream: bool) -> Value {
    json!({
        "model": "claude-fake",
        "max_tokens": 64,
        "system": [{ "type": "text", "text": "You are terse.", "cache_control": { "type": "ephemeral" } }],
        "messages": [{ "role": "user", "content": text }],
        "stream": stream,
    })
}

async fn post_openai(f: &FakeUpstream, body: &Value) -> Result<reqwest::Response> {
    Ok(client()?
        .post(format!("{}/chat/completions", f.base_url_openai()))
        .bearer_auth(KEY)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await?)
}

async fn post_anthropic(f: &FakeUpstream, body: &Value) -> Result<reqwest::Response> {
    Ok(client()?
        .post(format!("{}/v1/messages?beta=true", f.base_url_anthropic()))
        .header("x-api-key", KEY)
        .header("anthropic-version", "2023-06-01")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await?)
}

async fn json_of(resp: reqwest::Response) -> Result<Value> {
    Ok(serde_json::from_slice(&resp.bytes().await?)?)
}

/// One SSE event: its `event:` name if any and its `data:` payload.
#[derive(Debug)]
struct Event {
    name: Option<String>,
    data: String,
}

fn parse_sse(text: &str) -> Result<Vec<Event>> {
    let mut events = Vec::new();
    for block in text.split("\n\n").filter(|b| !b.trim().is_empty()) {
        let mut name = None;
        let mut data = None;
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("event: ") {
                name = Some(v.to_owned());
            } else if let Some(v) = line.strip_prefix("data: ") {
                data = Some(v.to_owned());
            } else {
                bail!("unexpected SSE line {line:?}");
            }
        }
        events.push(Event {
            name,
            data: data.context("SSE event without data")?,
        });
    }
    Ok(events)
}

async fn sse_of(resp: reqwest::Response) -> Result<Vec<Event>> {
    ensure!(resp.status() == 200, "status {}", resp.status());
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    ensure!(ct.starts_with("text/event-stream"), "content-type {ct}");
    parse_sse(&resp.text().await?)
}

fn data_json(events: &[Event]) -> Result<Vec<Value>> {
    events
        .iter()
        .filter(|e| e.data != "[DONE]")
        .map(|e| Ok(serde_json::from_str(&e.data)?))
        .collect()
}

fn openai_text(chunks: &[Value]) -> String {
    chunks
        .iter()
        .filter_map(|c| {
            c.pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
        })
        .collect()
}

fn anthropic_types(events: &[Event]) -> Result<Vec<String>> {
    events
        .iter()
        .map(|e| {
            let v: Value = serde_json::from_str(&e.data)?;
            let ty = v["type"].as_str().context("no type")?.to_owned();
            ensure!(
                e.name.as_deref() == Some(ty.as_str()),
                "event line {:?} vs {ty}",
                e.name
            );
            Ok(ty)
        })
        .collect()
}

/// Collapses runs of `content_block_delta` so sequences compare independent of reply length.
fn squash(types: &[String]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for t in types {
        if out.last() != Some(&t.as_str()) || t != "content_block_delta" {
            out.push(t);
        }
    }
    out
}

const ANTHROPIC_SEQUENCE: [&str; 7] = [
    "message_start",
    "content_block_start",
    "ping",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
];

#[tokio::test]
async fn openai_non_streaming_echo_and_recording() -> Result<()> {
    let f = fake().await?;
    let resp = post_openai(&f, &openai_body("hello there world", false, false)).await?;
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().contains_key("content-length"));
    let v = json_of(resp).await?;
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["model"], "fake-model");
    assert_eq!(v["choices"][0]["message"]["role"], "assistant");
    assert_eq!(
        v["choices"][0]["message"]["content"],
        "Echo: hello there world"
    );
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    // "You are terse." + "hello there world" = 31 chars -> 7 tokens; reply has 4 words.
    assert_eq!(
        v["usage"],
        json!({"prompt_tokens": 7, "completion_tokens": 4, "total_tokens": 11})
    );

    let reqs = f.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].method, "POST");
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    assert_eq!(reqs[0].header("Authorization"), Some("Bearer upstream-key"));
    assert_eq!(
        reqs[0].body["messages"][1]["content"][0]["text"],
        "hello there world"
    );
    f.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn openai_stream_with_usage_chunk() -> Result<()> {
    let f = fake().await?;
    let events = sse_of(post_openai(&f, &openai_body("one two three", true, true)).await?).await?;
    assert_eq!(events.last().map(|e| e.data.as_str()), Some("[DONE]"));
    assert!(events.iter().all(|e| e.name.is_none()));
    let chunks = data_json(&events)?;
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk")
    );
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(openai_text(&chunks), "Echo: one two three");
    let content_deltas = chunks
        .iter()
        .filter(|c| {
            c.pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty())
        })
        .count();
    assert!(content_deltas >= 3, "{content_deltas} deltas");
    let (usage_chunk, rest) = chunks.split_last().context("no chunks")?;
    assert_eq!(usage_chunk["choices"], json!([]));
    assert_eq!(usage_chunk["usage"]["completion_tokens"], 4);
    assert!(
        rest.iter()
            .all(|c| c["usage"].is_null() && c.get("usage").is_some())
    );
    assert_eq!(
        rest.last().context("no finish")?["choices"][0]["finish_reason"],
        "stop"
    );
    f.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn openai_stream_without_usage_has_no_usage() -> Result<()> {
    let f = fake().await?;
    let events = sse_of(post_openai(&f, &openai_body("hi", true, false)).await?).await?;
    let chunks = data_json(&events)?;
    assert!(chunks.iter().all(|c| c.get("usage").is_none()));
    assert!(
        chunks
            .iter()
            .all(|c| c["choices"].as_array().is_some_and(|a| a.len() == 1))
    );
    assert_eq!(events.last().map(|e| e.data.as_str()), Some("[DONE]"));
    f.shutdown().await;
    Ok(())
}

fn openai_tools_body(text: &str, stream: bool) -> Value {
    let mut body = openai_body(text, stream, stream);
    body["tools"] = json!([
        { "type": "function", "function": { "name": "search", "parameters": { "type": "object" } } },
        { "type": "function", "function": { "name": "other", "parameters": { "type": "object" } } },
    ]);
    body["tool_choice"] = json!("auto");
    body
}

#[tokio::test]
async fn openai_tool_call_and_result() -> Result<()> {
    let f = fake().await?;
    let v = json_of(post_openai(&f, &openai_tools_body("please call tool", false)).await?).await?;
    let call = &v["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(call["type"], "function");
    assert_eq!(call["function"]["name"], "search");
    let args: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().context("args")?)?;
    assert_eq!(args, json!({ "query": "please call tool" }));

    let events =
        sse_of(post_openai(&f, &openai_tools_body("please call tool", true)).await?).await?;
    let chunks = data_json(&events)?;
    let first = &chunks[0]["choices"][0]["delta"]["tool_calls"][0];
    assert!(
        first["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("call_"))
    );
    assert_eq!(first["function"]["name"], "search");
    let pieces: Vec<&str> = chunks
        .iter()
        .skip(1)
        .filter_map(|c| {
            c.pointer("/choices/0/delta/tool_calls/0/function/arguments")
                .and_then(Value::as_str)
        })
        .collect();
    assert!(pieces.len() >= 2);
    assert_eq!(serde_json::from_str::<Value>(&pieces.concat())?, args);
    assert!(
        chunks
            .iter()
            .any(|c| c["choices"][0]["finish_reason"] == "tool_calls")
    );

    let mut body = openai_tools_body("please call tool", false);
    let msgs = body["messages"].as_array_mut().context("messages")?;
    msgs.push(json!({ "role": "assistant", "content": null, "tool_calls": [call] }));
    msgs.push(json!({ "role": "tool", "tool_call_id": call["id"], "content": "42 results" }));
    let v = json_of(post_openai(&f, &body).await?).await?;
    assert_eq!(
        v["choices"][0]["message"]["content"],
        "Tool said: 42 results"
    );
    f.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn anthropic_non_streaming_and_stream_sequence() -> Result<()> {
    let f = fake().await?;
    let v = json_of(post_anthropic(&f, &anthropic_body("hello there", false)).await?).await?;
    assert_eq!(v["type"], "message");
    assert_eq!(v["role"], "assistant");
    assert_eq!(
        v["content"],
        json!([{ "type": "text", "text": "Echo: hello there" }])
    );
    assert_eq!(v["stop_reason"], "end_turn");
    assert_eq!(v["usage"]["output_tokens"], 3);
    assert_eq!(v["usage"]["input_tokens"], 6);

    let events =
        sse_of(post_anthropic(&f, &anthropic_body("alpha beta gamma", true)).await?).await?;
    let types = anthropic_types(&events)?;
    assert_eq!(squash(&types), ANTHROPIC_SEQUENCE);
    assert!(types.iter().filter(|t| *t == "content_block_delta").count() >= 3);
    let values = data_json(&events)?;
    let text: String = values
        .iter()
        .filter(|v| v["type"] == "content_block_delta")
        .map(|v| {
            assert_eq!(v["delta"]["type"], "text_delta");
            v["delta"]["text"].as_str().unwrap_or_default().to_owned()
        })
        .collect();
    assert_eq!(text, "Echo: alpha beta gamma");
    assert_eq!(values[0]["message"]["content"], json!([]));
    let delta = values
        .iter()
        .find(|v| v["type"] == "message_delta")
        .context("message_delta")?;
    assert_eq!(delta["delta"]["stop_reason"], "end_turn");
    assert_eq!(delta["usage"]["output_tokens"], 4);

    assert_eq!(f.requests()[0].path, "/v1/messages?beta=true");
    assert_eq!(f.requests()[0].header("x-api-key"), Some(KEY));
    f.shutdown().await;
    Ok(())
}

fn anthropic_tools_body(text: &str, stream: bool) -> Value {
    let mut body = anthropic_body(text, stream);
    body["tools"] = json!([{ "name": "lookup", "input_schema": { "type": "object" } }]);
    body
}

#[tokio::test]
async fn anthropic_tool_use_and_result() -> Result<()> {
    let f = fake().await?;
    let v = json_of(post_anthropic(&f, &anthropic_tools_body("call tool please", false)).await?)
        .await?;
    assert_eq!(v["stop_reason"], "tool_use");
    let block = &v["content"][0];
    assert_eq!(block["type"], "tool_use");
    assert_eq!(block["name"], "lookup");
    assert_eq!(block["input"], json!({ "query": "call tool please" }));

    let events =
        sse_of(post_anthropic(&f, &anthropic_tools_body("call tool please", true)).await?).await?;
    assert_eq!(squash(&anthropic_types(&events)?), ANTHROPIC_SEQUENCE);
    let values = data_json(&events)?;
    let start = values
        .iter()
        .find(|v| v["type"] == "content_block_start")
        .context("start")?;
    assert_eq!(start["content_block"]["type"], "tool_use");
    assert_eq!(start["content_block"]["input"], json!({}));
    let pieces: Vec<&str> = values
        .iter()
        .filter(|v| v["type"] == "content_block_delta")
        .map(|v| {
            assert_eq!(v["delta"]["type"], "input_json_delta");
            v["delta"]["partial_json"].as_str().unwrap_or_default()
        })
        .collect();
    assert!(pieces.len() >= 2);
    assert_eq!(
        serde_json::from_str::<Value>(&pieces.concat())?,
        block["input"]
    );
    let delta = values
        .iter()
        .find(|v| v["type"] == "message_delta")
        .context("delta")?;
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");

    let mut body = anthropic_tools_body("call tool please", false);
    let msgs = body["messages"].as_array_mut().context("messages")?;
    msgs.push(json!({ "role": "assistant", "content": [block] }));
    msgs.push(json!({ "role": "user", "content": [
        { "type": "tool_result", "tool_use_id": block["id"], "content": [{ "type": "text", "text": "sunny" }] }
    ]}));
    let v = json_of(post_anthropic(&f, &body).await?).await?;
    assert_eq!(v["content"][0]["text"], "Tool said: sunny");
    f.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn auth_and_validation_errors_use_protocol_shapes() -> Result<()> {
    let f = fake().await?;
    let c = client()?;
    let url = format!("{}/chat/completions", f.base_url_openai());
    let resp = c
        .post(&url)
        .bearer_auth("client-key")
        .body(openai_body("x", false, false).to_string())
        .send()
        .await?;
    assert_eq!(resp.status(), 401);
    let v = json_of(resp).await?;
    assert_eq!(v["error"]["code"], "invalid_api_key");
    assert!(v["error"]["message"].is_string() && v["error"]["type"].is_string());

    // Anthropic wants x-api-key; a Bearer header alone is not enough.
    let url = format!("{}/v1/messages", f.base_url_anthropic());
    let resp = c
        .post(&url)
        .bearer_auth(KEY)
        .header("anthropic-version", "2023-06-01")
        .body(anthropic_body("x", false).to_string())
        .send()
        .await?;
    assert_eq!(resp.status(), 401);
    let v = json_of(resp).await?;
    assert_eq!(v["type"], "error");
    assert_eq!(v["error"]["type"], "authentication_error");

    let resp = c
        .post(&url)
        .header("x-api-key", KEY)
        .body(anthropic_body("x", false).to_string())
        .send()
        .await?;
    assert_eq!(resp.status(), 400, "anthropic-version is required");

    let mut body = anthropic_body("x", false);
    body["messages"] =
        json!([{ "role": "system", "content": "s" }, { "role": "user", "content": "u" }]);
    let resp = post_anthropic(&f, &body).await?;
    assert_eq!(resp.status(), 400);
    assert_eq!(
        json_of(resp).await?["error"]["type"],
        "invalid_request_error"
    );

    let resp = post_openai(&f, &json!({ "model": "m", "messages": [] })).await?;
    assert_eq!(resp.status(), 400);
    assert_eq!(
        json_of(resp).await?["error"]["type"],
        "invalid_request_error"
    );
    let resp = c
        .post(format!("{}/chat/completions", f.base_url_openai()))
        .bearer_auth(KEY)
        .body("{nope")
        .send()
        .await?;
    assert_eq!(resp.status(), 400);

    let resp = c
        .get(format!("{}/models", f.base_url_openai()))
        .bearer_auth(KEY)
        .send()
        .await?;
    assert_eq!(resp.status(), 200);
    let v = json_of(resp).await?;
    assert_eq!(v["object"], "list");
    assert_eq!(v["data"][0]["id"], "fake-model");
    f.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn error_faults_in_both_shapes() -> Result<()> {
    let f = fake().await?;
    for (marker, status, oa_code, an_type) in [
        (
            "[[fault:429]]",
            429,
            json!("rate_limit_exceeded"),
            "rate_limit_error",
        ),
        ("[[fault:500]]", 500, Value::Null, "api_error"),
        (
            "[[fault:529]]",
            529,
            json!("overloaded"),
            "overloaded_error",
        ),
        (
            "[[fault:401]]",
            401,
            json!("invalid_api_key"),
            "authentication_error",
        ),
    ] {
        for stream in [false, true] {
            let resp =
                post_openai(&f, &openai_body(&format!("hi {marker}"), stream, false)).await?;
            assert_eq!(resp.status(), status, "{marker}");
            let retry = resp
                .headers()
                .get("retry-after")
                .map(|v| v.as_bytes().to_vec());
            assert_eq!(
                retry.as_deref(),
                (status == 429).then_some(&b"7"[..]),
                "{marker}"
            );
            let v = json_of(resp).await?;
            assert_eq!(v["error"]["code"], oa_code, "{marker}");
            assert!(v["error"]["message"].is_string());

            let resp = post_anthropic(&f, &anthropic_body(&format!("hi {marker}"), stream)).await?;
            assert_eq!(resp.status(), status, "{marker}");
            assert_eq!(resp.headers().contains_key("retry-after"), status == 429);
            let v = json_of(resp).await?;
            assert_eq!(v["type"], "error");
            assert_eq!(v["error"]["type"], an_type, "{marker}");
        }
    }
    f.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn queued_fault_wins_over_marker_and_marker_is_stripped() -> Result<()> {
    let f = fake().await?;
    f.push_fault(Fault::ServerError);
    let resp = post_openai(&f, &openai_body("x [[fault:429]]", false, false)).await?;
    assert_eq!(resp.status(), 500);
    let resp = post_openai(&f, &openai_body("x [[fault:429]]", false, false)).await?;
    assert_eq!(resp.status(), 429);
    let v = json_of(
        post_openai(
            &f,
            &openai_body("x [[fault:slow_first_byte:1]]", false, false),
        )
        .await?,
    )
    .await?;
    assert_eq!(v["choices"][0]["message"]["content"], "Echo: x");
    f.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn slow_first_byte_and_chunk_delay() -> Result<()> {
    let f = fake().await?;
    let start = Instant::now();
    let resp = post_openai(
        &f,
        &openai_body("x [[fault:slow_first_byte:300]]", true, false),
    )
    .await?;
    assert!(start.elapsed() >= Duration::from_millis(300));
    sse_of(resp).await?;

    let start = Instant::now();
    let resp = post_anthropic(&f, &anthropic_body("a b [[fault:chunk_delay:40]]", true)).await?;
    let events = sse_of(resp).await?;
    // 8 frames -> 7 pauses.
    assert_eq!(squash(&anthropic_types(&events)?), ANTHROPIC_SEQUENCE);
    assert!(start.elapsed() >= Duration::from_millis(40 * (events.len() as u64 - 1)));
    f.shutdown().await;
    Ok(())
}

/// Reads a streamed body until it ends or fails; returns the text and whether it failed.
async fn read_until_end(mut resp: reqwest::Response) -> (String, bool) {
    let mut text = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(bytes)) => text.extend_from_slice(&bytes),
            Ok(None) => return (String::from_utf8_lossy(&text).into_owned(), false),
            Err(_) => return (String::from_utf8_lossy(&text).into_owned(), true),
        }
    }
}

#[tokio::test]
async fn disconnect_mid_stream_ends_without_terminator() -> Result<()> {
    let f = fake().await?;
    let resp = post_openai(
        &f,
        &openai_body("a b c d [[fault:disconnect_mid_stream]]", true, true),
    )
    .await?;
    assert_eq!(resp.status(), 200);
    let (text, failed) = read_until_end(resp).await;
    assert!(failed, "the connection must break");
    assert!(!text.contains("[DONE]"));
    let chunks = data_json(&parse_sse(&text)?)?;
    assert!(!chunks.is_empty());
    assert!(
        chunks
            .iter()
            .all(|c| c["choices"][0]["finish_reason"].is_null())
    );

    let resp = post_anthropic(
        &f,
        &anthropic_body("a b c d [[fault:disconnect_mid_stream]]", true),
    )
    .await?;
    let (text, failed) = read_until_end(resp).await;
    assert!(failed);
    assert!(text.contains("message_start") && !text.contains("message_stop"));

    f.push_fault(Fault::DisconnectMidStream);
    let (text, failed) =
        read_until_end(post_openai(&f, &openai_body("x", false, false)).await?).await;
    assert!(failed && serde_json::from_str::<Value>(&text).is_err());
    // The fake ended these itself; they are not client cancellations.
    assert_eq!(f.cancelled_streams(), 0);
    f.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn malformed_sse_then_continues() -> Result<()> {
    let f = fake().await?;
    for anthropic in [false, true] {
        let resp = if anthropic {
            post_anthropic(&f, &anthropic_body("a b c [[fault:malformed_sse]]", true)).await?
        } else {
            post_openai(
                &f,
                &openai_body("a b c [[fault:malformed_sse]]", true, false),
            )
            .await?
        };
        let events = sse_of(resp).await?;
        let bad = events
            .iter()
            .filter(|e| e.data != "[DONE]" && serde_json::from_str::<Value>(&e.data).is_err())
            .count();
        assert_eq!(bad, 1);
        let last = &events.last().context("events")?.data;
        assert!(last == "[DONE]" || last.contains("message_stop"), "{last}");
        let good: Vec<Value> = events
            .iter()
            .filter_map(|e| serde_json::from_str(&e.data).ok())
            .collect();
        if anthropic {
            let text: String = good
                .iter()
                .filter_map(|v| v.pointer("/delta/text").and_then(Value::as_str))
                .collect();
            assert_eq!(text, "Echo: a b c");
        } else {
            assert_eq!(openai_text(&good), "Echo: a b c");
        }
    }
    f.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn hang_never_answers_and_shutdown_is_bounded() -> Result<()> {
    let f = fake().await?;
    let c = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()?;
    let started = Instant::now();
    let res = c
        .post(format!("{}/chat/completions", f.base_url_openai()))
        .bearer_auth(KEY)
        .body(openai_body("x [[fault:hang]]", true, true).to_string())
        .send()
        .await;
    assert!(
        res.as_ref().is_err_and(reqwest::Error::is_timeout),
        "{res:?}"
    );
    assert!(started.elapsed() >= Duration::from_millis(300));

    // A request still hanging must not hold shutdown up.
    f.push_fault(Fault::Hang);
    let url = format!("{}/chat/completions", f.base_url_openai());
    let body = openai_body("x", false, false).to_string();
    let pending = tokio::spawn(async move {
        client()?
            .post(url)
            .bearer_auth(KEY)
            .body(body)
            .send()
            .await
            .map_err(anyhow::Error::from)
    });
    while f.request_count() < 2 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::timeout(Duration::from_secs(3), f.shutdown()).await?;
    let resp = pending.await??;
    assert_eq!(resp.status(), 500);
    Ok(())
}

#[tokio::test]
async fn client_disconnect_counts_as_cancelled_stream() -> Result<()> {
    let f = fake().await?;
    let mut resp = post_openai(
        &f,
        &openai_body("a b c d e f g h [[fault:chunk_delay:100]]", true, true),
    )
    .await?;
    let first = resp.chunk().await?.context("first chunk")?;
    assert!(first.starts_with(b"data: "));
    drop(resp);
    assert!(
        f.wait_cancelled_streams(1, Duration::from_secs(5)).await,
        "stream not seen as cancelled"
    );

    let stats: Value = json_of(
        client()?
            .get(format!("{}/_stats", f.base_url_anthropic()))
            .send()
            .await?,
    )
    .await?;
    assert_eq!(stats, json!({ "requests": 1, "cancelled_streams": 1 }));

    // A stream read to the end is not a cancellation.
    sse_of(post_openai(&f, &openai_body("done", true, true)).await?).await?;
    assert_eq!(f.cancelled_streams(), 1);
    f.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn control_routes() -> Result<()> {
    let f = fake().await?;
    let c = client()?;
    let base = f.base_url_anthropic();
    let resp = c
        .post(format!("{base}/_faults"))
        .body(r#"["429", "[[fault:chunk_delay:1]]"]"#)
        .send()
        .await?;
    assert_eq!(resp.status(), 204);
    assert_eq!(
        post_openai(&f, &openai_body("x", false, false))
            .await?
            .status(),
        429
    );
    assert_eq!(
        post_openai(&f, &openai_body("x", false, false))
            .await?
            .status(),
        200
    );
    assert_eq!(
        post_openai(&f, &openai_body("x", false, false))
            .await?
            .status(),
        200
    );
    let resp = c
        .post(format!("{base}/_faults"))
        .body(r#"["bogus"]"#)
        .send()
        .await?;
    assert_eq!(resp.status(), 400);

    let reqs = json_of(c.get(format!("{base}/_requests")).send().await?).await?;
    let reqs = reqs.as_array().context("list")?;
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0]["path"], "/v1/chat/completions");
    assert_eq!(reqs[0]["body"]["model"], "fake-model");
    assert!(
        reqs[0]["headers"]
            .as_array()
            .is_some_and(|h| h.iter().any(|kv| kv[0] == "authorization"))
    );
    assert_eq!(
        c.delete(format!("{base}/_requests")).send().await?.status(),
        204
    );
    assert!(f.requests().is_empty());
    assert_eq!(c.get(format!("{base}/nope")).send().await?.status(), 404);

    let resp = c
        .post(format!("{base}/v1/messages/count_tokens"))
        .header("x-api-key", KEY)
        .header("anthropic-version", "2023-06-01")
        .body(
            json!({ "model": "m", "messages": [{ "role": "user", "content": "12345678" }] })
                .to_string(),
        )
        .send()
        .await?;
    assert_eq!(json_of(resp).await?, json!({ "input_tokens": 2 }));
    f.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn fast_mode_replies_without_recording() -> Result<()> {
    let f = FakeUpstream::start(FakeOptions {
        api_key: Some(KEY.into()),
        fast: true,
        ..FakeOptions::default()
    })
    .await?;
    let events =
        sse_of(post_openai(&f, &openai_body("anything [[fault:429]]", true, true)).await?).await?;
    let chunks = data_json(&events)?;
    assert!(!openai_text(&chunks).is_empty());
    assert!(
        chunks
            .last()
            .is_some_and(|c| c["usage"]["total_tokens"].is_u64())
    );
    assert_eq!(events.last().map(|e| e.data.as_str()), Some("[DONE]"));
    let v = json_of(post_openai(&f, &openai_body("x", false, false)).await?).await?;
    assert_eq!(v["object"], "chat.completion");
    let events = sse_of(post_anthropic(&f, &anthropic_body("x", true)).await?).await?;
    assert_eq!(squash(&anthropic_types(&events)?), ANTHROPIC_SEQUENCE);
    assert!(f.requests().is_empty());
    assert_eq!(f.request_count(), 3);
    f.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn binary_prints_port_and_exits_when_stdin_closes() -> Result<()> {
    use tokio::io::AsyncBufReadExt;
    let exe = env!("CARGO_BIN_EXE_fake-upstream");
    let mut child = tokio::process::Command::new(exe)
        .args(["--api-key", KEY])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let stdout = child.stdout.take().context("stdout")?;
    let mut line = String::new();
    tokio::io::BufReader::new(stdout)
        .read_line(&mut line)
        .await?;
    let port: u16 = line
        .trim()
        .strip_prefix("PORT=")
        .context("PORT= line")?
        .parse()?;
    let resp = client()?
        .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
        .bearer_auth(KEY)
        .body(openai_body("bin", false, false).to_string())
        .send()
        .await?;
    assert_eq!(
        json_of(resp).await?["choices"][0]["message"]["content"],
        "Echo: bin"
    );
    drop(child.stdin.take());
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait()).await??;
    assert!(status.success());
    Ok(())
}

#[tokio::test]
async fn scripted_replies_come_back_verbatim_on_both_protocols() -> Result<()> {
    let f = fake().await?;
    let scripted = r#"{"skills": [{"name": "x"}]}  and two  spaces"#;
    for _ in 0..4 {
        f.push_reply(scripted);
    }
    let v = json_of(post_openai(&f, &openai_body("hi [[fault:429]]", false, false)).await?).await?;
    assert_eq!(v["choices"][0]["message"]["content"], scripted);
    assert_eq!(v["usage"]["completion_tokens"], 6);
    let chunks = data_json(&sse_of(post_openai(&f, &openai_body("hi", true, true)).await?).await?)?;
    assert_eq!(openai_text(&chunks), scripted);
    let v = json_of(post_anthropic(&f, &anthropic_body("hi", false)).await?).await?;
    assert_eq!(v["content"], json!([{ "type": "text", "text": scripted }]));
    let events = sse_of(post_anthropic(&f, &anthropic_body("hi", true)).await?).await?;
    let text: String = data_json(&events)?
        .iter()
        .filter_map(|v| {
            v.pointer("/delta/text")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(text, scripted);

    // Queue empty again: the decided reply and markers are back.
    let v = json_of(post_openai(&f, &openai_body("hi", false, false)).await?).await?;
    assert_eq!(v["choices"][0]["message"]["content"], "Echo: hi");
    let resp = post_openai(&f, &openai_body("hi [[fault:429]]", false, false)).await?;
    assert_eq!(resp.status(), 429);

    // A queued error fault answers first and leaves the script for the next request.
    f.push_reply("first");
    f.push_reply("second");
    f.push_fault(Fault::ServerError);
    assert_eq!(
        post_openai(&f, &openai_body("hi", false, false))
            .await?
            .status(),
        500
    );
    let v = json_of(post_openai(&f, &openai_body("hi", false, false)).await?).await?;
    assert_eq!(v["choices"][0]["message"]["content"], "first");
    let v = json_of(post_anthropic(&f, &anthropic_body("hi", false)).await?).await?;
    assert_eq!(v["content"][0]["text"], "second");
    f.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn response_format_can_be_rejected() -> Result<()> {
    let f = fake().await?;
    let mut body = openai_body("hi", false, false);
    body["response_format"] =
        json!({ "type": "json_schema", "json_schema": { "name": "x", "schema": {} } });
    assert_eq!(post_openai(&f, &body).await?.status(), 200);
    f.reject_response_format(true);
    let resp = post_openai(&f, &body).await?;
    assert_eq!(resp.status(), 400);
    let v = json_of(resp).await?;
    let msg = v["error"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("response_format"), "{msg}");
    assert_eq!(
        post_openai(&f, &openai_body("hi", false, false))
            .await?
            .status(),
        200
    );
    f.shutdown().await;
    Ok(())
}

async fn post_embeddings(f: &FakeUpstream, key: &str, body: &Value) -> Result<reqwest::Response> {
    Ok(client()?
        .post(format!("{}/embeddings", f.base_url_openai()))
        .bearer_auth(key)
        .json(body)
        .send()
        .await?)
}

fn vector(v: &Value, i: usize) -> Result<Vec<f64>> {
    v["data"][i]["embedding"]
        .as_array()
        .context("embedding")?
        .iter()
        .map(|x| x.as_f64().context("number"))
        .collect()
}

fn cosine(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[tokio::test]
async fn embeddings_are_deterministic_bags_of_words() -> Result<()> {
    let f = fake().await?;
    let body = json!({
        "model": "text-embedding-3-small",
        "input": ["Deploy the Rust service", "deploy rust SERVICE today", "banana smoothie", "..."],
    });
    let resp = post_embeddings(&f, KEY, &body).await?;
    assert_eq!(resp.status(), 200);
    let v = json_of(resp).await?;
    assert_eq!(v["object"], "list");
    assert_eq!(v["model"], "text-embedding-3-small");
    assert_eq!(
        v["usage"],
        json!({ "prompt_tokens": 10, "total_tokens": 10 })
    );
    let data = v["data"].as_array().context("data")?;
    assert_eq!(data.len(), 4);
    for (i, item) in data.iter().enumerate() {
        assert_eq!(item["object"], "embedding");
        assert_eq!(item["index"], i);
    }
    let vs = (0..4).map(|i| vector(&v, i)).collect::<Result<Vec<_>>>()?;
    assert!(vs.iter().all(|v| v.len() == 64));
    assert!((cosine(&vs[0], &vs[0]) - 1.0).abs() < 1e-5);
    assert!(cosine(&vs[0], &vs[1]) > 0.6);
    assert!(cosine(&vs[0], &vs[1]) > cosine(&vs[0], &vs[2]));
    assert!(vs[3].iter().all(|x| *x == 0.0));

    // A single string input, and the same text gives the same vector.
    let one = json_of(
        post_embeddings(
            &f,
            KEY,
            &json!({ "model": "m", "input": "Deploy the Rust service" }),
        )
        .await?,
    )
    .await?;
    assert_eq!(vector(&one, 0)?, vs[0]);

    assert_eq!(f.embedding_requests(), 2);
    let reqs = f.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].path, "/v1/embeddings");
    assert_eq!(reqs[0].body["input"][2], "banana smoothie");
    f.shutdown().await;
    Ok(())
}

#[tokio::test]
async fn embeddings_validate_authenticate_and_fault() -> Result<()> {
    let f = fake().await?;
    for body in [
        json!({ "model": "m" }),
        json!({ "model": "m", "input": [] }),
        json!({ "model": "m", "input": "" }),
        json!({ "model": "m", "input": [1, 2] }),
        json!({ "model": "m", "input": 3 }),
        json!({ "input": "x" }),
    ] {
        let resp = post_embeddings(&f, KEY, &body).await?;
        assert_eq!(resp.status(), 400, "{body}");
        let v = json_of(resp).await?;
        assert_eq!(v["error"]["type"], "invalid_request_error", "{body}");
    }
    let ok = json!({ "model": "m", "input": "x" });
    let resp = post_embeddings(&f, "wrong", &ok).await?;
    assert_eq!(resp.status(), 401);
    assert_eq!(json_of(resp).await?["error"]["code"], "invalid_api_key");

    let marked = json!({ "model": "m", "input": ["fine", "x [[fault:429]]"] });
    assert_eq!(post_embeddings(&f, KEY, &marked).await?.status(), 429);
    f.push_fault(Fault::ServerError);
    assert_eq!(post_embeddings(&f, KEY, &ok).await?.status(), 500);
    assert_eq!(post_embeddings(&f, KEY, &ok).await?.status(), 200);
    f.shutdown().await;
    Ok(())
}
