//! Read-only connections for the request path, pooled so concurrent turns do not queue
//! behind one connection and no turn pays for opening one.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use metaclaw_store::{Store, StoreError};

/// Idle connections kept; a burst may open more, which close when done, so the page caches
/// held between bursts stay bounded.
const MAX_IDLE: usize = 4;

#[derive(Clone)]
pub struct Readers {
    db: PathBuf,
    idle: Arc<Mutex<Vec<Store>>>,
}

impl Readers {
    pub fn new(db: PathBuf) -> Self {
        Readers {
            db,
            idle: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Runs `f` on a read-only connection. Blocking: call from a blocking thread.
    pub fn with<T>(&self, f: impl FnOnce(&Store) -> T) -> Result<T, StoreError> {
        let taken = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let store = match taken {
            Some(s) => s,
            None => Store::open_read_only(&self.db)?,
        };
        let out = f(&store);
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < MAX_IDLE {
            idle.push(store);
        }
        Ok(out)
    }

    /// Closes the idle connections (and frees their page caches); the next read opens one.
    pub fn release(&self) {
        let closed = std::mem::take(&mut *self.idle.lock().unwrap_or_else(PoisonError::into_inner));
        drop(closed);
    }
}
