//! Skill retrieval: pick the few skills that fit a query, or none.
//!
//! `tokenize` normalises text, `bm25` precomputes a BM25F index over a bank, and `select`
//! applies the thresholds, `always` pins and per-category caps that decide what is injected;
//! `standing` puts the user's learned one-sentence rules in every turn while they fit.
//! `fuse` does the same selection from cosine similarities (`embedding`) or from both
//! rankings fused (`hybrid`); `embed_text` is what a skill's vector is computed from.

mod bm25;
mod embed_text;
mod everyday;
mod fuse;
mod lessons;
mod select;
mod standing;
mod tokenize;

pub use bm25::Index;
pub use embed_text::{content_hash, embedding_text};
pub use fuse::{Fusion, RRF_K};
pub use select::{Hit, RetrievalConfig, Retriever};
pub use standing::{STANDING_TITLE, bullet as standing_bullet, is_rule};
pub use tokenize::{for_each_token, is_cjk, tokenize};
