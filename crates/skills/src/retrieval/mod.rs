//! Lexical skill retrieval: pick the few skills that fit a query, or none.
//!
//! `tokenize` normalises text, `bm25` precomputes a BM25F index over a bank, and `select`
//! applies the thresholds, `always` pins and per-category caps that decide what is injected.

mod bm25;
mod select;
mod tokenize;

pub use bm25::Index;
pub use select::{Hit, RetrievalConfig, Retriever};
pub use tokenize::{for_each_token, tokenize};
