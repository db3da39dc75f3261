//! Text to token ids with the model's own `tokenizer.json`.

use std::path::Path;

use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use crate::error::{EmbedError, Result, invalid};

pub struct TextTokenizer {
    inner: Tokenizer,
}

impl TextTokenizer {
    /// Loads the tokenizer, cutting inputs at `max_tokens` (special tokens included).
    pub fn load(path: &Path, max_tokens: usize) -> Result<Self> {
        let mut inner = Tokenizer::from_file(path).map_err(|e| invalid(path, e.to_string()))?;
        // Texts are never padded (each attends over its own tokens); padding set in the
        // file would only add tokens.
        inner.with_padding(None);
        inner
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
                direction: TruncationDirection::Right,
            }))
            .map_err(|e| invalid(path, e.to_string()))?;
        Ok(Self { inner })
    }

    /// Token ids of each text, special tokens added, truncated.
    pub fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>> {
        texts
            .iter()
            .map(|text| {
                self.inner
                    .encode(*text, true)
                    .map(|e| e.get_ids().to_vec())
                    .map_err(|e| EmbedError::Tokenize(e.to_string()))
            })
            .collect()
    }
}
