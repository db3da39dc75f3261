//! `/api/storage`: the database's size, what takes the space, the retention in force and its
//! last run; `POST /api/storage/retention` runs retention now, to the end.

use std::sync::Arc;

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};

use super::api_error::ApiError;
use super::routes::AdminState;
use crate::storage::{RetentionRun, StorageReport};

pub(super) fn router() -> Router<Arc<AdminState>> {
    Router::new()
        .route("/api/storage", get(report))
        .route("/api/storage/retention", post(run))
}

async fn report(State(state): State<Arc<AdminState>>) -> Result<Json<StorageReport>, ApiError> {
    Ok(Json(state.storage.report().await?))
}

/// Commits what the recorder holds first, so the run sees every turn recorded so far.
async fn run(State(state): State<Arc<AdminState>>) -> Result<Json<RetentionRun>, ApiError> {
    let recorder = state.recorder.clone();
    tokio::task::spawn_blocking(move || recorder.flush()).await??;
    Ok(Json(state.storage.run_now().await))
}
