use crate::anthropic::MessagesResponse;
use crate::openai::ChatResponse;
use crate::translate::{anthropic_response_to_openai, openai_response_to_anthropic};
use serde_json::{Value, json};

fn o2a(v: Value) -> Value {
    let resp: ChatResponse = serde_json::from_value(v).unwrap();
    serde_json::to_value(openai_response_to_anthropic(resp)).unwrap()
}

fn a2o(v: Value) -> Value {
    let resp: MessagesResponse = serde_json::from_value(v).unwrap();
    let mut out = serde_json::to_value(anthropic_response_to_openai(resp)).unwrap();
    assert!(out["created"].as_u64().unwrap() > 0);
    out["created"] = json!(0);
    out
}

#[test]
fn openai_response_to_anthropic_with_tools_reasoning_and_cache() {
    let out = o2a(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-x",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "Let me look.", "reasoning_content": "thinking...",
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"p\":1}"}},
                {"id": "", "type": "function", "function": {"name": "bad", "arguments": "{oops"}}
            ]
        }}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
                  "prompt_tokens_details": {"cached_tokens": 60}}
    }));
    assert_eq!(
        out,
        json!({
            "id": "chatcmpl-1", "type": "message", "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "thinking...", "signature": ""},
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "call_1", "name": "read", "input": {"p": 1}},
                {"type": "tool_use", "id": "toolu_1", "name": "bad", "input": {"_raw": "{oops"}}
            ],
            "model": "gpt-x", "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 40, "output_tokens": 20, "cache_read_input_tokens": 60}
        })
    );
}

#[test]
fn openai_finish_reasons_map() {
    for (f, s) in [
        ("stop", "end_turn"),
        ("length", "max_tokens"),
        ("tool_calls", "tool_use"),
        ("function_call", "tool_use"),
        ("content_filter", "refusal"),
    ] {
        let out = o2a(json!({"id": "x", "model": "m", "choices": [
            {"index": 0, "finish_reason": f, "message": {"role": "assistant", "content": "hi"}}
        ]}));
        assert_eq!(out["stop_reason"], s, "{f}");
        assert_eq!(out["usage"], json!({"input_tokens": 0, "output_tokens": 0}));
    }
    // `stop` with tool calls (seen from some servers) still means tool use.
    let out = o2a(
        json!({"id": "x", "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}}]}),
    );
    assert_eq!(out["stop_reason"], "tool_use");
    assert_eq!(
        out["content"],
        json!([{"type": "tool_use", "id": "c", "name": "f", "input": {}}])
    );
}

#[test]
fn anthropic_response_to_openai_full() {
    let out = a2o(json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "redacted_thinking", "data": "zz"},
            {"type": "text", "text": "Sure. "},
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "toolu_9", "name": "read", "input": {"path": "x"}}
        ],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20}
    }));
    assert_eq!(
        out,
        json!({
            "id": "chatcmpl-msg_01", "object": "chat.completion", "created": 0, "model": "claude-x",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "Sure. Reading.", "reasoning_content": "hmm",
                "tool_calls": [{"id": "toolu_9", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"x\"}"}}]
            }}],
            "usage": {"prompt_tokens": 130, "completion_tokens": 5, "total_tokens": 135,
                      "prompt_tokens_details": {"cached_tokens": 100}}
        })
    );
}

#[test]
fn anthropic_stop_reasons_map() {
    for (s, f) in [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool_calls"),
        ("refusal", "content_filter"),
        ("pause_turn", "stop"),
    ] {
        let out = a2o(
            json!({"id": "m", "model": "c", "content": [{"type": "text", "text": "x"}],
            "stop_reason": s, "usage": {"input_tokens": 1, "output_tokens": 2}}),
        );
        assert_eq!(out["choices"][0]["finish_reason"], f, "{s}");
        assert!(out["usage"].get("prompt_tokens_details").is_none());
    }
}
