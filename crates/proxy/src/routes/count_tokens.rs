//! `POST /v1/messages/count_tokens`: forwarded to an Anthropic upstream, estimated otherwise.

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::auth;
use crate::pipeline::inbound;
use crate::relay::headers;
use crate::seams::Protocol;
use crate::state::SharedState;
use crate::upstream::send;

pub async fn count_tokens(
    State(state): State<SharedState>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let client = Protocol::Anthropic;
    if let Err(e) = auth::require_key(client, &headers, state.config.api_key.as_deref()) {
        return e.into_response();
    }
    let bytes = match inbound::read_body(client, body, state.config.max_body_bytes).await {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let mut map = match inbound::parse(client, &bytes) {
        Ok(m) => m,
        Err(e) => return e.into_response(),
    };
    // MetaClaw's private fields must not reach the upstream here either.
    let _ = crate::session::resolve(client, &headers, &mut map, &state.default_scope);
    let estimate = estimate_tokens(&map);
    let mut request = Value::Object(map);
    let anthropic_first = state
        .config
        .upstreams
        .first()
        .is_some_and(|u| u.protocol == Protocol::Anthropic);
    if anthropic_first
        && let Ok(answered) = send::send(&state, client, &headers, &mut request, true).await
        && answered.response.status().is_success()
    {
        let mut out = HeaderMap::new();
        headers::passthrough(answered.response.headers(), &mut out);
        if let Ok(body) = answered.response.bytes().await {
            state.metrics.request("count_tokens", 200);
            return (
                StatusCode::OK,
                out,
                [("content-type", "application/json")],
                body,
            )
                .into_response();
        }
    }
    state.metrics.request("count_tokens", 200);
    Json(json!({"input_tokens": estimate})).into_response()
}

/// A conservative estimate (one token per three bytes of JSON) when no upstream can count.
fn estimate_tokens(map: &serde_json::Map<String, Value>) -> u64 {
    ["system", "messages", "tools"]
        .iter()
        .filter_map(|k| map.get(*k))
        .map(|v| serde_json::to_vec(v).map(|b| b.len() as u64).unwrap_or(0) / 3)
        .sum::<u64>()
        .max(1)
}
