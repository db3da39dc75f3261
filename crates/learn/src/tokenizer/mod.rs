//! A model's tokenizer (`tokenizer.json`, loaded with the `tokenizers` crate) and chat
//! template (`chat_template` of `tokenizer_config.json`, or `chat_template.jinja`), used
//! to turn a conversation into the exact prompt token ids sent to the sampler.

mod download;
mod error;
mod pyjson;
mod template;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub use download::{HF_DEFAULT_BASE_URL, ModelSource, download_tokenizer, model_dir};
pub use error::TokenizerError;
pub use template::ChatTemplate;

/// The special-token names of `tokenizer_config.json` passed to templates.
const SPECIAL_NAMES: [&str; 4] = ["bos_token", "eos_token", "pad_token", "unk_token"];

pub struct ChatTokenizer {
    tokenizer: tokenizers::Tokenizer,
    template: ChatTemplate,
    eos_token: Option<String>,
}

impl std::fmt::Debug for ChatTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTokenizer")
            .field("eos_token", &self.eos_token)
            .finish_non_exhaustive()
    }
}

fn read(path: &Path) -> Result<String, TokenizerError> {
    std::fs::read_to_string(path).map_err(|source| TokenizerError::Io {
        path: path.to_owned(),
        source,
    })
}

/// A special token given as a string or as `{"content": …}`.
fn token_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("content").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    }
}

/// `chat_template` as a string, or the entry named `default` of a list of named templates.
fn template_source(config: &Value) -> Option<String> {
    match config.get("chat_template")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(list) => list
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some("default"))
            .and_then(|t| t.get("template"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        _ => None,
    }
}

impl ChatTokenizer {
    /// Loads `tokenizer.json`, `tokenizer_config.json` and (when the config has no
    /// template) `chat_template.jinja` from `dir`.
    pub fn from_dir(dir: &Path) -> Result<Self, TokenizerError> {
        let tok_path = dir.join("tokenizer.json");
        let tokenizer = tokenizers::Tokenizer::from_file(&tok_path).map_err(|e| {
            if tok_path.exists() {
                TokenizerError::Load {
                    path: tok_path.clone(),
                    detail: e.to_string(),
                }
            } else {
                TokenizerError::Io {
                    path: tok_path.clone(),
                    source: std::io::Error::new(std::io::ErrorKind::NotFound, "file not found"),
                }
            }
        })?;
        let cfg_path = dir.join("tokenizer_config.json");
        let config: Value =
            serde_json::from_str(&read(&cfg_path)?).map_err(|e| TokenizerError::Load {
                path: cfg_path.clone(),
                detail: e.to_string(),
            })?;
        let source = match template_source(&config) {
            Some(s) => s,
            None => {
                let jinja: PathBuf = dir.join("chat_template.jinja");
                if jinja.exists() {
                    read(&jinja)?
                } else {
                    return Err(TokenizerError::NoTemplate { path: cfg_path });
                }
            }
        };
        let mut special = Map::new();
        for name in SPECIAL_NAMES {
            if let Some(t) = config.get(name).and_then(token_text) {
                special.insert(name.to_owned(), Value::String(t));
            }
        }
        let eos_token = special
            .get("eos_token")
            .and_then(Value::as_str)
            .map(str::to_owned);
        Ok(Self {
            tokenizer,
            template: ChatTemplate::new(&source, special)?,
            eos_token,
        })
    }

    /// Renders the conversation with the model's chat template.
    pub fn render(
        &self,
        messages: &[Value],
        tools: Option<&[Value]>,
        add_generation_prompt: bool,
        extra: &Map<String, Value>,
    ) -> Result<String, TokenizerError> {
        self.template
            .render(messages, tools, add_generation_prompt, extra)
    }

    /// Token ids of `text`. Special-token markup in the text (`<|im_start|>`, …) becomes
    /// its token; nothing is added around it (the template already wrote every marker).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        self.tokenizer
            .encode(text, false)
            .map(|e| e.get_ids().to_vec())
            .map_err(|e| TokenizerError::Encode(e.to_string()))
    }

    /// Renders and encodes a prompt: the ids to sample from.
    pub fn encode_chat(
        &self,
        messages: &[Value],
        tools: Option<&[Value]>,
        add_generation_prompt: bool,
        extra: &Map<String, Value>,
    ) -> Result<Vec<u32>, TokenizerError> {
        self.encode(&self.render(messages, tools, add_generation_prompt, extra)?)
    }

    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String, TokenizerError> {
        self.tokenizer
            .decode(ids, skip_special_tokens)
            .map_err(|e| TokenizerError::Encode(e.to_string()))
    }

    /// The id of a token (special tokens included), e.g. `<|im_end|>`.
    pub fn token_id(&self, token: &str) -> Option<u32> {
        self.tokenizer.token_to_id(token)
    }

    /// The end-of-sequence token named in `tokenizer_config.json`.
    pub fn eos_token(&self) -> Option<&str> {
        self.eos_token.as_deref()
    }

    /// Vocabulary size, added tokens included.
    pub fn vocab_size(&self) -> usize {
        self.tokenizer.get_vocab_size(true)
    }
}
