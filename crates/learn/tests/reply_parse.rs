//! Parsing a sampled completion (special tokens kept) into an OpenAI assistant message:
//! thinking, Qwen and Kimi tool calls, end markers, and the message shape.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;

use metaclaw_learn::{ParsedReply, parse_reply};
use serde_json::{Value, json};

const END: [&str; 2] = ["<|im_end|>", "<|endoftext|>"];

fn args(call: &metaclaw_learn::ToolCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap()
}

fn assert_call_id(id: &str) {
    let rest = id.strip_prefix("call_").unwrap_or_default();
    assert!(
        rest.len() >= 8 && rest.chars().all(|c| c.is_ascii_alphanumeric()),
        "{id}"
    );
}

#[test]
fn thinking_and_content() {
    let r = parse_reply(
        "<think>\nThe user greets.\n</think>\n\nHello!<|im_end|>",
        &END,
    );
    assert_eq!(r.reasoning.as_deref(), Some("The user greets."));
    assert_eq!(r.content, "Hello!");
    assert!(r.tool_calls.is_empty());
    assert_eq!(r.finish_reason("stop"), "stop");
}

#[test]
fn text_before_a_lone_closing_think_is_reasoning() {
    // The generation prompt opened `<think>`, so the completion starts inside it.
    let r = parse_reply("Plan: answer briefly.\n</think>\n\nSure.", &END);
    assert_eq!(r.reasoning.as_deref(), Some("Plan: answer briefly."));
    assert_eq!(r.content, "Sure.");
}

#[test]
fn empty_or_unclosed_thinking() {
    let r = parse_reply("<think>\n\n</think>\n\nJust the answer.", &END);
    assert_eq!(r.reasoning, None, "blank thinking is no reasoning");
    assert_eq!(r.content, "Just the answer.");

    // Cut off by the token limit while thinking: all of it is reasoning.
    let r = parse_reply("<think>Still considering the", &END);
    assert_eq!(r.reasoning.as_deref(), Some("Still considering the"));
    assert_eq!(r.content, "");
    assert_eq!(r.finish_reason("length"), "length");
}

#[test]
fn one_qwen_tool_call_with_content_around() {
    let text = "<think>Need the weather.</think>\nLet me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\nOne moment.<|im_end|>";
    let r = parse_reply(text, &END);
    assert_eq!(r.reasoning.as_deref(), Some("Need the weather."));
    assert_eq!(r.content, "Let me check.\n\nOne moment.");
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].name, "get_weather");
    assert_eq!(args(&r.tool_calls[0]), json!({"city": "Paris"}));
    assert_call_id(&r.tool_calls[0].id);
    assert_eq!(r.finish_reason("stop"), "tool_calls");
}

#[test]
fn two_qwen_tool_calls_get_distinct_ids_in_order() {
    let text = "Reading both.\n<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"b.txt\"}}\n</tool_call>";
    let r = parse_reply(text, &END);
    assert_eq!(r.content, "Reading both.");
    let paths: Vec<Value> = r
        .tool_calls
        .iter()
        .map(|c| args(c)["path"].clone())
        .collect();
    assert_eq!(paths, [json!("a.txt"), json!("b.txt")]);
    assert_ne!(r.tool_calls[0].id, r.tool_calls[1].id);
    // The same reply parsed again (a repeated call in a later turn) gets new ids.
    let again = parse_reply(text, &END);
    let ids: HashSet<&str> = r
        .tool_calls
        .iter()
        .chain(&again.tool_calls)
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(ids.len(), 4);
}

#[test]
fn function_style_json_and_name_variants() {
    let text = concat!(
        "<tool_call>{\"type\": \"function\", \"function\": {\"name\": \"exec\", \"arguments\": \"{\\\"command\\\": \\\"ls\\\"}\"}}</tool_call>",
        "<tool_call>{\"tool_name\": \"functions.read\", \"arguments\": {\"path\": \"x\"}}</tool_call>",
        "<tool_call>{\"name\": \"web_search\"}</tool_call>",
        "<tool_call>{\"name\": \"fetch\", \"parameters\": {\"url\": \"u\"}}</tool_call>",
    );
    let r = parse_reply(text, &END);
    let names: Vec<&str> = r.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["exec", "read", "web_search", "fetch"]);
    // A string holding a JSON object is kept as written.
    assert_eq!(r.tool_calls[0].arguments, "{\"command\": \"ls\"}");
    assert_eq!(args(&r.tool_calls[1]), json!({"path": "x"}));
    assert_eq!(args(&r.tool_calls[2]), json!({}), "no arguments");
    assert_eq!(args(&r.tool_calls[3]), json!({"url": "u"}));
    assert_eq!(r.content, "");
}

