//! The store from async code: each call opens its own connection and runs on the blocking
//! pool, so SQLite never blocks the runtime's workers. Generic over the caller's error type,
//! so the admin API gets its `ApiError` and the workers their own, each with `?`.

use std::path::PathBuf;

use metaclaw_store::{Store, StoreError};
use tokio::task::JoinError;

/// Runs `f` on a read-only connection to `db` (a missing database is an error, not created).
pub async fn read<T, E>(
    db: PathBuf,
    f: impl FnOnce(&Store) -> Result<T, E> + Send + 'static,
) -> Result<T, E>
where
    T: Send + 'static,
    E: From<StoreError> + From<JoinError> + Send + 'static,
{
    tokio::task::spawn_blocking(move || f(&Store::open_read_only(&db)?)).await?
}

/// Runs `f` on a read-write connection to `db` (created and migrated if needed).
pub async fn write<T, E>(
    db: PathBuf,
    f: impl FnOnce(&mut Store) -> Result<T, E> + Send + 'static,
) -> Result<T, E>
where
    T: Send + 'static,
    E: From<StoreError> + From<JoinError> + Send + 'static,
{
    tokio::task::spawn_blocking(move || f(&mut Store::open(&db)?)).await?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    enum TestError {
        #[error(transparent)]
        Store(#[from] StoreError),
        #[error(transparent)]
        Task(#[from] JoinError),
    }

    #[tokio::test]
    async fn a_write_is_read_back_and_a_missing_database_is_the_callers_error() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("metaclaw.db");

        let missing = read(db.clone(), |s| Ok::<_, TestError>(s.state_get("k")?)).await;
        assert!(matches!(missing, Err(TestError::Store(_))), "{missing:?}");
        assert!(!db.exists(), "a read must not create the database");

        write(db.clone(), |s| Ok::<_, TestError>(s.state_set("k", "v")?))
            .await
            .unwrap();
        let got = read(db.clone(), |s| Ok::<_, TestError>(s.state_get("k")?))
            .await
            .unwrap();
        assert_eq!(got.as_deref(), Some("v"));
    }
}
