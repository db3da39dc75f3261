//! The sample store: training samples and step metrics in MetaClaw's SQLite database,
//! shared by the serving path (inserts), the judge and the trainer.
//!
//! Queries are small and indexed, so they run inline under a mutex rather than on a
//! blocking thread.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use metaclaw_store::{
    BatchTake, FinishedStep, NewLearningStep, NewSample, SampleCounts, SampleRow, Store,
};

use crate::error::LearnError;

#[derive(Clone)]
pub struct SampleStore {
    store: Arc<Mutex<Store>>,
}

impl std::fmt::Debug for SampleStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SampleStore").finish_non_exhaustive()
    }
}

impl SampleStore {
    /// Opens (creating and migrating if needed) the database at `path`.
    pub fn open(path: &Path) -> Result<Self, LearnError> {
        Ok(Self::new(Store::open(path)?))
    }

    pub fn new(store: Store) -> Self {
        Self {
            store: Arc::new(Mutex::new(store)),
        }
    }

    /// Runs `f` on the store (for queries this wrapper does not name).
    pub fn with<R>(
        &self,
        f: impl FnOnce(&mut Store) -> Result<R, metaclaw_store::StoreError>,
    ) -> Result<R, LearnError> {
        let mut store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(f(&mut store)?)
    }

    /// Stores a sample; a completion whose logprobs do not match its tokens is refused.
    pub fn insert(&self, sample: &NewSample) -> Result<i64, LearnError> {
        self.with(|s| s.insert_sample(sample))
    }

    pub fn get(&self, id: i64) -> Result<Option<SampleRow>, LearnError> {
        self.with(|s| s.sample(id))
    }

    /// Attaches the turn that followed to the session's latest sample (the judge's
    /// evidence); returns that sample's id.
    pub fn record_next_turn(
        &self,
        session_id: &str,
        next_state: &str,
    ) -> Result<Option<i64>, LearnError> {
        self.with(|s| {
            let Some(id) = s.last_sample_of_session(session_id)? else {
                return Ok(None);
            };
            s.set_sample_next_state(id, next_state)?;
            Ok(Some(id))
        })
    }

    /// The session ended: its last turns are judged without a follow-up.
    pub fn end_session(&self, session_id: &str) -> Result<usize, LearnError> {
        self.with(|s| s.end_sample_session(session_id))
    }

    pub fn counts(&self) -> Result<SampleCounts, LearnError> {
        self.with(|s| s.sample_counts())
    }

    pub(crate) fn take_batch(
        &self,
        generation: i64,
        limit: u32,
        scored_only: bool,
    ) -> Result<BatchTake, LearnError> {
        self.with(|s| s.take_sample_batch(generation, limit, scored_only))
    }

    /// Marks the batch consumed and records its step, together.
    pub(crate) fn consume_with_step(
        &self,
        ids: &[i64],
        step: &NewLearningStep,
    ) -> Result<usize, LearnError> {
        self.with(|s| s.record_consumed_step(ids, step))
    }

    pub(crate) fn finish_step(&self, done: &FinishedStep) -> Result<(), LearnError> {
        self.with(|s| s.finish_learning_step(done))
    }
}
