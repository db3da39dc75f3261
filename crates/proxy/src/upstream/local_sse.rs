//! A whole OpenAI `chat.completion` as the `chat.completion.chunk` events a streaming
//! upstream would send: role, reasoning and text in small pieces, each tool call, the
//! finish reason, usage when the client asked for it, then `[DONE]`.

use bytes::Bytes;
use serde_json::{Value, json};

/// Text pieces are cut at whitespace once they reach this many bytes, so clients render the
/// reply progressively without one event per character.
const PIECE_BYTES: usize = 24;

pub fn chunks(completion: &Value, include_usage: bool) -> Vec<Bytes> {
    let id = completion.get("id").cloned().unwrap_or(Value::Null);
    let created = completion.get("created").cloned().unwrap_or(json!(0));
    let model = completion.get("model").cloned().unwrap_or(Value::Null);
    let choice = completion
        .get("choices")
        .and_then(|c| c.get(0))
        .cloned()
        .unwrap_or(Value::Null);
    let message = choice.get("message").cloned().unwrap_or(Value::Null);
    let event = |delta: Value, finish: Value| {
        let chunk = json!({
            "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        Bytes::from(format!("data: {chunk}\n\n"))
    };
    let mut out = vec![event(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    if let Some(reasoning) = message.get("reasoning_content").and_then(Value::as_str) {
        for piece in pieces(reasoning) {
            out.push(event(json!({"reasoning_content": piece}), Value::Null));
        }
    }
    if let Some(content) = message.get("content").and_then(Value::as_str) {
        for piece in pieces(content) {
            out.push(event(json!({"content": piece}), Value::Null));
        }
    }
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (index, call) in calls.iter().enumerate() {
            let mut call = call.clone();
            if let Some(obj) = call.as_object_mut() {
                obj.insert("index".into(), json!(index));
            }
            out.push(event(json!({"tool_calls": [call]}), Value::Null));
        }
    }
    let finish = choice
        .get("finish_reason")
        .cloned()
        .unwrap_or(json!("stop"));
    out.push(event(json!({}), finish));
    if include_usage && let Some(usage) = completion.get("usage") {
        let chunk = json!({
            "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [], "usage": usage,
        });
        out.push(Bytes::from(format!("data: {chunk}\n\n")));
    }
    out.push(Bytes::from_static(b"data: [DONE]\n\n"));
    out
}

/// `text` cut into pieces of about [`PIECE_BYTES`], each ending after whitespace where
/// possible; the pieces concatenate to `text` exactly.
fn pieces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        let end = i + c.len_utf8();
        if end - start >= PIECE_BYTES && c.is_whitespace() {
            out.push(&text[start..end]);
            start = end;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[Bytes]) -> Vec<Value> {
        chunks
            .iter()
            .filter_map(|b| {
                let s = std::str::from_utf8(b).ok()?;
                let data = s.strip_prefix("data: ")?.trim();
                serde_json::from_str(data).ok()
            })
            .collect()
    }

    #[test]
    fn pieces_concatenate_to_the_text() {
        let text = "Grüße aus der Stadt, heute ist ein schöner Tag und wir gehen spazieren.";
        let p = pieces(text);
        assert!(p.len() > 1, "{p:?}");
        assert_eq!(p.concat(), text);
    }

    #[test]
    fn a_completion_becomes_ordered_chunks_ending_in_done() {
        let completion = json!({
            "id": "chatcmpl-1", "created": 5, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "Let me look that up for you right now, one moment.",
                "reasoning_content": "The user wants the weather.",
                "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}]}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
        });
        let out = chunks(&completion, true);
        assert_eq!(out.last().map(|b| &b[..]), Some(&b"data: [DONE]\n\n"[..]));
        let ev = events(&out);
        assert_eq!(ev[0]["choices"][0]["delta"]["role"], "assistant");
        let text: String = ev
            .iter()
            .filter_map(|e| e["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert_eq!(text, "Let me look that up for you right now, one moment.");
        let reasoning: String = ev
            .iter()
            .filter_map(|e| e["choices"][0]["delta"]["reasoning_content"].as_str())
            .collect();
        assert_eq!(reasoning, "The user wants the weather.");
        let call = ev
            .iter()
            .find_map(|e| e["choices"][0]["delta"]["tool_calls"].get(0).cloned())
            .unwrap_or_default();
        assert_eq!(call["index"], 0);
        assert_eq!(call["function"]["name"], "weather");
        let finish: Vec<&Value> = ev
            .iter()
            .map(|e| &e["choices"][0]["finish_reason"])
            .filter(|f| !f.is_null())
            .collect();
        assert_eq!(finish, vec![&json!("tool_calls")]);
        assert_eq!(
            ev.last().map(|e| e["usage"]["total_tokens"].clone()),
            Some(json!(7))
        );
    }

    #[test]
    fn usage_is_sent_only_when_asked_for() {
        let completion = json!({"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}});
        let ev = events(&chunks(&completion, false));
        assert!(ev.iter().all(|e| e.get("usage").is_none()));
    }
}
