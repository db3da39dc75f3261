//! `/api/updates`: whether a newer version exists or is installed already (as in status);
//! `POST /api/updates/check` looks now.

use std::sync::Arc;

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};

use super::routes::AdminState;
use crate::updates::UpdateStatus;

pub(super) fn router() -> Router<Arc<AdminState>> {
    Router::new()
        .route("/api/updates", get(status))
        .route("/api/updates/check", post(check))
}

async fn status(State(state): State<Arc<AdminState>>) -> Json<UpdateStatus> {
    Json(state.updates.status())
}

async fn check(State(state): State<Arc<AdminState>>) -> Json<UpdateStatus> {
    Json(state.updates.check_now().await)
}
