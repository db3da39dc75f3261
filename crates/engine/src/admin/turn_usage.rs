//! `GET /api/turns/usage?session=&limit=`: each turn's tokens (prompt, completion, cache read
//! and write), and what MetaClaw injected into it (tokens, skills, memories). Newest first
//! without a session; a session's turns in order with one.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::api_error::ApiError;
use super::routes::AdminState;
use crate::store_access;

pub fn router() -> Router<Arc<AdminState>> {
    Router::new().route("/api/turns/usage", get(usage))
}

#[derive(Deserialize)]
struct UsageQuery {
    limit: Option<usize>,
    session: Option<String>,
}

async fn usage(
    State(state): State<Arc<AdminState>>,
    Query(q): Query<UsageQuery>,
) -> Result<Json<Value>, ApiError> {
    store_access::read(state.db.clone(), move |store| {
        let rows = match q.session {
            Some(s) => store.session_usage(&s)?,
            None => store.recent_usage(q.limit.unwrap_or(50).min(1000))?,
        };
        Ok(Json(json!({"turns": rows})))
    })
    .await
}
