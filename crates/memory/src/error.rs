//! What memory operations can fail with.

/// Errors of the memory store and its callers.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("memory database error: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("no memory unit with id {0}")]
    NotFound(String),
    /// Optimistic concurrency: someone else changed the unit since the caller read it.
    #[error("memory unit changed meanwhile: expected version {expected}, found {found}")]
    Conflict { expected: u64, found: u64 },
    #[error("invalid memory request: {0}")]
    Invalid(String),
    #[error("memory i/o error: {0}")]
    Io(#[from] std::io::Error),
}
