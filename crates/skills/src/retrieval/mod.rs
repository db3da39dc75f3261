//! Skill retrieval: pick the few skills that fit a query, or none.
//!
//! `tokenize` normalises text, `bm25` precomputes a BM25F index over a bank, and `select`
//! applies the thresholds, `always` pins and per-category caps that decide what is injected.
//! `fuse` does the same selection from cosine similarities (`embedding`) or from both
//! rankings fused (`hybrid`); `embed_text` is what a skill's vector is computed from.

mod bm25;
mod embed_text;
mod everyday;
mod fuse;
mod lessons;
mod select;
mod tokenize;

pub use bm25::Index;
pub use embed_text::{content_hash, embedding_text};
pub use fuse::{Fusion, RRF_K};
pub use select::{Hit, RetrievalConfig, Retriever};
pub use tokenize::{for_each_token, tokenize};
