//! Small routes: health, models, metrics, and the 404 for everything else.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::auth;
use crate::error::{ApiError, ErrorKind};
use crate::seams::Protocol;
use crate::state::SharedState;

pub async fn healthz() -> Json<serde_json::Value> {
    Json(json!({"ok": true}))
}

/// `GET /v1/models`: the models agents can ask for (the upstreams' configured models).
pub async fn models(State(state): State<SharedState>, headers: HeaderMap) -> Response {
    if let Err(e) = auth::require_key(Protocol::Openai, &headers, state.config.api_key.as_deref()) {
        return e.into_response();
    }
    let mut ids: Vec<String> = state
        .config
        .upstreams
        .iter()
        .filter_map(|u| u.model.clone())
        .collect();
    if ids.is_empty() {
        ids.push(state.config.served_model.clone());
    }
    ids.dedup();
    let data: Vec<_> = ids
        .iter()
        .map(|id| json!({"id": id, "object": "model", "created": 0, "owned_by": "metaclaw", "type": "model", "display_name": id}))
        .collect();
    state.metrics.request("models", 200);
    Json(json!({"object": "list", "data": data, "has_more": false})).into_response()
}

/// Gauges are read when scraped, so they are right after the proxy went quiet too.
pub async fn metrics(State(state): State<SharedState>) -> Response {
    let m = &state.metrics;
    m.sessions_open.set(gauge(state.sessions.open_count()));
    m.recorder_queue.set(gauge(state.sink.queue_depth()));
    m.sticky_blocks.set(gauge(state.sticky.blocks_in_memory()));
    m.sticky_bytes.set(gauge(state.sticky.bytes_in_memory()));
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.render(),
    )
        .into_response()
}

fn gauge(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Unknown paths (any method) answer 404 at once.
pub async fn not_found() -> Response {
    ApiError::new(
        Protocol::Openai,
        StatusCode::NOT_FOUND,
        ErrorKind::NotFound,
        "no such endpoint",
    )
    .into_response()
}
