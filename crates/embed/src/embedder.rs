//! The public model: load a folder, turn texts into unit vectors.

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use sha2::{Digest, Sha256};

use crate::background;
use crate::bert::{Bert, WORD_EMBEDDINGS};
use crate::checksum::hex;
use crate::config::{self, BertConfig, Pooling};
use crate::error::{IoContext, Result};
use crate::layout;
use crate::pool;
use crate::tokenize::TextTokenizer;
use crate::weights::Weights;

/// Longest input in tokens (special tokens included); the rest of a text is cut off.
/// Attention costs grow with the square of the length, and a sentence model's training
/// stopped at 128–256 tokens (sentence-transformers' own limit for all-MiniLM-L6-v2 is 256),
/// so longer inputs buy time and memory, not meaning. A model that states a lower limit
/// (`sentence_bert_config.json`, 128 for the multilingual default) or has fewer positions
/// gets that one.
pub const MAX_TOKENS: usize = 256;

/// Texts run through the encoder together; bounds the attention matrices' memory
/// (batch × heads × len² floats) however many texts one call passes.
const CHUNK: usize = 32;

/// Digits of the content hash in `model_id`: 48 bits tell models apart without a long id.
const ID_HEX_DIGITS: usize = 12;

/// A loaded sentence-embedding model. `Send + Sync`: share one behind an `Arc`. Embedding
/// is CPU work (milliseconds per short text, using every core): from async code, hand it to
/// the pool with [`spawn`](Self::spawn) (or call it through `spawn_blocking`).
pub struct Embedder {
    bert: Bert,
    /// Where [`embed_in_background`](Self::embed_in_background) runs.
    background: Option<rayon::ThreadPool>,
    tokenizer: TextTokenizer,
    pooling: Pooling,
    dimension: usize,
    max_tokens: usize,
    model_id: String,
}

impl Embedder {
    /// Loads a model folder in the sentence-transformers layout (`config.json`,
    /// `tokenizer.json`, `model.safetensors`, optionally `1_Pooling/config.json` and
    /// `sentence_bert_config.json`).
    pub fn load(dir: &Path) -> Result<Self> {
        layout::check(dir)?;
        let config = BertConfig::read(dir)?;
        let pooling = Pooling::read(dir)?;
        let max_tokens = [
            Some(MAX_TOKENS),
            config::max_seq_length(dir)?,
            Some(config.max_position_embeddings),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(MAX_TOKENS);

        let mut hasher = Sha256::new();
        for file in [
            layout::CONFIG,
            layout::TOKENIZER,
            layout::POOLING,
            layout::SENTENCE_CONFIG,
        ] {
            let path = dir.join(file);
            let bytes = if path.is_file() {
                std::fs::read(&path).at(&path)?
            } else {
                Vec::new()
            };
            hash_part(&mut hasher, file, &bytes);
        }
        hasher.update(layout::WEIGHTS.as_bytes());
        let mut weights = Weights::read(&dir.join(layout::WEIGHTS), &mut hasher, |name| {
            name.ends_with(WORD_EMBEDDINGS)
        })?;
        let bert = Bert::new(&config, &mut weights)?;
        drop(weights);
        let tokenizer = TextTokenizer::load(&dir.join(layout::TOKENIZER), max_tokens)?;

        let digest = hex(&hasher.finalize());
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".to_string());
        Ok(Self {
            bert,
            background: background::pool(),
            tokenizer,
            pooling,
            dimension: config.hidden_size,
            max_tokens,
            model_id: format!("{name}@{}", &digest[..ID_HEX_DIGITS]),
        })
    }

    /// One L2-normalised vector per text, in order. Texts longer than
    /// [`max_tokens`](Self::max_tokens) are cut.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        // On a worker of the current pool (the global one unless called from another): a
        // dense layer split in two then keeps one half on this thread, where from a thread
        // outside the pool each split was a hand-off of both halves and a wait.
        let done = AtomicBool::new(false);
        rayon::scope(|s| {
            // The pool's other workers stay awake for this call and take each layer's second
            // half as it is split. Asleep, every split woke one, and after an idle pause (a
            // question comes every few seconds, not back to back) those wake-ups cost what
            // the second core saved: with 10 ms between questions, 6.0 ms on two threads
            // against 6.1 on one; with the helpers, 4.7-4.8 ms.
            for _ in 1..rayon::current_num_threads() {
                s.spawn(|_| help_until(&done));
            }
            let _finished = Finished(&done);
            self.embed_here(texts)
        })
    }

