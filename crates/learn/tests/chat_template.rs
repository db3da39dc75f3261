//! A tokenizer trained in the test (byte-level BPE with ChatML special tokens) and a
//! Qwen-style chat template: rendered text, tool definitions, generation prompt, and
//! encode → decode round trips.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use metaclaw_e2e::toy_model;
use metaclaw_learn::tokenizer::{ChatTokenizer, TokenizerError};
use serde_json::{Map, Value, json};

/// The Qwen-style template and the trained test tokenizer are the ones the end-to-end tests
/// serve (`metaclaw_e2e::toy_model`).
const QWEN_TEMPLATE: &str = toy_model::CHAT_TEMPLATE;

fn train_tokenizer(dir: &Path) {
    let toy = toy_model::build().unwrap();
    std::fs::write(dir.join("tokenizer.json"), &toy.tokenizer_json).unwrap();
}

fn write_config(dir: &Path, template: &str) {
    let config = json!({
        "chat_template": template,
        "eos_token": "<|im_end|>",
        "pad_token": {"content": "<|endoftext|>", "special": true},
        "bos_token": null,
    });
    std::fs::write(
        dir.join("tokenizer_config.json"),
        serde_json::to_vec_pretty(&config).unwrap(),
    )
    .unwrap();
}

fn setup() -> (tempfile::TempDir, ChatTokenizer) {
    let dir = tempfile::tempdir().unwrap();
    train_tokenizer(dir.path());
    write_config(dir.path(), QWEN_TEMPLATE);
    let tok = ChatTokenizer::from_dir(dir.path()).unwrap();
    (dir, tok)
}

fn tools() -> Vec<Value> {
    vec![json!({
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    })]
}

fn conversation() -> Vec<Value> {
    vec![
        json!({"role": "system", "content": "You are terse."}),
        json!({"role": "user", "content": "What's the weather in Paris?"}),
        json!({"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]}),
        json!({"role": "tool", "tool_call_id": "call_1", "content": "18°C and sunny"}),
        json!({"role": "assistant", "content": "<think>\nIt is warm.\n</think>\n\nIt is 18°C."}),
        json!({"role": "user", "content": "Thanks!"}),
    ]
}

const EXPECTED: &str = "<|im_start|>system\nYou are terse.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Get the weather for a city\", \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": [\"city\"]}}}\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n<|im_start|>user\nWhat's the weather in Paris?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n18°C and sunny\n</tool_response><|im_end|>\n<|im_start|>assistant\nIt is 18°C.<|im_end|>\n<|im_start|>user\nThanks!<|im_end|>\n<|im_start|>assistant\n";

#[test]
fn renders_tools_calls_results_and_generation_prompt_like_transformers() {
    let (_dir, tok) = setup();
    let text = tok
        .render(&conversation(), Some(&tools()), true, &Map::new())
        .unwrap();
    assert_eq!(text, EXPECTED);
}

#[test]
fn encoding_round_trips_and_keeps_special_tokens_whole() {
    let (_dir, tok) = setup();
    let ids = tok
        .encode_chat(&conversation(), Some(&tools()), true, &Map::new())
        .unwrap();
    assert_eq!(tok.decode(&ids, false).unwrap(), EXPECTED);
    let start = tok.token_id("<|im_start|>").unwrap();
    let end = tok.token_id("<|im_end|>").unwrap();
    assert_eq!(
        ids.iter().filter(|t| **t == start).count(),
        EXPECTED.matches("<|im_start|>").count()
    );
    assert_eq!(
        ids.iter().filter(|t| **t == end).count(),
        EXPECTED.matches("<|im_end|>").count()
    );
    assert_eq!(
        ids.last(),
        tok.encode("\n").unwrap().last(),
        "ends with the generation prompt's newline"
    );
    assert_eq!(tok.eos_token(), Some("<|im_end|>"));
    assert!(tok.vocab_size() >= toy_model::SPECIAL.len() + 256);
    // Skipping special tokens removes exactly the markers.
    let plain = tok.decode(&ids, true).unwrap();
    assert!(!plain.contains("<|im_start|>") && plain.contains("What's the weather in Paris?"));
}

#[test]
fn without_tools_or_generation_prompt_and_with_extra_variables() {
    let (_dir, tok) = setup();
    let msgs = [
        json!({"role": "user", "content": "Hi"}),
        json!({"role": "assistant", "content": "Hello."}),
    ];
    let text = tok.render(&msgs, None, false, &Map::new()).unwrap();
    assert_eq!(
        text,
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>\n"
    );
    let mut extra = Map::new();
    extra.insert("enable_thinking".into(), json!(false));
    let text = tok.render(&msgs[..1], None, true, &extra).unwrap();
    assert_eq!(
        text,
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    );
}

#[test]
fn template_errors_are_reported() {
    let (_dir, tok) = setup();
    let err = tok.render(&[], None, true, &Map::new()).unwrap_err();
    assert!(matches!(err, TokenizerError::Template(_)));
    assert!(err.to_string().contains("No messages provided."), "{err}");

    let dir = tempfile::tempdir().unwrap();
    train_tokenizer(dir.path());
    write_config(dir.path(), "{% if %}");
    assert!(matches!(
        ChatTokenizer::from_dir(dir.path()).unwrap_err(),
        TokenizerError::Template(_)
    ));
}

#[test]
fn a_template_file_is_used_when_the_config_has_none_and_missing_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    train_tokenizer(dir.path());
    std::fs::write(
        dir.path().join("tokenizer_config.json"),
        r#"{"eos_token": "<|im_end|>"}"#,
    )
    .unwrap();
    let err = ChatTokenizer::from_dir(dir.path()).unwrap_err();
    assert!(matches!(err, TokenizerError::NoTemplate { .. }), "{err}");
    std::fs::write(
        dir.path().join("chat_template.jinja"),
        "{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}{{ eos_token }}",
    )
    .unwrap();
    let tok = ChatTokenizer::from_dir(dir.path()).unwrap();
    assert_eq!(
        tok.render(
            &[json!({"role": "user", "content": "x"})],
            None,
            false,
            &Map::new()
        )
        .unwrap(),
        "[user]x<|im_end|>"
    );

    let empty = tempfile::tempdir().unwrap();
    let err = ChatTokenizer::from_dir(empty.path()).unwrap_err();
    assert!(err.to_string().contains("tokenizer.json"), "{err}");
}

#[test]
fn qwen_style_regex_pre_tokenizer_loads_without_oniguruma() {
    // Qwen2/3 tokenizer.json split text with a look-ahead regex before byte-level BPE;
    // the pure-Rust regex engine the crate is built with must accept it.
    let (dir, _) = setup();
    let path = dir.path().join("tokenizer.json");
    let mut json: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    json["pre_tokenizer"] = json!({
        "type": "Sequence",
        "pretokenizers": [
            {
                "type": "Split",
                "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
                "behavior": "Isolated",
                "invert": false
            },
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}
        ]
    });
    std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
    let tok = ChatTokenizer::from_dir(dir.path()).unwrap();
    let ids = tok
        .encode_chat(&conversation(), Some(&tools()), true, &Map::new())
        .unwrap();
    assert_eq!(tok.decode(&ids, false).unwrap(), EXPECTED);
    // Runs of spaces go through the look-ahead branch and still round-trip.
    let spaced = tok.encode("a   b").unwrap();
    assert_eq!(tok.decode(&spaced, false).unwrap(), "a   b");
}
