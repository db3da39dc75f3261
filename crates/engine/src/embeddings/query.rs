//! The per-turn query embedding, shared by skill and memory retrieval: one computation per
//! distinct query (cached), bounded by a short timeout, and `None` (so the turn is retrieved
//! lexically) when the model is not ready, fails or is late.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;

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
    /// Queries being embedded, so callers asking for the same one at once (a turn's skills
    /// and memory) share one computation.
    pending: Mutex<HashMap<String, Arc<Pending>>>,
    last_warning: Mutex<Option<Instant>>,
}

/// One query's vector while it is computed; `None` once done without one.
type Pending = OnceCell<Option<Arc<[f32]>>>;

impl QueryEmbedder {
    /// `timeout` is what a turn may wait for its query's vector.
    pub fn new(source: Embeddings, timeout: Duration) -> Self {
        QueryEmbedder {
            source: source.with_timeout(timeout),
            timeout,
            cache: Mutex::new(VectorCache::new(CACHE_ENTRIES)),
            pending: Mutex::new(HashMap::new()),
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

    /// The query's normalised vector, from the cache or the model. Concurrent calls for
    /// the same query wait for one computation.
    pub async fn vector(&self, query: &str) -> Option<Arc<[f32]>> {
        if query.trim().is_empty() {
            return None;
        }
        let key = VectorCache::key(query);
        if let Some(v) = self.lock_cache().get(&key) {
            return Some(v);
        }
        let pending = Arc::clone(
            self.lock_pending()
                .entry(key.clone())
                .or_insert_with(|| Arc::new(OnceCell::new())),
        );
        // A caller leaving (done, or dropped with its request) forgets the entry once the
        // vector is known or no one else waits, so the map holds only computations someone
        // still waits for.
        let _forget = Forget {
            pending: &self.pending,
            key: &key,
            cell: &pending,
        };
        pending
            .get_or_init(|| self.compute(query, &key))
            .await
            .clone()
    }

    async fn compute(&self, query: &str, key: &str) -> Option<Arc<[f32]>> {
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
        self.lock_cache()
            .insert(key.to_owned(), Arc::clone(&vector));
        Some(vector)
    }

    fn lock_pending(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Pending>>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
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

/// Removes a query's pending entry when its caller leaves, once its vector is known or no
/// one else waits for it (a newer entry of the same query is left alone).
struct Forget<'a> {
    pending: &'a Mutex<HashMap<String, Arc<Pending>>>,
    key: &'a str,
    cell: &'a Arc<Pending>,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        let settled = self.cell.initialized() || Arc::strong_count(self.cell) <= 2;
        if settled
            && pending
                .get(self.key)
                .is_some_and(|c| Arc::ptr_eq(c, self.cell))
        {
            pending.remove(self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::routing::post;
    use axum::{Json, Router};
    use serde_json::{Value, json};

    use super::*;
    use metaclaw_proxy::seams::Protocol;

    use crate::llm::Endpoint;

    /// An embeddings API counting its calls.
    async fn counting_api() -> (String, Arc<AtomicUsize>) {
        let calls = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&calls);
        let app = Router::new().route(
            "/v1/embeddings",
            post(move |Json(body): Json<Value>| {
                let seen = Arc::clone(&seen);
                async move {
                    seen.fetch_add(1, Ordering::SeqCst);
                    let n = body["input"].as_array().map_or(0, Vec::len);
                    let data: Vec<Value> = (0..n)
                        .map(|i| json!({"index": i, "embedding": [3.0, 4.0]}))
                        .collect();
                    Json(json!({ "data": data }))
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        // A fake provider for the test, not an engine task.
        #[allow(clippy::disallowed_methods)]
        tokio::spawn(async move { axum::serve(listener, app).await });
        (format!("http://{addr}/v1"), calls)
    }

    fn embedder(base: String) -> QueryEmbedder {
        let endpoint = Endpoint {
            protocol: Protocol::Openai,
            base_url: base,
            model: "m".into(),
            api_key: None,
            extra_headers: Vec::new(),
            timeout: Duration::from_secs(5),
        };
        let source = Embeddings::Api {
            endpoint,
            http: reqwest::Client::new(),
        };
        QueryEmbedder::new(source, Duration::from_secs(5))
    }

    #[tokio::test]
    async fn callers_asking_for_one_query_at_once_share_one_call() {
        let (base, calls) = counting_api().await;
        let q = embedder(base);
        // Polled in turn: the first is waiting for the API when the second asks.
        let (a, b) = tokio::join!(q.vector("log the stand-up"), q.vector("log the stand-up"));
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!(&*a, &[0.6, 0.8]);
        assert_eq!(a, b);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(q.lock_pending().is_empty(), "nothing left pending");
        // Cached afterwards; another query is another call.
        q.vector("log the stand-up").await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        q.vector("something else").await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_caller_that_gives_up_leaves_nothing_pending() {
        let (base, calls) = counting_api().await;
        let q = embedder(base);
        {
            let call = std::pin::pin!(q.vector("dropped"));
            // Started, then dropped before the API answered.
            assert!(futures_util::poll!(call).is_pending());
        }
        assert!(q.lock_pending().is_empty());
        assert!(q.vector("dropped").await.is_some());
        assert!(calls.load(Ordering::SeqCst) >= 1);
    }
}
