use crate::anthropic::{self, BlockDelta, Content, ContentBlock, StreamEvent};
use crate::openai::{self, ContentPart, MessageContent};
use crate::{Role, WireError};
use serde_json::{Value, json};

fn roundtrip_openai(v: Value) -> Value {
    let req: openai::ChatRequest = serde_json::from_value(v).unwrap();
    serde_json::to_value(&req).unwrap()
}

fn roundtrip_anthropic(v: Value) -> Value {
    let req: anthropic::MessagesRequest = serde_json::from_value(v).unwrap();
    serde_json::to_value(&req).unwrap()
}

#[test]
fn openai_unknown_fields_survive() {
    let v = json!({
        "model": "gpt",
        "messages": [
            {"role": "developer", "content": "be brief", "x_custom": 1},
            {"role": "user", "content": [
                {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}},
                {"type": "image_url", "image_url": {"url": "https://x/a.png", "detail": "low", "foo": true}},
                {"type": "input_audio", "input_audio": {"data": "AAA", "format": "wav"}}
            ]},
            {"role": "assistant", "content": null, "reasoning_content": "hmm",
             "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}, "index": 0}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok", "name": "f"},
            {"role": "critic", "content": "odd role"}
        ],
        "stream": true,
        "stream_options": {"include_usage": true, "other": 2},
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}, "strict": true}}],
        "tool_choice": "auto",
        "logprobs": true,
        "reasoning_effort": "high",
        "temperature": 1,
        "top_p": 0.9,
        "stop": ["a"],
        "user": "u"
    });
    let mut expected = v.clone();
    // Documented normalisation: explicit null on a typed optional field becomes absent.
    expected["messages"][2]
        .as_object_mut()
        .unwrap()
        .remove("content");
    assert_eq!(roundtrip_openai(v), expected);
}

#[test]
fn openai_parts_and_roles_are_typed() {
    let req: openai::ChatRequest = serde_json::from_value(json!({
        "model": "m",
        "messages": [
            {"role": "developer", "content": "s"},
            {"role": "function", "name": "f", "content": "r"},
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "file", "file": {}}]}
        ]
    }))
    .unwrap();
    assert_eq!(req.messages[0].role, Role::Developer);
    assert_eq!(req.messages[1].role, Role::Function);
    let Some(MessageContent::Parts(parts)) = &req.messages[2].content else {
        panic!("parts expected")
    };
    assert_eq!(parts[0].as_text(), Some("a"));
    assert!(matches!(&parts[1], ContentPart::Other(v) if v["type"] == "file"));
}

#[test]
fn object_arguments_are_accepted() {
    let req: openai::ChatRequest = serde_json::from_value(json!({
        "model": "m",
        "messages": [{"role": "assistant", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": {"path": "/tmp"}}}
        ]}]
    }))
    .unwrap();
    let calls = req.messages[0].tool_calls.as_ref().unwrap();
    assert_eq!(calls[0].function.arguments, r#"{"path":"/tmp"}"#);
    let chunk: openai::ChatChunk = serde_json::from_value(json!({
        "id": "x", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": {"a": 1}}}
        ]}}]
    }))
    .unwrap();
    let f = chunk.choices[0].delta.tool_calls.as_ref().unwrap()[0]
        .function
        .as_ref()
        .unwrap();
    assert_eq!(f.arguments.as_deref(), Some(r#"{"a":1}"#));
}

#[test]
fn anthropic_unknown_fields_and_blocks_survive() {
    let v = json!({
        "model": "claude",
        "max_tokens": 100,
        "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "hi", "citations": []},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAA"}},
                {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "doc"}}
            ]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "t", "signature": "sig"},
                {"type": "redacted_thinking", "data": "xx"},
                {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}},
                {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": [1, 2]}, "caller": {"type": "direct"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "r"}], "is_error": false}
            ]}
        ],
        "thinking": {"type": "enabled", "budget_tokens": 1000},
        "context_management": {"edits": []},
        "output_config": {"effort": "high"},
        "metadata": {"user_id": "{\"session_id\":\"abc\"}", "other": 1},
        "tools": [{"name": "f", "input_schema": {"type": "object"}, "defer_loading": true},
                  {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}],
        "tool_choice": {"type": "auto"},
        "top_k": 5
    });
    assert_eq!(roundtrip_anthropic(v.clone()), v);
    let req: anthropic::MessagesRequest = serde_json::from_value(v).unwrap();
    let Content::Blocks(blocks) = &req.messages[1].content else {
        panic!("blocks expected")
    };
    assert!(matches!(blocks[0], ContentBlock::Thinking { .. }));
    assert!(matches!(blocks[1], ContentBlock::RedactedThinking { .. }));
    assert!(matches!(&blocks[2], ContentBlock::Other(v) if v["type"] == "server_tool_use"));
    assert!(matches!(blocks[3], ContentBlock::ToolUse { .. }));
}

#[test]
fn stream_events_parse_and_keep_unknowns() {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude", "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 5, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "citations_delta", "citation": {}}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 3}}),
        json!({"type": "message_stop", "amazon-bedrock-invocationMetrics": {"inputTokenCount": 5}}),
        json!({"type": "ping"}),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        json!({"type": "brand_new_event", "x": 1}),
    ];
    for e in events {
        let ev: StreamEvent = serde_json::from_value(e.clone()).unwrap();
        assert_eq!(serde_json::to_value(&ev).unwrap(), e);
    }
    let ev: StreamEvent = serde_json::from_value(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "citations_delta", "citation": {}}})).unwrap();
    assert!(matches!(
        ev,
        StreamEvent::ContentBlockDelta {
            delta: BlockDelta::Other(_),
            ..
        }
    ));
    let ev: StreamEvent = serde_json::from_value(json!({"type": "brand_new_event"})).unwrap();
    assert!(matches!(ev, StreamEvent::Other(_)));
    assert_eq!(ev.name(), "brand_new_event");
}

#[test]
fn errors_name_the_path() {
    let body = br#"{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"},{"role":"user","content":"c"},{"role":"user","content":5}]}"#;
    let err = openai::ChatRequest::from_slice(body).unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("messages[3].content: "), "{msg}");
    assert!(
        msg.contains("expected a string or an array of parts"),
        "{msg}"
    );

    let body = br#"{"model":"m","messages":[{"role":"user","content":{"x":1}}]}"#;
    let msg = anthropic::MessagesRequest::from_slice(body)
        .unwrap_err()
        .to_string();
    assert!(msg.starts_with("messages[0].content: "), "{msg}");
    assert!(
        msg.contains("a string or an array of content blocks"),
        "{msg}"
    );

    let msg = openai::ChatRequest::from_slice(b"{not json")
        .unwrap_err()
        .to_string();
    assert!(msg.starts_with("body: "), "{msg}");
    let msg = openai::ChatRequest::from_slice(br#"{"model":"m"}"#)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("missing field `messages`"), "{msg}");
    assert!(matches!(
        openai::ChatRequest::from_slice(b"[]"),
        Err(WireError::Parse { .. })
    ));
}
