//! Memory by meaning (`memory.retrieval_mode: hybrid | embedding`): one normalised vector per
//! active unit, computed by the memory worker in the background, cached in SQLite by content
//! hash (the table skills use too), and held per scope in memory for the request path.
//!
//! The request path never waits for unit vectors: a scope without an index yet is
//! retrieved lexically while the worker builds one. Only the query is embedded per turn,
//! once, shared with skills (see [`QueryEmbedder`]).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant, SystemTime};

use metaclaw_embed::QuantizedVectors;
use metaclaw_memory::db;
use metaclaw_skills::retrieval::content_hash;

use super::error::MemoryServiceError;
use crate::clock::unix_ms;
use crate::embeddings::{EmbedFailure, Embeddings, Priority, QueryEmbedder, normalise};
use crate::store_access;

/// Most units indexed per scope, the most recently edited first: 20,000 vectors of 1,536
/// dimensions (an API's largest) are 31 MB as 8-bit integers, and every question scans them
/// all. Older units stay retrievable by their words.
pub const MAX_INDEXED: u32 = 20_000;
/// Inputs per `/embeddings` call.
const BATCH: usize = 64;
/// Most vectors computed per refresh, so one refresh of a large imported memory does not
/// hold the worker for long; the next turn or search of the scope queues the next share.
const MAX_EMBEDDED_PER_REFRESH: usize = 1_024;
/// An index this old is rebuilt on the next turn of its scope (edits made by people or the
/// CLI get their vectors this way; extraction refreshes its scope at once).
const STALE_AFTER: Duration = Duration::from_secs(600);
/// Closest units handed to scoring per turn.
const NEAREST: usize = 32;

/// One scope's vectors, contiguous so a query is one pass over memory, and 8-bit so that
/// pass reads a quarter of the bytes ([`QuantizedVectors`]).
pub struct ScopeIndex {
    model: String,
    ids: Vec<String>,
    vectors: QuantizedVectors,
    built: Instant,
    /// Built while units were still waiting for their share of a refresh (a large import):
    /// the next turn or search continues at once rather than after [`STALE_AFTER`].
    partial: bool,
}

impl ScopeIndex {
    /// The `k` units closest to a normalised `query`, best first, as (id, cosine).
    pub fn nearest(&self, query: &[f32], k: usize) -> Vec<(String, f32)> {
        if k == 0 {
            return Vec::new();
        }
        let mut scored: Vec<(f32, usize)> = self
            .vectors
            .dots(query)
            .into_iter()
            .enumerate()
            .map(|(i, c)| (c, i))
            .collect();
        if scored.len() > k {
            scored.select_nth_unstable_by(k - 1, |a, b| b.0.total_cmp(&a.0));
            scored.truncate(k);
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored
            .into_iter()
            .map(|(c, i)| (self.ids[i].clone(), c))
            .collect()
    }
}

/// What a refresh did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Refreshed {
    pub indexed: usize,
    /// Vectors computed now (the rest came from the cache).
    pub embedded: usize,
    /// Units still without a vector (beyond this refresh's share, or refused by the API).
    pub missing: usize,
}

pub struct Vectors {
    /// The local model or the embeddings API with its long timeout, for units.
    source: Embeddings,
    db: PathBuf,
    query: Arc<QueryEmbedder>,
    indexes: RwLock<HashMap<String, Arc<ScopeIndex>>>,
    /// Scopes whose refresh is queued, so a busy scope asks once.
    requested: Mutex<HashSet<String>>,
}

impl Vectors {
    pub fn new(source: Embeddings, db: PathBuf, query: Arc<QueryEmbedder>) -> Self {
        Vectors {
            source,
            db,
            query,
            indexes: RwLock::new(HashMap::new()),
            requested: Mutex::new(HashSet::new()),
        }
    }

    pub fn index(&self, scope: &str) -> Option<Arc<ScopeIndex>> {
        self.indexes
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(scope)
            .cloned()
    }