#[test]
fn unreadable_tool_calls_stay_in_the_content() {
    let invalid =
        "<tool_call>\n{\"name\": \"exec\", \"arguments\": {\"command\": \"ls\"}\n</tool_call>";
    let nameless = "<tool_call>{\"arguments\": {\"x\": 1}}</tool_call>";
    let bad_args = "<tool_call>{\"name\": \"exec\", \"arguments\": \"ls -la\"}</tool_call>";
    let valid = "<tool_call>{\"name\": \"read\", \"arguments\": {}}</tool_call>";
    let text = format!("Trying.\n{invalid}\n{nameless}\n{bad_args}\n{valid}");
    let r = parse_reply(&text, &END);
    assert_eq!(
        r.content,
        format!("Trying.\n{invalid}\n{nameless}\n{bad_args}")
    );
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].name, "read");

    // Cut off inside a call.
    let r = parse_reply("Running <tool_call>{\"name\": \"ex", &END);
    assert_eq!(r.content, "Running <tool_call>{\"name\": \"ex");
    assert!(r.tool_calls.is_empty());
}

#[test]
fn kimi_markers() {
    let text = "I will run it.<|tool_calls_section_begin|><|tool_call_begin|>functions.exec:0<|tool_call_argument_begin|>{\"command\": \"ls\"}<|tool_call_end|><|tool_call_begin|>functions.read:1<|tool_call_argument_begin|>{\"path\": \"a\"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>";
    let r = parse_reply(text, &END);
    assert_eq!(r.content, "I will run it.");
    let names: Vec<&str> = r.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["exec", "read"]);
    assert_eq!(args(&r.tool_calls[0]), json!({"command": "ls"}));
    assert_eq!(args(&r.tool_calls[1]), json!({"path": "a"}));
    for c in &r.tool_calls {
        assert_call_id(&c.id);
    }

    // An invalid Kimi call is kept with its markers; the section framing goes.
    let broken =
        "<|tool_call_begin|>functions.exec:0<|tool_call_argument_begin|>{oops<|tool_call_end|>";
    let r = parse_reply(
        &format!("<|tool_calls_section_begin|>{broken}<|tool_calls_section_end|>"),
        &END,
    );
    assert_eq!(r.content, broken);
    assert!(r.tool_calls.is_empty());
}

#[test]
fn tool_names_are_normalised() {
    let cases = [
        ("functions.exec:0", "exec"),
        ("functions_exec", "exec"),
        ("exec:12", "exec"),
        ("mcp.github.create_issue", "create_issue"),
        ("functions.read.0", "read"),
        (" write ", "write"),
    ];
    for (raw, want) in cases {
        let text = format!("<tool_call>{{\"name\": \"{raw}\", \"arguments\": {{}}}}</tool_call>");
        let r = parse_reply(&text, &END);
        assert_eq!(r.tool_calls.len(), 1, "{raw}");
        assert_eq!(r.tool_calls[0].name, want, "{raw}");
    }
    // Nothing but an index is no name: the block stays as text.
    let r = parse_reply("<tool_call>{\"name\": \"functions.0:1\"}</tool_call>", &END);
    assert!(r.tool_calls.is_empty());
    assert_eq!(
        r.content,
        "<tool_call>{\"name\": \"functions.0:1\"}</tool_call>"
    );
}

#[test]
fn end_markers_cut_the_text() {
    let r = parse_reply("Done.<|im_end|>\n<|endoftext|>", &END);
    assert_eq!(r.content, "Done.");
    let r = parse_reply("Done.</s>", &["</s>", ""]);
    assert_eq!(
        r.content, "Done.",
        "the eos token; an empty marker is ignored"
    );
    let r = parse_reply("Done.<|im_end|>", &[]);
    assert_eq!(r.content, "Done.<|im_end|>", "only the given markers");
}

#[test]
fn empty_reply() {
    for text in ["", "<|im_end|>", "  \n<|endoftext|>"] {
        let r = parse_reply(text, &END);
        assert_eq!(r, ParsedReply::default(), "{text:?}");
        assert_eq!(
            r.to_openai_message(),
            json!({"role": "assistant", "content": ""})
        );
    }
}

#[test]
fn openai_message_shape() {
    let r = parse_reply(
        "<think>Look it up.</think><tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call><|im_end|>",
        &END,
    );
    let msg = r.to_openai_message();
    let id = r.tool_calls[0].id.clone();
    assert_eq!(
        msg,
        json!({
            "role": "assistant",
            "content": null,
            "reasoning_content": "Look it up.",
            "tool_calls": [{
                "id": id,
                "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
            }],
        })
    );

    let r = parse_reply("Plain answer.", &END);
    assert_eq!(
        r.to_openai_message(),
        json!({"role": "assistant", "content": "Plain answer."})
    );
}
