//! The per-turn side of semantic retrieval: embed the query within a short timeout (cached),
//! score it against the snapshot's index, and fall back to lexical retrieval for the turn
//! when anything is missing or late.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use metaclaw_skills::retrieval::{Fusion, Hit};

use super::semantic::{SemanticSetup, normalise};
use super::snapshot::Snapshot;
use super::vector_cache::VectorCache;
use crate::llm::{self, Endpoint};

/// Distinct recent queries whose vectors are kept (64-3072 floats each, so at most ~6 MB).
const CACHE_ENTRIES: usize = 512;
/// A failing embeddings API would otherwise log on every turn.
const WARN_EVERY: Duration = Duration::from_secs(60);

pub struct SemanticQuery {
    /// The embeddings API with the per-turn timeout.
    endpoint: Endpoint,
    http: reqwest::Client,
    pub fusion: Fusion,
    pub min_similarity: f32,
    cache: Mutex<VectorCache>,
    last_warning: Mutex<Option<Instant>>,
}

impl SemanticQuery {
    pub fn new(setup: &SemanticSetup) -> Self {
        let mut endpoint = setup.endpoint.clone();
        endpoint.timeout = setup.query_timeout;
        SemanticQuery {
            endpoint,
            http: setup.http.clone(),
            fusion: setup.fusion,
            min_similarity: setup.min_similarity,
            cache: Mutex::new(VectorCache::new(CACHE_ENTRIES)),
            last_warning: Mutex::new(None),
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

    /// The query's cosine to every skill in `snapshot`'s index; `None` when there is no
    /// index yet, nothing to embed, or the API failed or was too slow.
    pub async fn similar<'s>(
        &self,
        snapshot: &'s Snapshot,
        query: &str,
    ) -> Option<Vec<(&'s str, f32)>> {
        let index = snapshot.semantic()?;
        if query.trim().is_empty() || index.model != self.endpoint.model {
            return None;
        }
        let vector = self.vector(query).await?;
        Some(index.similarities(&vector))
    }

    /// The query's normalised vector, from the cache or the API.
    async fn vector(&self, query: &str) -> Option<Arc<[f32]>> {
        let key = VectorCache::key(query);
        if let Some(v) = self.lock_cache().get(&key) {
            return Some(v);
        }
        let input = [query.to_owned()];
        // The endpoint's timeout bounds the request; this one also bounds connecting and
        // anything else the client might wait on.
        let call = llm::embed(&self.http, &self.endpoint, &input);
        let reply = match tokio::time::timeout(self.endpoint.timeout, call).await {
            Ok(Ok(mut vectors)) => vectors.pop().and_then(normalise),
            Ok(Err(e)) => {
                self.warn(&e.to_string());
                return None;
            }
            Err(_) => {
                let ms = self.endpoint.timeout.as_millis();
                self.warn(&format!("no answer within {ms} ms"));
                return None;
            }
        };
        // A query with no usable vector is not cached: it is rare and may be transient.
        let vector: Arc<[f32]> = Arc::from(reply?);
        self.lock_cache().insert(key, Arc::clone(&vector));
        Some(vector)
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, VectorCache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn warn(&self, error: &str) {
        let mut last = self
            .last_warning
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if last.is_some_and(|t| t.elapsed() < WARN_EVERY) {
            tracing::debug!(
                error,
                "query embedding failed; lexical skills for this turn"
            );
            return;
        }
        *last = Some(Instant::now());
        tracing::warn!(
            error,
            "query embedding failed; this turn (and any other until it recovers) gets lexically retrieved skills"
        );
    }
}
