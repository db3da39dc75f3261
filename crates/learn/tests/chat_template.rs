//! A tokenizer trained in the test (byte-level BPE with ChatML special tokens) and a
//! Qwen-style chat template: rendered text, tool definitions, generation prompt, and
//! encode → decode round trips.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use metaclaw_learn::tokenizer::{ChatTokenizer, TokenizerError};
use serde_json::{Map, Value, json};
use tokenizers::models::bpe::{BPE, BpeTrainerBuilder};
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::processors::PostProcessorWrapper;
use tokenizers::{AddedToken, TokenizerBuilder};

const SPECIAL: [&str; 7] = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
];

/// A Qwen3-style ChatML template: tools block in the system turn, tool calls as
/// `<tool_call>` JSON, tool results grouped in a user turn, thinking stripped from history,
/// a namespace + reversed loop, `raise_exception`, and the generation prompt.
const QWEN_TEMPLATE: &str = r##"{%- if messages | length == 0 %}{{ raise_exception('No messages provided.') }}{% endif %}
{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0].role == 'system' %}
        {{- messages[0].content + '\n\n' }}
    {%- endif %}
    {{- "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0].role == 'system' %}
        {{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}
{%- for message in messages[::-1] %}
    {%- set index = (messages|length - 1) - loop.index0 %}
    {%- if ns.multi_step_tool and message.role == "user" and message.content is string and not(message.content.startswith('<tool_response>') and message.content.endswith('</tool_response>')) %}
        {%- set ns.multi_step_tool = false %}
        {%- set ns.last_query_index = index %}
    {%- endif %}
{%- endfor %}
{%- for message in messages %}
    {%- if message.content is string %}
        {%- set content = message.content %}
    {%- else %}
        {%- set content = '' %}
    {%- endif %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\n' + content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {%- if '</think>' in content %}
            {%- set reasoning = content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n') %}
            {%- set content = content.split('</think>')[-1].lstrip('\n') %}
        {%- else %}
            {%- set reasoning = '' %}
        {%- endif %}
        {%- if loop.index0 > ns.last_query_index and reasoning %}
            {{- '<|im_start|>' + message.role + '\n<think>\n' + reasoning.strip('\n') + '\n</think>\n\n' + content.lstrip('\n') }}
        {%- else %}
            {{- '<|im_start|>' + message.role + '\n' + content }}
        {%- endif %}
        {%- if message.tool_calls %}
            {%- for tool_call in message.tool_calls %}
                {%- if (loop.first and content) or (not loop.first) %}
                    {{- '\n' }}
                {%- endif %}
                {%- if tool_call.function %}
                    {%- set tool_call = tool_call.function %}
                {%- endif %}
                {{- '<tool_call>\n{"name": "' }}
                {{- tool_call.name }}
                {{- '", "arguments": ' }}
                {%- if tool_call.arguments is string %}
                    {{- tool_call.arguments }}
                {%- else %}
                    {{- tool_call.arguments | tojson }}
                {%- endif %}
                {{- '}\n</tool_call>' }}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if loop.first or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\n\n</think>\n\n' }}
    {%- endif %}
{%- endif %}"##;

const CORPUS: [&str; 6] = [
    "You are a helpful assistant. What's the weather in Paris? It is 18°C and sunny.",
    "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}}",
    "You may call one or more functions to assist with the user query. Tools, tool calls and results.",
    "For each function call, return a json object with function name and arguments within XML tags",
    "Thanks! Let me think about it. The answer is short.",
    "system user assistant tool response <tools></tools> required properties description string object",
];

fn train_tokenizer(dir: &Path) {
    let mut trainer = BpeTrainerBuilder::new()
        .vocab_size(600)
        .min_frequency(1)
        .show_progress(false)
        .initial_alphabet(ByteLevel::alphabet().into_iter().collect())
        .special_tokens(SPECIAL.iter().map(|s| AddedToken::from(*s, true)).collect())
        .build();
    let mut tokenizer = TokenizerBuilder::<
        BPE,
        NormalizerWrapper,
        ByteLevel,
        PostProcessorWrapper,
        ByteLevel,
    >::new()
    .with_model(BPE::default())
    .with_normalizer(None)
    .with_pre_tokenizer(Some(ByteLevel::default().add_prefix_space(false)))
    .with_post_processor(None)
    .with_decoder(Some(ByteLevel::default()))
    .build()
    .unwrap();
    tokenizer.train(&mut trainer, CORPUS.iter()).unwrap();
    tokenizer.save(dir.join("tokenizer.json"), false).unwrap();
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
    assert!(tok.vocab_size() >= SPECIAL.len() + 256);
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
