//! `/v1/memory/*`: the earlier version's memory routes, with its request and response
//! shapes, so the OpenClaw memory plugin and its tooling keep working. Same key as the agent
//! API. Turns pushed through `buffer_turn` are recorded like proxied turns, so they survive a
//! restart and go through the same extraction.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use bytes::Bytes;
use metaclaw_memory::db::{self};
use metaclaw_memory::{MemoryUnit, SearchQuery, Status};
use metaclaw_proxy::SharedState;
use metaclaw_proxy::seams::{Protocol, ReplyCapture, TurnRecord, TurnSink, TurnType};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Memory;
use crate::recorder::RecorderHandle;

pub struct CompatState {
    pub proxy: SharedState,
    /// `None` when memory is off: every route answers 503.
    pub memory: Option<Memory>,
    pub recorder: RecorderHandle,
    pub default_scope: String,
    pub flush_every: u32,
}

pub fn router(state: Arc<CompatState>) -> Router {
    Router::new()
        .route("/v1/memory/ingest", post(ingest))
        .route("/v1/memory/buffer_turn", post(buffer_turn))
        .route("/v1/memory/flush_session", post(flush_session))
        .route("/v1/memory/search", get(search_route))
        .route("/v1/memory/stats", get(stats))
        .route("/v1/memory/{id}", get(unit))
        .with_state(state)
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": {"message": message}}))).into_response()
}

/// The key check and the memory-off answer every route starts with.
#[allow(clippy::result_large_err, reason = "the error is the response to send")]
fn admit<'s>(state: &'s CompatState, headers: &HeaderMap) -> Result<&'s Memory, Response> {
    if let Err(e) = metaclaw_proxy::require_key(
        Protocol::Openai,
        headers,
        state.proxy.config.api_key.as_deref(),
    ) {
        return Err(e.into_response());
    }
    state
        .memory
        .as_ref()
        .ok_or_else(|| error(StatusCode::SERVICE_UNAVAILABLE, "memory not enabled"))
}

#[derive(Deserialize, Default)]
struct IngestRequest {
    #[serde(default)]
    session_id: Option<String>,
    /// Where the memories go; else the scope the turns were recorded in.
    #[serde(default)]
    scope: Option<String>,
}

/// A scope the request names, if it names one.
fn named(scope: Option<&str>) -> Option<&str> {
    scope.map(str::trim).filter(|s| !s.is_empty())
}

async fn ingest(
    State(state): State<Arc<CompatState>>,
    headers: HeaderMap,
    body: Option<Json<IngestRequest>>,
) -> Response {
    let memory = match admit(&state, &headers) {
        Ok(m) => m,
        Err(r) => return r,
    };
    let req = body.map(|Json(b)| b).unwrap_or_default();
    let sessions = match req.session_id.filter(|s| !s.is_empty()) {
        Some(s) => vec![s],
        None => recent_sessions(memory).await,
    };
    let mut added = 0;
    let mut buffered = 0;
    let mut report = Vec::new();
    for session in sessions {
        let Some(out) = memory
            .extract_paced(&session, true, named(req.scope.as_deref()))
            .await
        else {
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                "memory queue full; try again",
            );
        };
        added += out.added();
        buffered += out.turns;
        if out.turns > 0 {
            report.push(json!({"session_id": session, "added": out.added(), "turns": out.turns}));
        }
    }
    Json(json!({"added": added, "buffered_turns": buffered, "sessions": report})).into_response()
}

/// Sessions of the latest recorded turns: where turns may wait for extraction.
async fn recent_sessions(memory: &Memory) -> Vec<String> {
    let readers = memory.readers().clone();
    let found = tokio::task::spawn_blocking(move || {
        readers.with(|s| s.recent_turns(1000).unwrap_or_default())
    })
    .await;
    let mut sessions: Vec<String> = Vec::new();
    for t in found.ok().and_then(Result::ok).unwrap_or_default() {
        if !sessions.contains(&t.session_id) {
            sessions.push(t.session_id);
        }
    }
    sessions
}

#[derive(Deserialize)]
struct Turn {
    #[serde(default)]
    prompt_text: String,
    #[serde(default)]
    response_text: String,
}

