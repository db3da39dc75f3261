//! The sentence-transformers folder layout: which files a model is made of.

use std::path::Path;

use crate::error::{EmbedError, Result};

pub const CONFIG: &str = "config.json";
pub const TOKENIZER: &str = "tokenizer.json";
pub const WEIGHTS: &str = "model.safetensors";
pub const POOLING: &str = "1_Pooling/config.json";
pub const SENTENCE_CONFIG: &str = "sentence_bert_config.json";

/// Without these a folder is not a model.
pub const REQUIRED: [&str; 3] = [CONFIG, TOKENIZER, WEIGHTS];

/// Read when present; the rest are kept so the installed folder stays a complete
/// sentence-transformers model. Anything else (ONNX, PyTorch copies of the weights) is left out.
pub const OPTIONAL: [&str; 6] = [
    POOLING,
    SENTENCE_CONFIG,
    "modules.json",
    "config_sentence_transformers.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
];

pub fn known_files() -> impl Iterator<Item = &'static str> {
    REQUIRED.into_iter().chain(OPTIONAL)
}

/// The first required file missing from `dir`, as an error naming it.
pub fn check(dir: &Path) -> Result<()> {
    for file in REQUIRED {
        if !dir.join(file).is_file() {
            return Err(EmbedError::MissingFile {
                dir: dir.to_path_buf(),
                file: file.to_string(),
            });
        }
    }
    Ok(())
}
