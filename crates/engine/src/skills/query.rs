//! The per-turn side of semantic skill retrieval: the query's vector (see
//! [`QueryEmbedder`]) scored against the snapshot's index, and lexical retrieval for the
//! turn when anything is missing or late.

use std::sync::Arc;

use metaclaw_skills::retrieval::{Fusion, Hit};

use super::semantic::SemanticSetup;
use super::snapshot::Snapshot;
use crate::embeddings::QueryEmbedder;

pub struct SemanticQuery {
    /// Shared with memory retrieval, so a turn embeds its query once.
    embedder: Arc<QueryEmbedder>,
    pub fusion: Fusion,
    pub min_similarity: f32,
}

impl SemanticQuery {
    pub fn new(setup: &SemanticSetup, embedder: Arc<QueryEmbedder>) -> Self {
        SemanticQuery {
            embedder,
            fusion: setup.fusion,
            min_similarity: setup.min_similarity,
        }
    }

    /// The skills for this turn: fused when the snapshot has a semantic index and the query
    /// embeds in time, lexical otherwise.
    pub async fn retrieve(&self, snapshot: &Snapshot, query: &str) -> Vec<Hit> {
        match self.similar(snapshot, query).await {
            Some(similar) => {
                snapshot
                    .retriever
                    .retrieve_fused(query, &similar, self.fusion, self.min_similarity)
            }
            None => snapshot.retrieve(query),
        }
    }

    /// The query's cosine to every skill in `snapshot`'s index, by doc id; `None` when
    /// there is no index yet, nothing to embed, or the API failed or was too slow.
    pub async fn similar(&self, snapshot: &Snapshot, query: &str) -> Option<Vec<(u32, f32)>> {
        let index = snapshot.semantic()?;
        let model = self.embedder.model();
        if model.is_empty() || index.model != model {
            return None;
        }
        let vector = self.embedder.vector(query).await?;
        Some(index.similarities(&vector))
    }
}
