use crate::anthropic::StreamEvent;
use crate::openai::ChatChunk;
use crate::translate::{AnthropicToOpenAiStream, OpenAiToAnthropicStream};
use serde_json::{Value, json};

fn run_o2a(chunks: &[Value]) -> Vec<Value> {
    let mut s = OpenAiToAnthropicStream::new("claude-alias".to_owned());
    let mut out = Vec::new();
    for c in chunks {
        let chunk: ChatChunk = serde_json::from_value(c.clone()).unwrap();
        out.extend(s.push(chunk));
    }
    out.extend(s.finish());
    assert!(s.finish().is_empty(), "finish is idempotent");
    out.iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect()
}

fn chunk(delta: Value, finish: Value) -> Value {
    json!({"id": "chatcmpl-7", "object": "chat.completion.chunk", "created": 1, "model": "gpt-x",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

fn msg_start(input: u64) -> Value {
    json!({"type": "message_start", "message": {"id": "chatcmpl-7", "type": "message", "role": "assistant",
        "content": [], "model": "claude-alias", "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input, "output_tokens": 0}}})
}

#[test]
fn openai_stream_to_anthropic_events() {
    let out = run_o2a(&[
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        chunk(json!({"reasoning_content": "Think"}), Value::Null),
        chunk(json!({"reasoning_content": "ing"}), Value::Null),
        chunk(json!({"content": "Hello"}), Value::Null),
        chunk(json!({"content": " world"}), Value::Null),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "read", "arguments": ""}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"p\":"}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_2", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
        json!({"id": "chatcmpl-7", "object": "chat.completion.chunk", "created": 1, "model": "gpt-x", "choices": [],
               "usage": {"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59, "prompt_tokens_details": {"cached_tokens": 10}}}),
    ]);
    let expected = vec![
        msg_start(0),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Think"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "ing"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Hello"}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": " world"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "call_1", "name": "read", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"p\":"}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "1}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use", "id": "call_2", "name": "ls", "input": {}}}),
        json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": "{}"}}),
        json!({"type": "content_block_stop", "index": 3}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
               "usage": {"input_tokens": 40, "output_tokens": 9, "cache_read_input_tokens": 10}}),
        json!({"type": "message_stop"}),
    ];
    assert_eq!(out, expected);
}

#[test]
fn openai_stream_without_finish_reason_or_usage() {
    let out = run_o2a(&[chunk(json!({"content": "partial"}), Value::Null)]);
    assert_eq!(
        out,
        vec![
            msg_start(0),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "partial"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 0}}),
            json!({"type": "message_stop"}),
        ]
    );
    // Nothing at all still gives a well-formed empty message.
    let out = run_o2a(&[]);
    assert_eq!(out[0]["type"], "message_start");
    assert_eq!(out.len(), 3);
}

#[test]
fn openai_stream_usage_in_first_chunk_and_text_after_tool() {
    let mut first = chunk(json!({"content": "a"}), Value::Null);
    first["usage"] = json!({"prompt_tokens": 7, "completion_tokens": 0, "total_tokens": 7});
    let out = run_o2a(&[
        first,
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f"}}]}),
            Value::Null,
        ),
        chunk(json!({"content": "b"}), json!("length")),
    ]);
    assert_eq!(out[0], msg_start(7));
    let kinds: Vec<(&str, Option<u64>)> = out
        .iter()
        .map(|e| (e["type"].as_str().unwrap(), e["index"].as_u64()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("message_start", None),
            ("content_block_start", Some(0)),
            ("content_block_delta", Some(0)),
            ("content_block_stop", Some(0)),
            ("content_block_start", Some(1)),
            ("content_block_stop", Some(1)),
            ("content_block_start", Some(2)),
            ("content_block_delta", Some(2)),
            ("content_block_stop", Some(2)),
            ("message_delta", None),
            ("message_stop", None),
        ]
    );
    assert_eq!(out[9]["delta"]["stop_reason"], "max_tokens");
    assert_eq!(out[9]["usage"]["input_tokens"], 7);
}

fn run_a2o(events: &[Value], include_usage: bool) -> Vec<Value> {
    let mut s = AnthropicToOpenAiStream::new(include_usage);
    let mut out = Vec::new();
    for e in events {
        let ev: StreamEvent = serde_json::from_value(e.clone()).unwrap();
        out.extend(s.push(ev));
    }
    out.extend(s.finish());
    out.iter()
        .map(|c| {
            let mut v = serde_json::to_value(c).unwrap();
            assert_eq!(v["id"], "chatcmpl-msg_01");
            assert_eq!(v["object"], "chat.completion.chunk");
            assert_eq!(v["model"], "claude-x");
            assert!(v["created"].as_u64().unwrap() > 0);
            let o = v.as_object_mut().unwrap();
            for k in ["id", "object", "model", "created"] {
                o.remove(k);
            }
            v
        })
        .collect()
}

/// The event sequence of the Messages streaming documentation (text, thinking, tool use).
fn anthropic_events() -> Vec<Value> {
    vec![
        json!({"type": "message_start", "message": {"id": "msg_01", "type": "message", "role": "assistant", "content": [], "model": "claude-x", "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 25, "output_tokens": 1, "cache_read_input_tokens": 5}}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQB"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Okay"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ""}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"location\":"}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": " \"SF\"}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 89}}),
        json!({"type": "message_stop"}),
    ]
}

fn choice(delta: Value, finish: Value) -> Value {
    json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

#[test]
fn anthropic_stream_to_openai_chunks() {
    let out = run_a2o(&anthropic_events(), true);
    assert_eq!(
        out,
        vec![
            choice(json!({"role": "assistant", "content": ""}), Value::Null),
            choice(json!({"reasoning_content": "Let me"}), Value::Null),
            choice(json!({"content": "Okay"}), Value::Null),
            choice(
                json!({"tool_calls": [{"index": 0, "id": "toolu_01", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}),
                Value::Null
            ),
            choice(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"location\":"}}]}),
                Value::Null
            ),
            choice(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": " \"SF\"}"}}]}),
                Value::Null
            ),
            choice(json!({}), json!("tool_calls")),
            json!({"choices": [], "usage": {"prompt_tokens": 30, "completion_tokens": 89, "total_tokens": 119, "prompt_tokens_details": {"cached_tokens": 5}}}),
        ]
    );
    let without = run_a2o(&anthropic_events(), false);
    assert_eq!(without.len(), 7);
}

#[test]
fn anthropic_stream_tool_index_counts_tools_only_and_errors_surface() {
    let events = vec![
        json!({"type": "message_start", "message": {"id": "msg_01", "model": "claude-x", "usage": {"input_tokens": 1, "output_tokens": 0}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "a", "name": "f", "input": {}}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "b", "name": "g", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{}"}}),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ];
    let out = run_a2o(&events, true);
    assert_eq!(out[1]["choices"][0]["delta"]["tool_calls"][0]["index"], 0);
    assert_eq!(out[2]["choices"][0]["delta"]["tool_calls"][0]["index"], 1);
    assert_eq!(out[3]["choices"][0]["delta"]["tool_calls"][0]["index"], 1);
    assert_eq!(
        out[4],
        json!({"choices": [], "error": {"message": "Overloaded", "type": "overloaded_error", "code": null}})
    );
    // finish(): the cut stream still ends with a finish reason and usage.
    assert_eq!(out[5], choice(json!({}), json!("tool_calls")));
    assert_eq!(out[6]["usage"]["prompt_tokens"], 1);
    assert_eq!(out.len(), 7);
}