#[derive(Deserialize)]
struct BufferTurn {
    session_id: String,
    turn: Turn,
    #[serde(default)]
    scope_id: Option<String>,
}

/// Records a turn that did not go through the proxy (the plugin's own conversations), and
/// extracts every `memory.flush_every` of them.
async fn buffer_turn(
    State(state): State<Arc<CompatState>>,
    headers: HeaderMap,
    Json(req): Json<BufferTurn>,
) -> Response {
    let memory = match admit(&state, &headers) {
        Ok(m) => m,
        Err(r) => return r,
    };
    if req.session_id.trim().is_empty() {
        return error(StatusCode::BAD_REQUEST, "session_id is required");
    }
    let scope = req
        .scope_id
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| state.default_scope.clone());
    state
        .recorder
        .turn_finished(recorded(&req.session_id, &scope, &req.turn));
    let count = buffered_count(memory, &state.recorder, &req.session_id).await;
    let due = state.flush_every > 0 && count.is_multiple_of(u64::from(state.flush_every));
    if !due {
        return Json(json!({"flushed": false, "added": null})).into_response();
    }
    match memory.extract_paced(&req.session_id, false, None).await {
        Some(out) => Json(json!({"flushed": true, "added": out.added()})).into_response(),
        None => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "memory queue full; try again",
        ),
    }
}

/// Turns recorded for the session so far, the one just pushed included.
async fn buffered_count(memory: &Memory, recorder: &RecorderHandle, session: &str) -> u64 {
    let readers = memory.readers().clone();
    let (recorder, session) = (recorder.clone(), session.to_string());
    tokio::task::spawn_blocking(move || {
        if recorder.flush().is_err() {
            return Ok(0);
        }
        readers.with(|s| {
            s.session_turns(&session)
                .map(|t| t.len() as u64)
                .unwrap_or(0)
        })
    })
    .await
    .ok()
    .and_then(Result::ok)
    .unwrap_or(0)
}

/// A pushed turn in the shape the recorder stores proxied turns in.
fn recorded(session: &str, scope: &str, turn: &Turn) -> TurnRecord {
    let request = json!({"messages": [{"role": "user", "content": turn.prompt_text}]});
    let reply = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": turn.response_text}, "finish_reason": "stop"}]});
    TurnRecord {
        session_id: session.to_string(),
        turn_type: TurnType::Main,
        scope: scope.to_string(),
        client_protocol: Protocol::Openai,
        upstream_protocol: Protocol::Openai,
        upstream: "memory-api".into(),
        model: String::new(),
        request: Bytes::from(request.to_string()),
        reply: ReplyCapture::Json(Bytes::from(reply.to_string())),
        status: 200,
        error: None,
        overhead_ms: 0.0,
        ttft_ms: None,
        total_ms: 0.0,
        started_at: SystemTime::now(),
        skill_generation: 0,
        injected_skills: Vec::new(),
        figures: Default::default(),
    }
}

#[derive(Deserialize)]
struct FlushSession {
    session_id: String,
    /// Where the memories go; else the scope the turns were recorded in.
    #[serde(default)]
    scope_id: Option<String>,
    #[serde(default = "yes", rename = "final")]
    last: bool,
}

fn yes() -> bool {
    true
}

async fn flush_session(
    State(state): State<Arc<CompatState>>,
    headers: HeaderMap,
    Json(req): Json<FlushSession>,
) -> Response {
    let memory = match admit(&state, &headers) {
        Ok(m) => m,
        Err(r) => return r,
    };
    // The recorder may still hold turns pushed just before; extraction flushes it first.
    let scope = named(req.scope_id.as_deref());
    match memory.extract_paced(&req.session_id, req.last, scope).await {
        Some(out) => match out.error {
            Some(e) => error(StatusCode::BAD_GATEWAY, &e),
            None => Json(json!({"added": out.added()})).into_response(),
        },
        None => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "memory queue full; try again",
        ),
    }
}

#[derive(Deserialize)]
struct SearchParams {
    #[serde(default)]
    q: String,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    limit: Option<usize>,
}

