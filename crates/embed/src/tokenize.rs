//! Text to token ids with the model's own `tokenizer.json`.

use std::path::Path;

use candle_core::{Device, Tensor};
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use crate::error::{EmbedError, Result, invalid};

pub struct TextTokenizer {
    inner: Tokenizer,
    pad_id: u32,
}

impl TextTokenizer {
    /// Loads the tokenizer, cutting inputs at `max_tokens` (special tokens included).
    pub fn load(path: &Path, max_tokens: usize) -> Result<Self> {
        let mut inner = Tokenizer::from_file(path).map_err(|e| invalid(path, e.to_string()))?;
        // Padding is done per batch here; a fixed padding in the file would waste work.
        let pad_id = inner
            .get_padding()
            .map(|p| p.pad_id)
            .or_else(|| inner.token_to_id("[PAD]"))
            .or_else(|| inner.token_to_id("<pad>"))
            .unwrap_or(0);
        inner.with_padding(None);
        inner
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
                direction: TruncationDirection::Right,
            }))
            .map_err(|e| invalid(path, e.to_string()))?;
        Ok(Self { inner, pad_id })
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

    /// `[batch, longest]` ids padded with the pad token, and the matching 1/0 mask.
    pub fn batch(&self, rows: &[&[u32]]) -> candle_core::Result<(Tensor, Tensor)> {
        let longest = rows.iter().map(|r| r.len()).max().unwrap_or(0);
        let mut ids = Vec::with_capacity(rows.len() * longest);
        let mut mask = Vec::with_capacity(rows.len() * longest);
        for row in rows {
            ids.extend_from_slice(row);
            ids.extend(std::iter::repeat_n(self.pad_id, longest - row.len()));
            mask.extend(std::iter::repeat_n(1f32, row.len()));
            mask.extend(std::iter::repeat_n(0f32, longest - row.len()));
        }
        let shape = (rows.len(), longest);
        Ok((
            Tensor::from_vec(ids, shape, &Device::Cpu)?,
            Tensor::from_vec(mask, shape, &Device::Cpu)?,
        ))
    }
}