    /// Scopes with an index, to refresh after changes made outside extraction.
    pub fn indexed_scopes(&self) -> Vec<String> {
        self.indexes
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect()
    }

    /// True once per missing or stale index until [`Self::refresh`] runs: the caller then
    /// queues a refresh. An index built before the local model loaded (or of another model)
    /// is stale at once.
    pub fn wants_refresh(&self, scope: &str) -> bool {
        let model = self.source.model();
        let fresh = self
            .index(scope)
            .is_some_and(|i| !i.partial && i.built.elapsed() < STALE_AFTER && i.model == model);
        !fresh && self.lock_requested().insert(scope.to_owned())
    }

    /// Undoes [`Self::wants_refresh`] when the refresh could not be queued, so a later turn
    /// asks again.
    pub fn refresh_not_queued(&self, scope: &str) {
        self.lock_requested().remove(scope);
    }

    /// Whether `scope` has an index of the query's model (so [`Self::similar`] can answer).
    pub fn searchable(&self, scope: &str) -> bool {
        self.usable_index(scope).is_some()
    }

    fn usable_index(&self, scope: &str) -> Option<Arc<ScopeIndex>> {
        let model = self.query.model();
        self.index(scope)
            .filter(|i| !model.is_empty() && i.model == model)
    }

    /// The units of `scope` closest to `query`, or `None` (retrieve lexically) when the
    /// scope has no index yet, its model is not the query's, or the query did not embed in
    /// time. The scan runs on the caller's thread, as skills' does: 20,000 vectors of 384
    /// dimensions take about 0.2 ms with AVX-512 VNNI (0.7 ms without), where handing them to
    /// a blocking thread cost 0.26 ms p50 and up to 0.6 ms p99 in the library bench before
    /// the scan began.
    pub async fn similar(&self, scope: &str, query: &str) -> Option<Vec<(String, f32)>> {
        let index = self.usable_index(scope)?;
        let vector = self.query.vector(query).await?;
        Some(index.nearest(&vector, NEAREST))
    }

    /// Rebuilds `scope`'s index: cached vectors are read, missing ones computed (at most
    /// [`MAX_EMBEDDED_PER_REFRESH`]) and saved batch by batch, so a failure loses nothing
    /// done before it. Errors of the embeddings API are logged and leave those units
    /// without a vector until the next refresh; only a database failure is returned.
    pub async fn refresh(&self, scope: &str) -> Result<Refreshed, MemoryServiceError> {
        self.lock_requested().remove(scope);
        let model = self.source.model();
        let (db_path, scope_name, m) = (self.db.clone(), scope.to_owned(), model.clone());
        let (ids, texts, hashes, mut vectors) = store_access::write(db_path, move |store| {
            let units = db::active_in_scope(store.connection(), &scope_name, None, MAX_INDEXED)?;
            let mut out = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for u in units {
                let hash = content_hash(&u.content);
                out.3.push(store.embedding(&hash, &m)?);
                out.0.push(u.id);
                out.1.push(u.content);
                out.2.push(hash);
            }
            Ok::<_, MemoryServiceError>(out)
        })
        .await?;
        let missing: Vec<usize> = (0..ids.len()).filter(|&i| vectors[i].is_none()).collect();
        let mut embedded = 0;
        let mut failure = None;
        let mut partial = false;
        for chunk in missing.chunks(BATCH) {
            if embedded >= MAX_EMBEDDED_PER_REFRESH {
                partial = true;
                break;
            }
            let inputs: Vec<String> = chunk.iter().map(|&i| texts[i].clone()).collect();
            let got = match self.source.embed(&inputs, Priority::Background).await {
                Ok(got) => got,
                // Said once by the model's own status; the index is rebuilt when it loads.
                Err(EmbedFailure::NotReady(_)) => break,
                Err(e) => {
                    failure = Some(e.to_string());
                    break;
                }
            };
            let rows: Vec<(String, Vec<f32>)> =
                chunk.iter().map(|&i| hashes[i].clone()).zip(got).collect();
            let (db_path, m) = (self.db.clone(), model.clone());
            let rows = store_access::write(db_path, move |store| {
                let now = unix_ms(SystemTime::now());
                for (hash, v) in &rows {
                    store.put_embedding(hash, &m, v, now)?;
                }
                Ok::<_, MemoryServiceError>(rows)
            })
            .await?;
            embedded += rows.len();
            for (&i, (_, v)) in chunk.iter().zip(rows) {
                vectors[i] = Some(v);
            }
        }
        if let Some(e) = &failure {
            // Published anyway (with what the cache had): the next attempt comes when this
            // index is stale, not on every turn.
            tracing::warn!(scope, error = %e, "memory embeddings unavailable; units without a vector are found by their words only");
        }
        let mut index = ScopeIndex {
            model,
            ids: Vec::with_capacity(ids.len()),
            vectors: QuantizedVectors::new(),
            built: Instant::now(),
            partial,
        };
        let mut still_missing = 0;
        for (id, v) in ids.into_iter().zip(vectors) {
            // A zero vector, one the API left out, or one of another length stays lexical.
            match v.and_then(normalise) {
                Some(v) if index.vectors.push(&v) => index.ids.push(id),
                _ => still_missing += 1,
            }
        }
        let done = Refreshed {
            indexed: index.ids.len(),
            embedded,
            missing: still_missing,
        };
        self.indexes
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(scope.to_owned(), Arc::new(index));
        Ok(done)
    }

