//! Where vectors come from: the local model or a provider's embeddings API.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::local::{LocalModel, LocalState};
use crate::llm::{self, Endpoint, LlmError};

#[derive(Clone)]
pub enum Embeddings {
    /// An OpenAI-compatible `/embeddings` API (`skills.embedding_source: api`).
    Api {
        endpoint: Endpoint,
        http: reqwest::Client,
    },
    /// The model in `$METACLAW_HOME/models/embeddings/` (`skills.embedding_source: local`).
    Local(Arc<LocalModel>),
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedFailure {
    #[error(transparent)]
    Api(#[from] LlmError),
    /// Not downloaded or imported yet, or still loading: retrieval stays lexical.
    #[error("the local embedding model is not ready ({0})")]
    NotReady(String),
    #[error("the local embedding model failed: {0}")]
    Local(String),
    #[error("internal task failed: {0}")]
    Task(String),
}

/// Who waits for the vectors: the local model embeds a turn's query at once, and an index on
/// its background thread at the lowest CPU priority, so the one never waits for the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    Turn,
    Background,
}

/// `/api/status` → `embeddings`: what finds skills and memories by meaning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddingsStatus {
    /// `local` or `api`.
    pub source: String,
    /// The model whose vectors are in use; empty while the local model is not loaded.
    pub model: String,
    /// Whether retrieval by meaning is working now (else skills and memories are found by
    /// their words only).
    pub ready: bool,
    /// The local model's state (`missing`, `downloading`, `loading`, `ready`, `failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<LocalState>,
    /// One line for people: what works and, if not, what to do.
    pub line: String,
}

impl Embeddings {
    /// The id of the model whose vectors this gives; vectors of different ids are never
    /// compared. Empty while the local model is not loaded.
    pub fn model(&self) -> String {
        match self {
            Embeddings::Api { endpoint, .. } => endpoint.model.clone(),
            Embeddings::Local(local) => local.model_id().unwrap_or_default(),
        }
    }

    /// The same source, waiting at most `timeout` per API call (the local model is bounded by
    /// its own speed: milliseconds per short text).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        if let Embeddings::Api { endpoint, .. } = &mut self {
            endpoint.timeout = timeout;
        }
        self
    }

    /// One vector per input, in input order.
    pub async fn embed(
        &self,
        inputs: &[String],
        priority: Priority,
    ) -> Result<Vec<Vec<f32>>, EmbedFailure> {
        match self {
            Embeddings::Api { endpoint, http } => Ok(llm::embed(http, endpoint, inputs).await?),
            Embeddings::Local(local) => local.embed(inputs, priority).await,
        }
    }

    /// Returns once vectors can be computed (at once for an API; for the local model when it
    /// has loaded, which may be never).
    pub async fn ready(&self) {
        if let Embeddings::Local(local) = self {
            local.loaded().await;
        }
    }

    pub fn status(&self) -> EmbeddingsStatus {
        match self {
            Embeddings::Api { endpoint, .. } => EmbeddingsStatus {
                source: "api".into(),
                model: endpoint.model.clone(),
                ready: true,
                local: None,
                line: format!(
                    "by meaning through the embeddings API at {} ({})",
                    endpoint.base_url, endpoint.model
                ),
            },
            Embeddings::Local(local) => {
                let state = local.state();
                EmbeddingsStatus {
                    source: "local".into(),
                    model: local.model_id().unwrap_or_default(),
                    ready: matches!(state, LocalState::Ready { .. }),
                    line: state.line(local.name()),
                    local: Some(state),
                }
            }
        }
    }
}
