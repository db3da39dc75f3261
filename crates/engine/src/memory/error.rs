//! What the memory service's store work can fail with. Each keeps its source's message, as
//! the callers (status, the admin API, logs) have always shown it.

use metaclaw_memory::MemoryError;
use metaclaw_store::StoreError;

use crate::recorder::RecorderError;

#[derive(Debug, thiserror::Error)]
pub enum MemoryServiceError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// The recorder could not commit the session's queued turns before they were read.
    #[error(transparent)]
    Recorder(#[from] RecorderError),
    /// A blocking task panicked or was cancelled.
    #[error(transparent)]
    Task(#[from] tokio::task::JoinError),
}
