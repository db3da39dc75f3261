//! A toy chat model's tokenizer files for tests of the trained-model path: a byte-level BPE
//! trained here on a small corpus, with the ChatML special tokens plus the tool-call and
//! thinking markers, and a Qwen-style chat template. Tests install it under a home's
//! `models/` directory (or serve it from the fake Hugging Face host) and script the fake
//! backend's completions with [`ToyModel::encode`].

use std::path::Path;

use anyhow::{Context, anyhow};
use serde_json::json;
use tokenizers::models::bpe::{BPE, BpeTrainerBuilder};
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::processors::PostProcessorWrapper;
use tokenizers::{AddedToken, Tokenizer, TokenizerBuilder};

use crate::fake_tinker::{FakeTinker, FakeTinkerOptions};

/// Special tokens, in id order from 0.
pub const SPECIAL: [&str; 7] = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
];

/// A Qwen3-style ChatML template: tools block in the system turn, tool calls as
/// `<tool_call>` JSON, tool results grouped in a user turn, thinking stripped from history
/// before the last user query, and the generation prompt.
pub const CHAT_TEMPLATE: &str = r##"{%- if messages | length == 0 %}{{ raise_exception('No messages provided.') }}{% endif %}
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

/// Text the BPE merges are learned from: chat, tool-call JSON and the template's own prose,
/// so rendered prompts stay a few hundred tokens long.
const CORPUS: [&str; 8] = [
    "You are a helpful assistant. What's the weather in Paris? It is 18°C and sunny.",
    "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}}",
    "You may call one or more functions to assist with the user query. Tools, tool calls and results.",
    "For each function call, return a json object with function name and arguments within XML tags",
    "Thanks! Let me think about it. The answer is short. Sure. Hello, how are you?",
    "system user assistant tool response <tools></tools> required properties description string object",
    "{\"name\": \"run\", \"arguments\": {\"cmd\": \"ls\"}} plan the list of files in the directory",
    "Please list the files. Done. That worked, thank you. Good answer, well done.",
];

const VOCAB_SIZE: usize = 600;

/// The toy model's tokenizer files and the ids tests need.
pub struct ToyModel {
    /// `tokenizer.json` as served by Hugging Face.
    pub tokenizer_json: Vec<u8>,
    /// `tokenizer_config.json` with `chat_template` and `eos_token`.
    pub tokenizer_config_json: Vec<u8>,
    /// Token ids are `0..vocab_size` (special tokens included).
    pub vocab_size: u32,
    pub im_end: u32,
    pub im_start: u32,
    pub endoftext: u32,
    tokenizer: Tokenizer,
}

impl std::fmt::Debug for ToyModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToyModel")
            .field("vocab_size", &self.vocab_size)
            .field("im_end", &self.im_end)
            .finish_non_exhaustive()
    }
}

/// Trains the tokenizer and writes the config; deterministic for a given corpus.
pub fn build() -> anyhow::Result<ToyModel> {
    let mut trainer = BpeTrainerBuilder::new()
        .vocab_size(VOCAB_SIZE)
        .min_frequency(1)
        .show_progress(false)
        .initial_alphabet(ByteLevel::alphabet().into_iter().collect())
        .special_tokens(SPECIAL.iter().map(|s| AddedToken::from(*s, true)).collect())
        .build();
    let mut trained = TokenizerBuilder::<
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
    .map_err(|e| anyhow!("building the toy tokenizer: {e}"))?;
    trained
        .train(&mut trainer, CORPUS.iter())
        .map_err(|e| anyhow!("training the toy tokenizer: {e}"))?;
    let text = trained
        .to_string(false)
        .map_err(|e| anyhow!("serialising the toy tokenizer: {e}"))?;
    let tokenizer_json = text.into_bytes();
    let tokenizer = Tokenizer::from_bytes(&tokenizer_json)
        .map_err(|e| anyhow!("reloading the toy tokenizer: {e}"))?;
    let id = |t: &str| {
        tokenizer
            .token_to_id(t)
            .with_context(|| format!("toy tokenizer lacks {t}"))
    };
    let config = json!({
        "chat_template": CHAT_TEMPLATE,
        "eos_token": "<|im_end|>",
        "pad_token": {"content": "<|endoftext|>", "special": true},
        "bos_token": null,
    });
    Ok(ToyModel {
        tokenizer_config_json: serde_json::to_vec_pretty(&config)?,
        vocab_size: u32::try_from(tokenizer.get_vocab_size(true))?,
        im_end: id("<|im_end|>")?,
        im_start: id("<|im_start|>")?,
        endoftext: id("<|endoftext|>")?,
        tokenizer_json,
        tokenizer,
    })
}

impl ToyModel {
    /// Writes `tokenizer.json` and `tokenizer_config.json` under
    /// `<home>/models/<model_id>/`, where the engine looks before downloading.
    pub fn install(&self, home: &Path, model_id: &str) -> anyhow::Result<()> {
        let dir = home.join("models").join(model_id);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("tokenizer.json"), &self.tokenizer_json)?;
        std::fs::write(
            dir.join("tokenizer_config.json"),
            &self.tokenizer_config_json,
        )?;
        Ok(())
    }

    /// Serves both files from the fake's Hugging Face host at
    /// `/hf/<model_id>/resolve/main/…`, for the download path.
    /// Options for a fake backend whose toy policy samples this tokenizer's ids and stops
    /// at `<|im_end|>`.
    pub fn fake_options(&self) -> FakeTinkerOptions {
        FakeTinkerOptions {
            vocab_size: self.vocab_size,
            eos_token: Some(self.im_end),
            ..FakeTinkerOptions::default()
        }
    }

    pub fn serve_on(&self, fake: &FakeTinker, model_id: &str) {
        for (name, bytes) in [
            ("tokenizer.json", &self.tokenizer_json),
            ("tokenizer_config.json", &self.tokenizer_config_json),
        ] {
            fake.put_hf_file(&format!("{model_id}/resolve/main/{name}"), bytes.clone());
        }
    }

    /// Token ids of `text`; special tokens written in the text map to their ids.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        self.tokenizer
            .encode(text, false)
            .map(|e| e.get_ids().to_vec())
            .unwrap_or_default()
    }

    /// Text of `ids`, special tokens kept.
    pub fn decode(&self, ids: &[u32]) -> String {
        self.tokenizer.decode(ids, false).unwrap_or_default()
    }

    /// The id of one token (special or learned), if the vocabulary has it.
    pub fn token_id(&self, token: &str) -> Option<u32> {
        self.tokenizer.token_to_id(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_specials_and_round_trips() -> anyhow::Result<()> {
        let toy = build()?;
        let text = "<think>plan</think>Sure.<tool_call>{\"name\":\"run\"}</tool_call><|im_end|>";
        let ids = toy.encode(text);
        assert_eq!(ids.last(), Some(&toy.im_end));
        assert!(ids.iter().all(|&i| i < toy.vocab_size));
        assert_eq!(toy.decode(&ids), text);
        let dir = tempfile::tempdir()?;
        toy.install(dir.path(), "Toy/toy-model")?;
        let cfg: serde_json::Value = serde_json::from_slice(&std::fs::read(
            dir.path()
                .join("models/Toy/toy-model/tokenizer_config.json"),
        )?)?;
        assert_eq!(cfg["eos_token"], "<|im_end|>");
        Ok(())
    }
}
