//! `GET /api/turns/usage?session=&limit=`: each turn's tokens (prompt, completion, cache read
//! and write), and what MetaClaw injected into it (tokens, skills, memories). Newest first
//! without a session; a session's turns in order with one.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use metaclaw_store::Store;
use serde::Deserialize;
use serde_json::json;

use super::routes::{AdminState, error};

pub fn router() -> Router<Arc<AdminState>> {
    Router::new().route("/api/turns/usage", get(usage))
}

#[derive(Deserialize)]
struct UsageQuery {
    limit: Option<usize>,
    session: Option<String>,
}

async fn usage(State(state): State<Arc<AdminState>>, Query(q): Query<UsageQuery>) -> Response {
    let db = state.db.clone();
    let result = tokio::task::spawn_blocking(move || {
        let store = Store::open_read_only(&db)?;
        match q.session {
            Some(s) => store.session_usage(&s),
            None => store.recent_usage(q.limit.unwrap_or(50).min(1000)),
        }
    })
    .await;
    match result {
        Ok(Ok(rows)) => Json(json!({"turns": rows})).into_response(),
        Ok(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}
