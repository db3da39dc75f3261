//! `GET /api/embeddings`: what skills and memories are found by meaning with, and whether it
//! works now; `POST /api/embeddings/reload`: look for the local model again (after
//! `metaclaw models import` or `download`), so a running engine picks it up at once.

use std::sync::Arc;

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};

use super::api_error::ApiError;
use super::routes::AdminState;
use crate::embeddings::{Embeddings, EmbeddingsStatus};

pub fn router() -> Router<Arc<AdminState>> {
    Router::new()
        .route("/api/embeddings", get(show))
        .route("/api/embeddings/reload", post(reload))
}

fn source(state: &AdminState) -> Result<&Embeddings, ApiError> {
    state.embeddings.as_ref().ok_or_else(|| {
        ApiError::Conflict(
            "retrieval by meaning is off (skills.retrieval_mode template and memory.retrieval_mode keyword, or skills and memory off)".into(),
        )
    })
}

async fn show(State(state): State<Arc<AdminState>>) -> Result<Json<EmbeddingsStatus>, ApiError> {
    Ok(Json(source(&state)?.status()))
}

/// Loads the local model if it is installed and not loaded yet; answers the status after.
/// A model that does not load is reported in the status, not as an error of this call.
async fn reload(State(state): State<Arc<AdminState>>) -> Result<Json<EmbeddingsStatus>, ApiError> {
    let source = source(&state)?.clone();
    if let Embeddings::Local(model) = &source {
        let model = Arc::clone(model);
        // Reads and checks the weights: hundreds of milliseconds.
        let _ = tokio::task::spawn_blocking(move || model.load_installed()).await?;
    }
    Ok(Json(source.status()))
}
