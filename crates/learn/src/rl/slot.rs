//! The serving sampler, swapped atomically after each training step.
//!
//! Readers clone the current [`Sampler`] (a cheap clone) and never wait for training: a
//! swap happens only once the new sampler is ready, so requests that started on the old
//! one finish on it and later requests use the new one.

use std::sync::Arc;

use tokio::sync::watch;

use crate::types::Sampler;

#[derive(Debug, Clone)]
pub struct SamplerSlot {
    tx: Arc<watch::Sender<Option<Sampler>>>,
}

impl SamplerSlot {
    pub fn new(initial: Option<Sampler>) -> Self {
        Self {
            tx: Arc::new(watch::Sender::new(initial)),
        }
    }

    /// The sampler to serve the next request with (`None` until one is ready).
    pub fn current(&self) -> Option<Sampler> {
        self.tx.borrow().clone()
    }

    /// Makes `sampler` the one new requests use; returns the previous one.
    pub fn replace(&self, sampler: Sampler) -> Option<Sampler> {
        self.tx.send_replace(Some(sampler))
    }

    /// Notified on every swap (for status displays).
    pub fn subscribe(&self) -> watch::Receiver<Option<Sampler>> {
        self.tx.subscribe()
    }
}
