//! The retrieval policy in force per scope: the configured one until adaptation or a person
//! changes it, then the stored one (`memory_policy`).
//!
//! The request path reads an in-process cache; an entry is reloaded from the database (one
//! indexed read) once it is [`FRESH_FOR`] old, so a change made by the CLI beside a running
//! engine takes effect within that time. The worker and the admin API update the cache as
//! they write.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use metaclaw_memory::{RetrievalPolicy, db};
use rusqlite::Connection;

use crate::config::{MemoryConfig, MemoryRetrieval};

const FRESH_FOR: Duration = Duration::from_secs(30);
/// Scopes are few (one per user or project); this only bounds a misbehaving client.
const MAX_SCOPES: usize = 1024;

pub struct Policies {
    base: Arc<RetrievalPolicy>,
    cache: Mutex<HashMap<String, (Arc<RetrievalPolicy>, Instant)>>,
}

impl Policies {
    pub fn new(base: RetrievalPolicy) -> Self {
        Policies {
            base: Arc::new(base),
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The configured policy, which every scope starts from.
    pub fn base(&self) -> &RetrievalPolicy {
        &self.base
    }

    /// The policy of `scope`, from the cache or `conn` (read-only use). A stored policy that
    /// cannot be read is logged and the configured one used, so a bad row never stops
    /// retrieval.
    pub fn get(&self, conn: &Connection, scope: &str) -> Arc<RetrievalPolicy> {
        if let Some((p, at)) = self.lock().get(scope)
            && at.elapsed() < FRESH_FOR
        {
            return Arc::clone(p);
        }
        let policy = match db::load_policy(conn, scope) {
            Ok(Some(p)) => Arc::new(p),
            Ok(None) => Arc::clone(&self.base),
            Err(e) => {
                tracing::warn!(scope, error = %e, "using the configured memory retrieval policy");
                Arc::clone(&self.base)
            }
        };
        self.put(scope, Arc::clone(&policy));
        policy
    }

    /// The cached policy of `scope` without touching the database (the configured one when
    /// none is cached).
    pub fn cached(&self, scope: &str) -> Arc<RetrievalPolicy> {
        self.lock()
            .get(scope)
            .map_or_else(|| Arc::clone(&self.base), |(p, _)| Arc::clone(p))
    }

    /// Records a policy just stored for `scope`.
    pub fn set(&self, scope: &str, policy: RetrievalPolicy) {
        self.put(scope, Arc::new(policy));
    }

    fn put(&self, scope: &str, policy: Arc<RetrievalPolicy>) {
        let mut cache = self.lock();
        if cache.len() >= MAX_SCOPES && !cache.contains_key(scope) {
            cache.clear();
        }
        cache.insert(scope.to_owned(), (policy, Instant::now()));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Arc<RetrievalPolicy>, Instant)>> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The cosine a unit needs to qualify by meaning with the local model: MiniLM-family models
/// put a question and the fact answering it at about 0.35-0.5 ("what is the puppy called?" to
/// "Biscuit is the family dog": 0.40) and unrelated sentences below 0.15, lower than the 0.5
/// tuned for providers' larger models.
pub const LOCAL_MIN_SIMILARITY: f32 = 0.35;

/// The configured policy: the defaults with `memory.max_injected_units` (1..=20, as the
/// earlier version validated it), `memory.profile_tokens` and, in the `hybrid` and `embedding` retrieval modes, the
/// semantic weights (and the local model's similarity floor when `local_model`).
pub fn configured(memory: &MemoryConfig, local_model: bool) -> RetrievalPolicy {
    let mut p = RetrievalPolicy {
        max_units: usize::try_from(memory.max_injected_units.clamp(1, 20)).unwrap_or(6),
        profile_tokens: usize::try_from(memory.profile_tokens)
            .unwrap_or(0)
            .min(metaclaw_memory::policy::MAX_PROFILE_TOKENS),
        ..RetrievalPolicy::default()
    };
    match semantic_mode(memory) {
        Some(MemoryRetrieval::Embedding) => {
            p.lexical_weight = 0.5;
            p.semantic_weight = 1.0;
        }
        Some(_) => p.semantic_weight = 0.5,
        None => return p,
    }
    if local_model {
        p.min_similarity = LOCAL_MIN_SIMILARITY;
    }
    p
}

/// The retrieval mode when it uses embeddings: `hybrid` or `embedding`, or `hybrid` when
/// only `memory.use_embeddings` is set.
pub fn semantic_mode(memory: &MemoryConfig) -> Option<MemoryRetrieval> {
    match memory.retrieval_mode {
        MemoryRetrieval::Keyword if memory.use_embeddings => Some(MemoryRetrieval::Hybrid),
        MemoryRetrieval::Keyword => None,
        mode => Some(mode),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metaclaw_store::Store;

    #[test]
    fn stored_policies_win_bad_ones_fall_back_and_changes_are_cached() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("m.db")).unwrap();
        let policies = Policies::new(RetrievalPolicy::default());
        assert_eq!(policies.get(store.connection(), "a").max_units, 6);
        let p = RetrievalPolicy {
            max_units: 9,
            ..RetrievalPolicy::default()
        };
        db::save_policy(store.connection_mut(), "b", &p, "test", 1).unwrap();
        assert_eq!(policies.get(store.connection(), "b").max_units, 9);
        store
            .connection()
            .execute("UPDATE memory_policy SET policy_json = 'oops'", [])
            .unwrap();
        let fresh = Policies::new(RetrievalPolicy::default());
        assert_eq!(fresh.get(store.connection(), "b").max_units, 6);
        fresh.set("b", p);
        assert_eq!(fresh.cached("b").max_units, 9);
        assert_eq!(fresh.cached("never").max_units, 6);
    }

    #[test]
    fn configuration_sets_units_and_semantic_weights() {
        let mut m = MemoryConfig {
            max_injected_units: 50,
            retrieval_mode: MemoryRetrieval::Keyword,
            ..MemoryConfig::default()
        };
        assert_eq!(configured(&m, true).max_units, 20);
        assert_eq!(configured(&m, true).semantic_weight, 0.0);
        assert_eq!(configured(&m, true).min_similarity, 0.5);
        m.use_embeddings = true;
        assert_eq!(semantic_mode(&m), Some(MemoryRetrieval::Hybrid));
        assert_eq!(configured(&m, false).semantic_weight, 0.5);
        assert_eq!(configured(&m, false).min_similarity, 0.5);
        assert_eq!(configured(&m, true).min_similarity, LOCAL_MIN_SIMILARITY);
        m.retrieval_mode = MemoryRetrieval::Embedding;
        assert_eq!(configured(&m, false).lexical_weight, 0.5);
        configured(&m, true).validate().unwrap();
        assert_eq!(
            semantic_mode(&MemoryConfig::default()),
            Some(MemoryRetrieval::Hybrid),
            "by meaning and words by default"
        );
    }
}
