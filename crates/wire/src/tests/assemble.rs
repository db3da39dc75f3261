use crate::WireError;
use crate::assemble::{
    TokenUsage, assemble_anthropic_sse, assemble_openai_sse, usage_anthropic, usage_openai,
};
use crate::sse::encode;
use bytes::Bytes;
use serde_json::{Value, json};

pub(super) fn openai_sse(chunks: &[Value], done: bool) -> Vec<Bytes> {
    let mut out: Vec<Bytes> = chunks
        .iter()
        .map(|c| encode(None, &c.to_string()))
        .collect();
    if done {
        out.push(Bytes::from_static(b"data: [DONE]\n\n"));
    }
    out
}

pub(super) fn anthropic_sse(events: &[Value]) -> Vec<Bytes> {
    events
        .iter()
        .map(|e| encode(e["type"].as_str(), &e.to_string()))
        .collect()
}

pub(super) fn openai_chunks() -> Vec<Value> {
    let c = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-9", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-x",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    vec![
        c(json!({"role": "assistant", "content": ""}), Value::Null),
        c(json!({"reasoning_content": "Plan: "}), Value::Null),
        c(json!({"reasoning_content": "look."}), Value::Null),
        c(json!({"content": "Héllo "}), Value::Null),
        c(json!({"content": "wörld"}), Value::Null),
        c(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "read", "arguments": ""}}]}),
            Value::Null,
        ),
        c(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"p\":"}}]}),
            Value::Null,
        ),
        c(
            json!({"tool_calls": [{"index": 1, "id": "call_2", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}),
            Value::Null,
        ),
        c(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}),
            Value::Null,
        ),
        c(json!({}), json!("tool_calls")),
        json!({"id": "chatcmpl-9", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-x", "choices": [],
               "usage": {"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20}}),
    ]
}

pub(super) fn anthropic_events() -> Vec<Value> {
    vec![
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-x", "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 10, "cache_read_input_tokens": 4, "output_tokens": 1}}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Hmm, "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "ok."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "SIG"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Héllo "}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "wörld"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"p\":"}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "1}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 30}}),
        json!({"type": "message_stop"}),
    ]
}

#[test]
fn assembles_openai() {
    let out = assemble_openai_sse(&openai_sse(&openai_chunks(), true)).unwrap();
    assert_eq!(
        out,
        json!({
            "id": "chatcmpl-9", "object": "chat.completion", "created": 1700000000, "model": "gpt-x",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "Héllo wörld", "reasoning_content": "Plan: look.",
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"p\":1}"}},
                    {"id": "call_2", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
                ]
            }}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20}
        })
    );
    assert_eq!(
        usage_openai(&out),
        TokenUsage {
            input_tokens: Some(12),
            output_tokens: Some(8),
            cache_read_tokens: None,
            cache_write_tokens: None,
        }
    );
}

#[test]
fn openai_cut_stream_is_incomplete_not_an_error() {
    let chunks = openai_chunks();
    let out = assemble_openai_sse(&openai_sse(&chunks[..5], false)).unwrap();
    assert_eq!(out["incomplete"], true);
    assert_eq!(out["choices"][0]["message"]["content"], "Héllo wörld");
    assert_eq!(out["choices"][0]["finish_reason"], Value::Null);
    assert!(out.get("usage").is_none());
    assert_eq!(usage_openai(&out), TokenUsage::default());

    let mut with_error = openai_sse(&chunks[..4], false);
    with_error.push(encode(
        None,
        r#"{"error":{"message":"upstream died","type":"server_error"}}"#,
    ));
    let out = assemble_openai_sse(&with_error).unwrap();
    assert_eq!(out["incomplete"], true);
    assert_eq!(out["error"]["message"], "upstream died");

    assert!(matches!(
        assemble_openai_sse(&[Bytes::from_static(b"data: [DONE]\n\n")]),
        Err(WireError::EmptyStream)
    ));
    assert!(matches!(
        assemble_openai_sse(&[Bytes::from_static(b"garbage")]),
        Err(WireError::EmptyStream)
    ));
}

#[test]
fn assembles_anthropic() {
    let out = assemble_anthropic_sse(&anthropic_sse(&anthropic_events())).unwrap();
    assert_eq!(
        out,
        json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
            "content": [
                {"type": "thinking", "thinking": "Hmm, ok.", "signature": "SIG"},
                {"type": "text", "text": "Héllo wörld"},
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"p": 1}}
            ],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 10, "cache_read_input_tokens": 4, "output_tokens": 30}
        })
    );
    assert_eq!(
        usage_anthropic(&out),
        TokenUsage {
            input_tokens: Some(14),
            output_tokens: Some(30),
            cache_read_tokens: Some(4),
            cache_write_tokens: None,
        }
    );
}

#[test]
fn anthropic_cut_or_failed_stream_keeps_what_arrived() {
    let events = anthropic_events();
    // Cut inside the tool input: the partial JSON is kept raw.
    let out = assemble_anthropic_sse(&anthropic_sse(&events[..13])).unwrap();
    assert_eq!(out["incomplete"], true);
    assert_eq!(out["content"][1]["text"], "Héllo wörld");
    assert_eq!(out["content"][2]["input"], json!({"_raw": "{\"p\":"}));
    assert_eq!(out["stop_reason"], Value::Null);

    let mut failed = anthropic_sse(&events[..10]);
    failed.extend(anthropic_sse(&[
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]));
    let out = assemble_anthropic_sse(&failed).unwrap();
    assert_eq!(out["incomplete"], true);
    assert_eq!(
        out["error"],
        json!({"type": "overloaded_error", "message": "Overloaded"})
    );
    assert_eq!(out["content"][1]["text"], "Héllo wörld");

    assert!(matches!(
        assemble_anthropic_sse(&[]),
        Err(WireError::EmptyStream)
    ));
}
