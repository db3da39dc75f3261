//! What the hot path reads: the library, its lexical index and the generation, swapped
//! together so a turn never sees an index built from a different library.

use std::sync::{Arc, PoisonError, RwLock};

use metaclaw_skills::Library;
use metaclaw_skills::retrieval::{Hit, RetrievalConfig, Retriever};

pub struct Snapshot {
    pub library: Arc<Library>,
    pub retriever: Retriever,
    /// The persisted skill generation this library is (see [`super::generation`]).
    pub generation: u64,
}

impl Snapshot {
    pub fn build(library: Arc<Library>, config: RetrievalConfig, generation: u64) -> Snapshot {
        let enabled: Vec<_> = library.enabled().cloned().collect();
        Snapshot {
            retriever: Retriever::new(&enabled, config),
            library,
            generation,
        }
    }

    pub fn retrieve(&self, query: &str) -> Vec<Hit> {
        self.retriever.retrieve(query)
    }
}

/// The current snapshot; readers hold the lock only to clone an `Arc`.
#[derive(Clone)]
pub struct CurrentSkills(Arc<RwLock<Arc<Snapshot>>>);

impl CurrentSkills {
    pub fn new(first: Snapshot) -> Self {
        CurrentSkills(Arc::new(RwLock::new(Arc::new(first))))
    }

    pub fn get(&self) -> Arc<Snapshot> {
        Arc::clone(&self.0.read().unwrap_or_else(PoisonError::into_inner))
    }

    pub fn set(&self, next: Snapshot) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(next);
    }
}
