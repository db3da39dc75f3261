//! OpenAI chat completions: request validation, conversation extraction, and rendering the
//! reply as a `chat.completion` object or as `chat.completion.chunk` SSE frames ending in
//! `data: [DONE]`.

use bytes::Bytes;
use serde_json::{Value, json};

use super::reply::{self, Conversation, Reply, ReplyContent};
use super::sse::data_frame;

/// Frames a disconnect lets through (role chunk and two deltas), and where a malformed frame
/// goes.
pub const KEEP_FRAMES: usize = 3;

pub fn malformed_frame() -> Bytes {
    data_frame(r#"{"id":"chatcmpl-broken","choices":[{"delta":{"content":"#)
}

const ROLES: &[&str] = &[
    "system",
    "developer",
    "user",
    "assistant",
    "tool",
    "function",
];

/// Checks what the real API rejects with a 400; returns the error message.
pub fn validate(body: &Value) -> Result<(), String> {
    let obj = body
        .as_object()
        .ok_or("The request body must be a JSON object.")?;
    match obj.get("model") {
        Some(Value::String(m)) if !m.is_empty() => {}
        Some(_) => return Err("Invalid type for 'model': expected a string.".into()),
        None => return Err("Missing required parameter: 'model'.".into()),
    }
    let messages = match obj.get("messages") {
        Some(Value::Array(m)) => m,
        Some(_) => return Err("Invalid type for 'messages': expected an array.".into()),
        None => return Err("Missing required parameter: 'messages'.".into()),
    };
    if messages.is_empty() {
        return Err("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.".into());
    }
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str);
        if !role.is_some_and(|r| ROLES.contains(&r)) {
            return Err(format!("Invalid value for 'messages[{i}].role'."));
        }
        if role == Some("tool") && m.get("tool_call_id").and_then(Value::as_str).is_none() {
            return Err(format!(
                "Missing required parameter: 'messages[{i}].tool_call_id'."
            ));
        }
    }
    if obj
        .get("stream")
        .is_some_and(|s| !s.is_boolean() && !s.is_null())
    {
        return Err("Invalid type for 'stream': expected a boolean.".into());
    }
    Ok(())
}

pub fn conversation(body: &Value) -> Conversation {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let role = |m: &Value| m.get("role").and_then(Value::as_str).map(str::to_owned);
    let newest_user_text = messages
        .iter()
        .rev()
        .find(|m| role(m).as_deref() == Some("user"))
        .map(|m| reply::content_text(m.get("content").unwrap_or(&Value::Null)))
        .unwrap_or_default();
    let trailing_tool: Vec<String> = messages
        .iter()
        .rev()
        .take_while(|m| role(m).as_deref() == Some("tool"))
        .map(|m| reply::content_text(m.get("content").unwrap_or(&Value::Null)))
        .collect();
    let tool_result = (!trailing_tool.is_empty()).then(|| {
        trailing_tool
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    });
    let first_tool = body
        .get("tools")
        .and_then(|t| t.get(0))
        .and_then(|t| t.pointer("/function/name").or_else(|| t.get("name")))
        .and_then(Value::as_str)
        .map(str::to_owned);
    Conversation {
        newest_user_text,
        tool_result,
        first_tool,
        prompt_chars: messages.iter().map(reply::text_chars).sum(),
    }
}

/// Whether the client asked for the final usage chunk.
pub fn include_usage(body: &Value) -> bool {
    body.pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

pub struct Ids {
    pub completion: String,
    pub tool_call: String,
    pub created: u64,
}

impl Ids {
    pub fn new(n: u64, created: u64) -> Self {
        Self {
            completion: format!("chatcmpl-fake{n}"),
            tool_call: format!("call_fake{n}"),
            created,
        }
    }
}

fn usage(r: &Reply) -> Value {
    let mut u = json!({
        "prompt_tokens": r.prompt_tokens,
        "completion_tokens": r.completion_tokens,
        "total_tokens": r.prompt_tokens + r.completion_tokens,
    });
    if let Some(cache) = r.cache {
        u["prompt_tokens_details"] = json!({ "cached_tokens": cache.read });
    }
    u
}

fn finish_reason(r: &Reply) -> &'static str {
    match r.content {
        ReplyContent::Text(_) => "stop",
        ReplyContent::ToolCall { .. } => "tool_calls",
    }
}

pub fn completion(model: &str, ids: &Ids, r: &Reply) -> Value {
    let message = match &r.content {
        ReplyContent::Text(text) => {
            json!({ "role": "assistant", "content": text, "refusal": null })
        }
        ReplyContent::ToolCall { name, arguments } => json!({
            "role": "assistant",
            "content": null,
            "refusal": null,
            "tool_calls": [{
                "id": ids.tool_call,
                "type": "function",
                "function": { "name": name, "arguments": arguments },
            }],
        }),
    };
    json!({
        "id": ids.completion,
        "object": "chat.completion",
        "created": ids.created,
        "model": model,
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish_reason(r),
        }],
        "usage": usage(r),
        "system_fingerprint": null,
    })
}

/// The SSE frames of a streamed completion. With `include_usage` every chunk carries
/// `"usage": null` and a final chunk with empty `choices` carries the usage, as the real API does.
pub fn stream_frames(model: &str, ids: &Ids, r: &Reply, include_usage: bool) -> Vec<Bytes> {
    let chunk = |delta: Value, finish: Option<&str>| {
        let mut c = json!({
            "id": ids.completion,
            "object": "chat.completion.chunk",
            "created": ids.created,
            "model": model,
            "system_fingerprint": null,
            "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }],
        });
        if include_usage {
            c["usage"] = Value::Null;
        }
        data_frame(&c.to_string())
    };
    let mut frames = Vec::new();
    match &r.content {
        ReplyContent::Text(text) => {
            frames.push(chunk(
                json!({ "role": "assistant", "content": "", "refusal": null }),
                None,
            ));
            for piece in reply::text_pieces(text) {
                frames.push(chunk(json!({ "content": piece }), None));
            }
        }
        ReplyContent::ToolCall { name, arguments } => {
            frames.push(chunk(
                json!({
                    "role": "assistant",
                    "content": null,
                    "tool_calls": [{
                        "index": 0,
                        "id": ids.tool_call,
                        "type": "function",
                        "function": { "name": name, "arguments": "" },
                    }],
                }),
                None,
            ));
            for piece in reply::argument_pieces(arguments) {
                frames.push(chunk(
                    json!({ "tool_calls": [{ "index": 0, "function": { "arguments": piece } }] }),
                    None,
                ));
            }
        }
    }
    frames.push(chunk(json!({}), Some(finish_reason(r))));
    if include_usage {
        let c = json!({
            "id": ids.completion,
            "object": "chat.completion.chunk",
            "created": ids.created,
            "model": model,
            "system_fingerprint": null,
            "choices": [],
            "usage": usage(r),
        });
        frames.push(data_frame(&c.to_string()));
    }
    frames.push(data_frame("[DONE]"));
    frames
}

pub fn models() -> Value {
    json!({
        "object": "list",
        "data": [{ "id": "fake-model", "object": "model", "created": 1_700_000_000, "owned_by": "fake" }],
    })
}