async fn search_route(
    State(state): State<Arc<CompatState>>,
    headers: HeaderMap,
    Query(p): Query<SearchParams>,
) -> Response {
    let memory = match admit(&state, &headers) {
        Ok(m) => m,
        Err(r) => return r,
    };
    let q = SearchQuery {
        scope: p.scope.unwrap_or_else(|| state.default_scope.clone()),
        text: p.q,
        kinds: Vec::new(),
        limit: p.limit.unwrap_or(20).min(200),
        include_inactive: false,
    };
    match memory.search(q).await {
        Ok(hits) => {
            let rows: Vec<Value> = hits
                .iter()
                .map(|h| {
                    json!({
                        "memory_id": h.unit.id,
                        "type": h.unit.kind,
                        "score": rounded(h.score),
                        "content": h.unit.content.chars().take(200).collect::<String>(),
                        "importance": rounded(h.unit.importance),
                        "access_count": h.unit.access_count,
                        "matched_terms": h.matched_terms,
                        "created_at": iso(h.unit.created_ms),
                    })
                })
                .collect();
            Json(Value::Array(rows)).into_response()
        }
        Err(e) => {
            tracing::warn!(error = %e, "memory search failed");
            error(StatusCode::INTERNAL_SERVER_ERROR, "memory search failed")
        }
    }
}

#[derive(Deserialize)]
struct ScopeParam {
    #[serde(default)]
    scope: Option<String>,
}

async fn stats(
    State(state): State<Arc<CompatState>>,
    headers: HeaderMap,
    Query(p): Query<ScopeParam>,
) -> Response {
    let memory = match admit(&state, &headers) {
        Ok(m) => m,
        Err(r) => return r,
    };
    let scope = p.scope.unwrap_or_else(|| state.default_scope.clone());
    let readers = memory.readers().clone();
    let found = tokio::task::spawn_blocking(move || {
        readers.with(|s| db::stats(s.connection(), Some(&scope)))
    })
    .await;
    let Ok(Ok(Ok(st))) = found else {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "memory statistics failed",
        );
    };
    let active = st.active.max(1) as f64;
    let dominant = st
        .by_kind
        .iter()
        .max_by_key(|(_, n)| **n)
        .map(|(k, _)| k.clone());
    let ratios: serde_json::Map<String, Value> = st
        .by_kind
        .iter()
        .map(|(k, n)| (k.clone(), json!(*n as f64 / active)))
        .collect();
    Json(json!({
        "total": st.total,
        "active": st.active,
        "active_by_type": st.by_kind,
        "memory_density": if st.total > 0 { st.active as f64 / st.total as f64 } else { 0.0 },
        "dominant_type": dominant,
        "type_count": st.by_kind.len(),
        "type_ratios": ratios,
        "superseded": st.superseded,
    }))
    .into_response()
}

async fn unit(
    State(state): State<Arc<CompatState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let memory = match admit(&state, &headers) {
        Ok(m) => m,
        Err(r) => return r,
    };
    let readers = memory.readers().clone();
    let found =
        tokio::task::spawn_blocking(move || readers.with(|s| db::get(s.connection(), &id))).await;
    match found {
        Ok(Ok(Ok(Some(u)))) if u.status != Status::Archived => Json(unit_json(&u)).into_response(),
        Ok(Ok(Ok(_))) => error(StatusCode::NOT_FOUND, "memory not found"),
        _ => error(StatusCode::INTERNAL_SERVER_ERROR, "memory lookup failed"),
    }
}

/// The reference's unit shape; `topics` maps to tags (this version has no separate topics).
fn unit_json(u: &MemoryUnit) -> Value {
    json!({
        "memory_id": u.id,
        "scope_id": u.scope,
        "type": u.kind,
        "content": u.content,
        "summary": u.summary,
        "importance": rounded(u.importance),
        "entities": u.entities,
        "topics": u.tags,
        "tags": u.tags,
        "pinned": u.pinned,
        "created_at": iso(u.created_ms),
        "updated_at": iso(u.updated_ms),
        "expires_at": u.expires_ms.map(iso).unwrap_or_default(),
    })
}

/// Three decimals: an `f32` widened to JSON's f64 would print 0.8 as 0.800000011920929.
fn rounded(x: f32) -> f64 {
    (f64::from(x) * 1000.0).round() / 1000.0
}

/// RFC 3339 UTC to the second, as the earlier version wrote timestamps.
pub fn iso(ms: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000))
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}
