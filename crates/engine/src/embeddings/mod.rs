//! Embeddings for retrieval by meaning. One [`Embeddings`] source, the local model (the
//! default) or a provider's embeddings API, is shared by the skill index, the memory index and
//! the per-turn query ([`QueryEmbedder`]), so a turn embeds its query once.
//!
//! The local model runs in this process (`metaclaw-embed`): no provider call per query, and it
//! works with providers that have no embeddings endpoint. Until its weights are on disk and
//! loaded, every index stays lexical and `/api/status` says why.

mod local;
mod query;
mod source;
mod startup;
mod vector_cache;
mod vector_math;

pub use local::{LocalModel, LocalState};
pub use query::QueryEmbedder;
pub use source::{EmbedFailure, Embeddings, EmbeddingsStatus, Priority};
pub use startup::{MODELS_URL_ENV, models_url, prepare};
pub use vector_math::normalise;
