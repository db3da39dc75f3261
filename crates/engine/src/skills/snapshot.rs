//! What the hot path reads: the library, its lexical index and the generation, swapped
//! together so a turn never sees an index built from a different library. The semantic
//! index, when configured, joins the same snapshot later: it is slower to build and the
//! lexical one must not wait for it.

use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use metaclaw_skills::Library;
use metaclaw_skills::retrieval::{Hit, RetrievalConfig, Retriever};

use super::semantic::SemanticIndex;

pub struct Snapshot {
    pub library: Arc<Library>,
    pub retriever: Retriever,
    /// The persisted skill generation this library is (see [`super::generation`]).
    pub generation: u64,
    /// Set once, in place, when this library's vectors are in (see [`super::semantic`]).
    semantic: OnceLock<SemanticIndex>,
}

impl Snapshot {
    pub fn build(library: Arc<Library>, config: RetrievalConfig, generation: u64) -> Snapshot {
        let enabled: Vec<_> = library.enabled().cloned().collect();
        Snapshot {
            retriever: Retriever::new(&enabled, config),
            library,
            generation,
            semantic: OnceLock::new(),
        }
    }

    /// Lexical retrieval (the `template` mode, and the fallback of the others).
    pub fn retrieve(&self, query: &str) -> Vec<Hit> {
        self.retriever.retrieve(query)
    }

    /// The semantic index, once built for this library.
    pub fn semantic(&self) -> Option<&SemanticIndex> {
        self.semantic.get()
    }

    /// Attaches this library's semantic index; a second one is ignored.
    pub fn attach(&self, index: SemanticIndex) {
        let _ = self.semantic.set(index.bound_to(&self.retriever));
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

    /// Swaps `next` in and returns it, for work that completes it later.
    pub fn set(&self, next: Snapshot) -> Arc<Snapshot> {
        let next = Arc::new(next);
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Arc::clone(&next);
        next
    }
}
