//! Normalising OpenAI / OpenClaw chat messages for a Hugging Face chat template, and
//! rendering the result through a Qwen-style template.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use metaclaw_learn::{normalize_messages, parse_reply};
use serde_json::{Map, Value, json};

fn one(message: Value) -> Value {
    let out = normalize_messages(&[message]);
    assert_eq!(out.len(), 1);
    out.into_iter().next().unwrap()
}

#[test]
fn developer_becomes_system() {
    assert_eq!(
        one(json!({"role": "developer", "content": "Be brief."})),
        json!({"role": "system", "content": "Be brief."})
    );
}

#[test]
fn openclaw_tool_results_become_tool_messages() {
    let out = one(json!({
        "role": "toolResult",
        "toolCallId": "call_7",
        "toolName": "exec",
        "content": [{"type": "text", "text": "a.txt"}, {"type": "text", "text": "b.txt"}],
        "isError": false,
    }));
    assert_eq!(
        out,
        json!({"role": "tool", "tool_call_id": "call_7", "name": "exec", "content": "a.txt\nb.txt", "isError": false})
    );
    // snake_case fields already present win.
    let out = one(
        json!({"role": "toolResult", "tool_call_id": "call_1", "toolCallId": "other", "content": "ok"}),
    );
    assert_eq!(
        out,
        json!({"role": "tool", "tool_call_id": "call_1", "content": "ok"})
    );
}

#[test]
fn content_arrays_are_flattened_and_null_content_is_empty() {
    let out = one(json!({"role": "user", "content": [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"type": "input_audio", "input_audio": {"data": "AAAA"}},
        "plain string part",
        {"type": "input_text", "text": "More."},
    ]}));
    assert_eq!(
        out["content"],
        json!("What is this?\n[image]\nplain string part\nMore.")
    );
    assert_eq!(
        one(json!({"role": "assistant", "content": null})),
        json!({"role": "assistant", "content": ""})
    );
    assert_eq!(
        one(json!({"role": "tool", "tool_call_id": "c"})),
        json!({"role": "tool", "tool_call_id": "c", "content": ""})
    );
}

#[test]
fn assistant_tool_calls_get_object_arguments() {
    let out = one(json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
            {"id": "call_b", "function": {"name": "exec", "arguments": {"command": "ls"}}},
            {"name": "read", "arguments": "not json"},
            "garbage entry",
            {"id": "call_d", "type": "function", "function": {"name": "now", "arguments": ""}},
        ],
    }));
    assert_eq!(
        out,
        json!({
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                {"id": "call_b", "type": "function", "function": {"name": "exec", "arguments": {"command": "ls"}}},
                {"id": "call_2", "type": "function", "function": {"name": "read", "arguments": "not json"}},
                {"id": "call_d", "type": "function", "function": {"name": "now", "arguments": {}}},
            ],
        })
    );
    // An empty or null list is no tool calls.
    assert_eq!(
        one(json!({"role": "assistant", "content": "Hi", "tool_calls": null})),
        json!({"role": "assistant", "content": "Hi"})
    );
}

#[test]
fn openclaw_tool_call_and_thinking_parts() {
    let out = one(json!({"role": "assistant", "content": [
        {"type": "thinking", "thinking": "List the files."},
        {"type": "text", "text": "Listing."},
        {"type": "toolCall", "id": "tc1", "name": "exec", "arguments": {"command": "ls"}},
    ]}));
    assert_eq!(
        out,
        json!({
            "role": "assistant",
            "content": "<think>\nList the files.\n</think>\n\nListing.",
            "tool_calls": [{"id": "tc1", "type": "function", "function": {"name": "exec", "arguments": {"command": "ls"}}}],
        })
    );
}

