//! The per-turn query embedding, shared by skill and memory retrieval: one computation per
//! distinct query (cached), bounded by a short timeout, and `None` (so the turn is retrieved
//! lexically) when the model is not ready, fails or is late.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::source::{EmbedFailure, Embeddings, Priority};
use super::vector_cache::VectorCache;
use super::vector_math::normalise;

/// Distinct recent queries whose vectors are kept (64-3072 floats each, so at most ~6 MB).
const CACHE_ENTRIES: usize = 512;
/// A failing embeddings API would otherwise log on every turn.
const WARN_EVERY: Duration = Duration::from_secs(60);

pub struct QueryEmbedder {
    /// The source, with the per-turn timeout for an API.
    source: Embeddings,
    timeout: Duration,
    cache: Mutex<VectorCache>,
    last_warning: Mutex<Option<Instant>>,
}

impl QueryEmbedder {
    /// `timeout` is what a turn may wait for its query's vector.
    pub fn new(source: Embeddings, timeout: Duration) -> Self {
        QueryEmbedder {
            source: source.with_timeout(timeout),
            timeout,
            cache: Mutex::new(VectorCache::new(CACHE_ENTRIES)),
            last_warning: Mutex::new(None),
        }
    }

    /// The model whose vectors this returns (an index of another model cannot be compared);
    /// empty while the local model is not loaded.
    pub fn model(&self) -> String {
        self.source.model()
    }

    pub fn source(&self) -> &Embeddings {
        &self.source
    }

    /// The query's normalised vector, from the cache or the API.
    pub async fn vector(&self, query: &str) -> Option<Arc<[f32]>> {
        if query.trim().is_empty() {
            return None;
        }
        let key = VectorCache::key(query);
        if let Some(v) = self.lock_cache().get(&key) {
            return Some(v);
        }
        let input = [query.to_owned()];
        // An API's own timeout bounds the request; this one also bounds connecting, and the
        // local model on a busy machine.
        let call = self.source.embed(&input, Priority::Turn);
        let reply = match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok(mut vectors)) => vectors.pop().and_then(normalise),
            // Said once by the model's own status, not on every turn.
            Ok(Err(EmbedFailure::NotReady(_))) => return None,
            Ok(Err(e)) => {
                self.warn(&e.to_string());
                return None;
            }
            Err(_) => {
                let ms = self.timeout.as_millis();
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
                "query embedding failed; lexical retrieval for this turn"
            );
            return;
        }
        *last = Some(Instant::now());
        tracing::warn!(
            error,
            "query embedding failed; this turn (and any other until it recovers) gets lexically retrieved skills and memories"
        );
    }
}
