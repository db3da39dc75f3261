//! A small client for models called off the request path by background jobs (the skill
//! evolver, memory extraction, embeddings; judging later): which endpoint to use, one-shot
//! completions in either wire protocol, and OpenAI-style embeddings.
//!
//! Not the proxy: no streaming, no fallbacks, no translation. A background job that fails
//! records the error and tries again later.

pub mod calls;
mod complete;
mod embed;
mod endpoint;
pub(crate) mod error;
mod http;
pub mod pacing;
pub mod queued;
mod repair;

pub use complete::{Completion, complete, complete_for};
pub use embed::embed;
pub use endpoint::{
    DEFAULT_EMBEDDING_MODEL, EMBEDDING_KEY, EVOLVER_KEY, EXTRACTOR_KEY, Endpoint,
    embedding_endpoint, evolver_endpoint, extractor_endpoint,
};
pub use error::LlmError;
pub use repair::{Failure, complete_parsed};