    fn embed_here(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let ids = self.tokenizer.encode(texts)?;
        // Texts of similar lengths together: their attention matrices are alike in size.
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| ids[i].len());
        let mut out = vec![Vec::new(); ids.len()];
        for chunk in order.chunks(CHUNK) {
            let rows: Vec<&[u32]> = chunk.iter().map(|&i| ids[i].as_slice()).collect();
            let vectors = self.run(&rows)?;
            for (&i, v) in chunk.iter().zip(vectors) {
                out[i] = pool::normalize(v);
            }
        }
        Ok(out)
    }

    /// [`embed`](Self::embed) on the model's background thread, at the lowest CPU priority:
    /// for work no one waits for (indexing), so that a query embedded meanwhile through
    /// [`embed`](Self::embed) neither waits for a core nor queues behind it.
    pub fn embed_in_background(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        match &self.background {
            Some(pool) => pool.install(|| self.embed(texts)),
            None => self.embed(texts),
        }
    }

    /// Runs `job` with this model on a worker of rayon's global pool and returns at once; the
    /// job hands on its result itself (through a channel). There [`embed`](Self::embed) starts
    /// at once and keeps one half of each layer on its own thread. Called from a thread
    /// outside the pool (an async runtime's blocking thread), `embed` first hands itself to a
    /// worker and waits: a turn waited for two threads to wake before its question's work
    /// began, instead of one. A panic in `job` is caught (the default of a rayon spawn is to
    /// abort the process): the job ends, dropping what it holds, so its caller sees its
    /// channel closed.
    pub fn spawn(self: &Arc<Self>, job: impl FnOnce(&Embedder) + Send + 'static) {
        let model = Arc::clone(self);
        rayon::spawn(move || {
            if std::panic::catch_unwind(AssertUnwindSafe(|| job(&model))).is_err() {
                tracing::warn!("an embedding job panicked; its caller gets no vector");
            }
        });
    }

    /// [`embed`](Self::embed) for one text.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>> {
        Ok(self.embed(&[text])?.pop().unwrap_or_default())
    }

    /// Tokens the encoder sees for `text`: special tokens included, at most
    /// [`max_tokens`](Self::max_tokens) (a longer text is cut). Its cost grows with this.
    pub fn token_count(&self, text: &str) -> Result<usize> {
        Ok(self.tokenizer.encode(&[text])?.first().map_or(0, Vec::len))
    }

    /// Length of every vector.
    pub fn dimension(&self) -> usize {
        self.dimension
    }

    /// `<folder name>@<hash>`, the hash over the configuration, tokenizer and weights:
    /// vectors from models with different ids must not be compared.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Input limit in tokens, special tokens included.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    fn run(&self, rows: &[&[u32]]) -> Result<Vec<Vec<f32>>> {
        let (tokens, texts) = self.bert.forward(rows)?;
        let hidden = self.bert.hidden();
        Ok(texts
            .into_iter()
            .map(|t| {
                pool::pool(
                    &tokens[t.start * hidden..t.end * hidden],
                    hidden,
                    self.pooling,
                )
            })
            .collect())
    }
}

fn hash_part(hasher: &mut Sha256, name: &str, bytes: &[u8]) {
    hasher.update(name.as_bytes());
    hasher.update((bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

/// Runs the pool's pending work (the halves of this call's layers) until `done`, yielding
/// the core to other threads whenever there is none.
fn help_until(done: &AtomicBool) {
    while !done.load(Ordering::Acquire) {
        if rayon::yield_now() != Some(rayon::Yield::Executed) {
            std::thread::yield_now();
        }
    }
}

/// Sets its flag when dropped: the helpers stop however the call ends.
struct Finished<'a>(&'a AtomicBool);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}