    fn lock_requested(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.requested
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quantized(vectors: &[&[f32]]) -> QuantizedVectors {
        let mut q = QuantizedVectors::new();
        for v in vectors {
            assert!(q.push(v));
        }
        q
    }

    #[test]
    fn nearest_returns_the_closest_first_and_ignores_other_lengths() {
        let index = ScopeIndex {
            model: "m".into(),
            ids: vec!["a".into(), "b".into(), "c".into()],
            vectors: quantized(&[&[1.0, 0.0], &[0.0, 1.0], &[0.6, 0.8]]),
            built: Instant::now(),
            partial: false,
        };
        let near = index.nearest(&[0.0, 1.0], 2);
        assert_eq!(near.len(), 2);
        assert_eq!(near[0].0, "b");
        assert_eq!(near[1].0, "c");
        assert!((near[1].1 - 0.8).abs() < 0.01);
        assert_eq!(index.nearest(&[0.0, 1.0], 10).len(), 3);
        assert!(index.nearest(&[1.0], 2).is_empty());
    }

    #[test]
    fn a_partial_index_or_one_of_another_model_is_refreshed_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let source = Embeddings::Local(crate::embeddings::LocalModel::new(
            dir.path().to_path_buf(),
            "absent",
        ));
        let query = Arc::new(QueryEmbedder::new(source.clone(), Duration::from_secs(1)));
        let v = Vectors::new(source, dir.path().join("m.db"), query);
        let put = |partial: bool, model: &str| {
            v.indexes.write().unwrap().insert(
                "s".into(),
                Arc::new(ScopeIndex {
                    model: model.into(),
                    ids: vec![],
                    vectors: QuantizedVectors::new(),
                    built: Instant::now(),
                    partial,
                }),
            );
        };
        // Built with the model not loaded yet (empty id), and it still is not: fresh.
        put(false, "");
        assert!(!v.wants_refresh("s"));
        put(true, "");
        assert!(v.wants_refresh("s"), "a share of a large refresh is left");
        assert!(!v.wants_refresh("s"), "queued once until it runs");
        v.refresh_not_queued("s");
        put(false, "another-model@1234");
        assert!(v.wants_refresh("s"), "vectors of another model");
    }
}
