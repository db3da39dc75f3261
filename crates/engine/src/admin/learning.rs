//! `GET /api/learning` (weight learning at a glance) and `POST /v1/admin/train_step` (one
//! step now; the earlier route, now behind the admin token).

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};

use super::api_error::ApiError;
use super::routes::AdminState;

pub fn router() -> Router<Arc<AdminState>> {
    Router::new()
        .route("/api/learning", get(view))
        .route("/v1/admin/train_step", post(train_step))
}

async fn view(State(state): State<Arc<AdminState>>) -> Result<Response, ApiError> {
    let mode = state.config.mode;
    let learning = state.learning.clone();
    let db = state.db.clone();
    // The store reads block; keep them off the runtime's workers.
    let view = tokio::task::spawn_blocking(move || match learning {
        Some(l) => l.view(mode),
        None => crate::rl::view_off(mode, &db),
    })
    .await?;
    Ok(Json(view).into_response())
}

async fn train_step(State(state): State<Arc<AdminState>>) -> Result<Response, ApiError> {
    let Some(learning) = state.learning.clone() else {
        return Err(ApiError::Unavailable(format!(
            "weight learning is off in mode {}: switch to rl or madmax (`metaclaw config set mode rl`, then restart)",
            state.config.mode
        )));
    };
    let report = crate::rl::train_now(&learning, &state.shutdown).await;
    let status = if report.status == "error" {
        StatusCode::INTERNAL_SERVER_ERROR
    } else {
        StatusCode::OK
    };
    Ok((status, Json(report)).into_response())
}
