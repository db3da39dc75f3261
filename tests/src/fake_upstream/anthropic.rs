//! Anthropic Messages: request validation, conversation extraction, and rendering the reply as
//! a `message` object or as the SSE event sequence (`message_start`, `content_block_start`,
//! `ping`, `content_block_delta`…, `content_block_stop`, `message_delta`, `message_stop`).

use bytes::Bytes;
use serde_json::{Value, json};

use super::reply::{self, Conversation, Reply, ReplyContent};
use super::sse::event_frame;

/// Frames a disconnect lets through (`message_start`, `content_block_start`, `ping`, one
/// delta), and where a malformed frame goes.
pub const KEEP_FRAMES: usize = 4;

pub fn malformed_frame() -> Bytes {
    event_frame(
        "content_block_delta",
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"#,
    )
}

/// Checks what the real API rejects with a 400; returns the error message.
pub fn validate(body: &Value, count_tokens: bool) -> Result<(), String> {
    let obj = body
        .as_object()
        .ok_or("request body must be a JSON object")?;
    if !obj.get("model").is_some_and(Value::is_string) {
        return Err("model: Field required".into());
    }
    if !count_tokens && !obj.get("max_tokens").is_some_and(Value::is_u64) {
        return Err("max_tokens: Field required".into());
    }
    let messages = obj
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("messages: Field required")?;
    if messages.is_empty() {
        return Err("messages: at least one message is required".into());
    }
    for (i, m) in messages.iter().enumerate() {
        match m.get("role").and_then(Value::as_str) {
            Some("user" | "assistant") => {}
            _ => {
                return Err(format!(
                    "messages.{i}.role: Input should be 'user' or 'assistant'"
                ));
            }
        }
        if !m
            .get("content")
            .is_some_and(|c| c.is_string() || c.is_array())
        {
            return Err(format!("messages.{i}.content: Field required"));
        }
    }
    if obj
        .get("system")
        .is_some_and(|s| !s.is_string() && !s.is_array())
    {
        return Err("system: Input should be a valid string or list".into());
    }
    Ok(())
}

fn blocks(m: &Value) -> &[Value] {
    m.get("content")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
}

pub fn conversation(body: &Value) -> Conversation {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let is_user = |m: &&Value| m.get("role").and_then(Value::as_str) == Some("user");
    let newest_user_text = messages
        .iter()
        .rev()
        .find(is_user)
        .map(|m| reply::content_text(m.get("content").unwrap_or(&Value::Null)))
        .unwrap_or_default();
    let results: Vec<String> = messages
        .last()
        .filter(is_user)
        .map(blocks)
        .unwrap_or_default()
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        .map(|b| reply::content_text(b.get("content").unwrap_or(&Value::Null)))
        .collect();
    let first_tool = body
        .get("tools")
        .and_then(|t| t.get(0))
        .and_then(|t| t.get("name").or_else(|| t.pointer("/function/name")))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let system_chars = body.get("system").map_or(0, reply::text_chars);
    Conversation {
        newest_user_text,
        tool_result: (!results.is_empty()).then(|| results.join("\n")),
        first_tool,
        prompt_chars: system_chars + messages.iter().map(reply::text_chars).sum::<usize>(),
    }
}

pub struct Ids {
    pub message: String,
    pub tool_use: String,
}

impl Ids {
    pub fn new(n: u64) -> Self {
        Self {
            message: format!("msg_fake{n}"),
            tool_use: format!("toolu_fake{n}"),
        }
    }
}

fn stop_reason(r: &Reply) -> &'static str {
    match r.content {
        ReplyContent::Text(_) => "end_turn",
        ReplyContent::ToolCall { .. } => "tool_use",
    }
}

/// Anthropic's `input_tokens` counts only what was neither read from nor written to the cache.
fn usage(r: &Reply, output: u64) -> Value {
    let cache = r.cache.unwrap_or_default();
    json!({
        "input_tokens": r.prompt_tokens.saturating_sub(cache.read + cache.write),
        "cache_creation_input_tokens": cache.write,
        "cache_read_input_tokens": cache.read,
        "output_tokens": output,
    })
}

pub fn message(model: &str, ids: &Ids, r: &Reply) -> Value {
    let block = match &r.content {
        ReplyContent::Text(text) => json!({ "type": "text", "text": text }),
        ReplyContent::ToolCall { name, arguments } => json!({
            "type": "tool_use",
            "id": ids.tool_use,
            "name": name,
            "input": serde_json::from_str::<Value>(arguments).unwrap_or_else(|_| json!({})),
        }),
    };
    json!({
        "id": ids.message,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [block],
        "stop_reason": stop_reason(r),
        "stop_sequence": null,
        "usage": usage(r, r.completion_tokens),
    })
}

pub fn stream_frames(model: &str, ids: &Ids, r: &Reply) -> Vec<Bytes> {
    let ev = |name: &str, data: Value| event_frame(name, &data.to_string());
    let mut frames = vec![ev(
        "message_start",
        json!({
            "type": "message_start",
            "message": {
                "id": ids.message,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": usage(r, 1),
            },
        }),
    )];
    let (start_block, deltas): (Value, Vec<Value>) = match &r.content {
        ReplyContent::Text(text) => (
            json!({ "type": "text", "text": "" }),
            reply::text_pieces(text)
                .into_iter()
                .map(|t| json!({ "type": "text_delta", "text": t }))
                .collect(),
        ),
        ReplyContent::ToolCall { name, arguments } => (
            json!({ "type": "tool_use", "id": ids.tool_use, "name": name, "input": {} }),
            reply::argument_pieces(arguments)
                .into_iter()
                .map(|p| json!({ "type": "input_json_delta", "partial_json": p }))
                .collect(),
        ),
    };
    frames.push(ev(
        "content_block_start",
        json!({ "type": "content_block_start", "index": 0, "content_block": start_block }),
    ));
    frames.push(ev("ping", json!({ "type": "ping" })));
    for delta in deltas {
        frames.push(ev(
            "content_block_delta",
            json!({ "type": "content_block_delta", "index": 0, "delta": delta }),
        ));
    }
    frames.push(ev(
        "content_block_stop",
        json!({ "type": "content_block_stop", "index": 0 }),
    ));
    frames.push(ev(
        "message_delta",
        json!({
            "type": "message_delta",
            "delta": { "stop_reason": stop_reason(r), "stop_sequence": null },
            "usage": { "output_tokens": r.completion_tokens },
        }),
    ));
    frames.push(ev("message_stop", json!({ "type": "message_stop" })));
    frames
}
