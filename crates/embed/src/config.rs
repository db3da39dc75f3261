//! The model's JSON configuration files.

use std::path::Path;

use serde::Deserialize;

use crate::error::{IoContext, Result, invalid};
use crate::layout;

/// The BERT fields of `config.json` the encoder needs.
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub vocab_size: usize,
    pub max_position_embeddings: usize,
    #[serde(default = "one")]
    pub type_vocab_size: usize,
    #[serde(default = "default_eps")]
    pub layer_norm_eps: f64,
    #[serde(default = "default_act")]
    pub hidden_act: String,
    #[serde(default)]
    pub position_embedding_type: Option<String>,
}

fn one() -> usize {
    1
}
fn default_eps() -> f64 {
    1e-12
}
fn default_act() -> String {
    "gelu".to_string()
}

impl BertConfig {
    pub fn read(dir: &Path) -> Result<Self> {
        let path = dir.join(layout::CONFIG);
        let config: Self = read_json(&path)?;
        if config.hidden_size == 0
            || config.num_attention_heads == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
        {
            return Err(invalid(
                path,
                "hidden_size must be a non-zero multiple of num_attention_heads",
            ));
        }
        if let Some(kind) = &config.position_embedding_type
            && kind != "absolute"
        {
            return Err(invalid(
                path,
                format!("position_embedding_type {kind:?} is not supported (only \"absolute\")"),
            ));
        }
        Ok(config)
    }
}

/// How token vectors become one sentence vector (`1_Pooling/config.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    Mean,
    Cls,
}

#[derive(Deserialize)]
struct PoolingFile {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    // Mean divided by sqrt(length) points the same way as the mean, and vectors are
    // normalised, so it is the mean here.
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
}

impl Pooling {
    /// Mean pooling when the file is absent: what sentence-transformers does for a bare model.
    pub fn read(dir: &Path) -> Result<Self> {
        let path = dir.join(layout::POOLING);
        if !path.is_file() {
            return Ok(Self::Mean);
        }
        let file: PoolingFile = read_json(&path)?;
        let mean = file.pooling_mode_mean_tokens || file.pooling_mode_mean_sqrt_len_tokens;
        match (
            file.pooling_mode_cls_token,
            mean,
            file.pooling_mode_max_tokens,
        ) {
            (false, true, false) => Ok(Self::Mean),
            (true, false, false) => Ok(Self::Cls),
            _ => Err(invalid(
                path,
                "only mean or CLS pooling (one of them) is supported",
            )),
        }
    }
}

#[derive(Deserialize)]
struct SentenceConfigFile {
    max_seq_length: Option<usize>,
}

/// The model's own input limit from `sentence_bert_config.json`, if it states one.
pub fn max_seq_length(dir: &Path) -> Result<Option<usize>> {
    let path = dir.join(layout::SENTENCE_CONFIG);
    if !path.is_file() {
        return Ok(None);
    }
    let file: SentenceConfigFile = read_json(&path)?;
    Ok(file.max_seq_length.filter(|&n| n > 0))
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let bytes = std::fs::read(path).at(path)?;
    serde_json::from_slice(&bytes).map_err(|e| invalid(path, e.to_string()))
}