#[test]
fn reasoning_content_becomes_a_think_block() {
    let out = one(
        json!({"role": "assistant", "content": "It is 18°C.", "reasoning_content": " It is warm. "}),
    );
    assert_eq!(
        out,
        json!({"role": "assistant", "content": "<think>\nIt is warm.\n</think>\n\nIt is 18°C."})
    );
    // Already inline: not doubled; the field still goes.
    let inline = "<think>\nx\n</think>\n\nanswer";
    assert_eq!(
        one(json!({"role": "assistant", "content": inline, "reasoning_content": "x"})),
        json!({"role": "assistant", "content": inline})
    );
    // Blank reasoning adds nothing.
    assert_eq!(
        one(json!({"role": "assistant", "content": "a", "reasoning_content": "  "})),
        json!({"role": "assistant", "content": "a"})
    );
    // Only assistants carry reasoning into the prompt.
    assert_eq!(
        one(json!({"role": "user", "content": "q", "reasoning_content": "r"})),
        json!({"role": "user", "content": "q", "reasoning_content": "r"})
    );
}

#[test]
fn other_fields_and_non_objects_pass_through() {
    let out = normalize_messages(&[
        json!({"role": "user", "content": "hi", "name": "ana"}),
        json!("not a message"),
    ]);
    assert_eq!(
        out,
        [
            json!({"role": "user", "content": "hi", "name": "ana"}),
            json!("not a message")
        ]
    );
}

/// A conversation as an OpenClaw-style agent sends it: developer prompt, content parts,
/// string tool arguments, an OpenClaw tool result, and reasoning on the latest turn.
fn agent_conversation() -> Vec<Value> {
    vec![
        json!({"role": "developer", "content": [{"type": "text", "text": "You are terse."}]}),
        json!({"role": "user", "content": [{"type": "text", "text": "What's the weather in Paris?"}]}),
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
        ]}),
        json!({"role": "toolResult", "toolCallId": "call_1", "toolName": "get_weather", "content": [{"type": "text", "text": "18°C and sunny"}]}),
        json!({"role": "assistant", "content": "It is 18°C.", "reasoning_content": "It is warm."}),
    ]
}

#[test]
fn normalised_messages_render_through_a_qwen_template() {
    let (_dir, tok) = common::qwen::setup();
    let messages = normalize_messages(&agent_conversation());
    let text = tok.render(&messages, None, false, &Map::new()).unwrap();
    assert_eq!(
        text,
        "<|im_start|>system\nYou are terse.<|im_end|>\n\
         <|im_start|>user\nWhat's the weather in Paris?<|im_end|>\n\
         <|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>\n\
         <|im_start|>user\n<tool_response>\n18°C and sunny\n</tool_response><|im_end|>\n\
         <|im_start|>assistant\n<think>\nIt is warm.\n</think>\n\nIt is 18°C.<|im_end|>\n"
    );
    let ids = tok.encode_chat(&messages, None, true, &Map::new()).unwrap();
    assert!(
        tok.decode(&ids, false)
            .unwrap()
            .ends_with("<|im_start|>assistant\n")
    );
}

#[test]
fn a_rendered_assistant_turn_parses_back_to_the_same_message() {
    // What the model is trained to produce (the template's rendering of a turn) is what
    // the reply parser reads back.
    let (_dir, tok) = common::qwen::setup();
    let turn = json!({
        "role": "assistant",
        "content": "Checking.",
        "reasoning_content": "Need the weather.",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}],
    });
    let messages = normalize_messages(&[json!({"role": "user", "content": "Weather?"}), turn]);
    let text = tok.render(&messages, None, false, &Map::new()).unwrap();
    let completion = text.split("<|im_start|>assistant\n").nth(1).unwrap();
    let reply = parse_reply(completion, &["<|im_end|>"]);
    assert_eq!(reply.reasoning.as_deref(), Some("Need the weather."));
    assert_eq!(reply.content, "Checking.");
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(reply.tool_calls[0].name, "get_weather");
    assert_eq!(
        serde_json::from_str::<Value>(&reply.tool_calls[0].arguments).unwrap(),
        json!({"city": "Paris"})
    );
}
