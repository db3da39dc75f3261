//! `/api/memory`: everything MetaClaw remembers, for people — list with filters and
//! pagination, search that explains each match, one unit with its history, create, edit,
//! pin/unpin, forget (soft), restore, purge, export/import JSONL, statistics, extraction on
//! demand. Every change is written to the audit log by the memory store.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use metaclaw_memory::db::{self, EventQuery, ListQuery, SortBy, UnitPatch};
use metaclaw_memory::{Hit, Kind, MemoryError, NewUnit, SearchQuery, Source, Status};
use metaclaw_store::Store;
use serde::Deserialize;
use serde_json::{Value, json};

use super::api_error::ApiError;
use super::routes::AdminState;
use crate::memory::{Extracted, Memory};
use crate::store_access;

/// Who the audit log names for changes made here.
const ACTOR: &str = "user";

pub fn router() -> Router<Arc<AdminState>> {
    Router::new()
        .route("/api/memory", get(list).post(create))
        .route("/api/memory/search", get(search_route))
        .route("/api/memory/stats", get(stats))
        .route("/api/memory/export", get(export))
        // An export is as big as the memory it holds; the import takes it whole (spooled to
        // a temporary file, never held in memory), as the CLI does.
        .route(
            "/api/memory/import",
            post(import).layer(axum::extract::DefaultBodyLimit::disable()),
        )
        .route("/api/memory/extract", post(extract))
        .route("/api/memory/consolidate", post(consolidate))
        .route("/api/memory/{id}", get(show).patch(edit).delete(purge))
        .route("/api/memory/{id}/pin", post(pin))
        .route("/api/memory/{id}/unpin", post(unpin))
        .route("/api/memory/{id}/forget", post(forget))
        .route("/api/memory/{id}/restore", post(restore))
}

/// The memory service, or 409 when memory is off.
pub(super) fn memory(state: &AdminState) -> Result<Memory, ApiError> {
    state
        .memory
        .clone()
        .ok_or_else(|| ApiError::Conflict("memory is off (memory.enabled: false)".into()))
}

const QUEUE_FULL: &str = "the memory queue is full; try again";

fn now() -> i64 {
    crate::clock::now_ms()
}

/// A memory read, when memory is on, answered with its JSON.
async fn read<T: Send + 'static>(
    state: &AdminState,
    f: impl FnOnce(&Store) -> Result<T, MemoryError> + Send + 'static,
) -> Result<Json<T>, ApiError> {
    memory(state)?;
    store_access::read(state.db.clone(), move |s| Ok(Json(f(s)?))).await
}

/// A memory change, when memory is on, answered with its JSON.
async fn write<T: Send + 'static>(
    state: &AdminState,
    f: impl FnOnce(&mut Store) -> Result<T, MemoryError> + Send + 'static,
) -> Result<Json<T>, ApiError> {
    memory(state)?;
    store_access::write(state.db.clone(), move |s| Ok(Json(f(s)?))).await
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ListParams {
    scope: Option<String>,
    kind: Option<String>,
    status: Option<String>,
    pinned: Option<bool>,
    tag: Option<String>,
    source: Option<String>,
    contains: Option<String>,
    sort: Option<SortBy>,
    cursor: Option<String>,
    limit: Option<u32>,
}

async fn list(
    State(state): State<Arc<AdminState>>,
    Query(p): Query<ListParams>,
) -> Result<Json<db::Page>, ApiError> {
    let bad = |what: &str| ApiError::BadRequest(format!("unknown {what}"));
    let kinds = match p.kind.as_deref().map(Kind::parse) {
        Some(None) => return Err(bad("kind")),
        Some(Some(k)) => vec![k],
        None => Vec::new(),
    };
    let statuses = match p.status.as_deref().map(Status::parse) {
        Some(None) => return Err(bad("status")),
        Some(Some(s)) => vec![s],
        None => Vec::new(),
    };
    let source = match p.source.as_deref().map(Source::parse) {
        Some(None) => return Err(bad("source")),
        other => other.flatten(),
    };
    let q = ListQuery {
        scope: p.scope,
        kinds,
        statuses,
        pinned: p.pinned,
        tag: p.tag,
        source,
        contains: p.contains,
        sort: p.sort.unwrap_or_default(),
        cursor: p.cursor,
        limit: p.limit.unwrap_or(0),
    };
    read(&state, move |s| db::list(s.connection(), &q)).await
}

#[derive(Deserialize)]
struct SearchParams {
    q: String,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    limit: Option<usize>,
}

/// Hits with their score components, the terms that matched and a sentence saying why.
async fn search_route(
    State(state): State<Arc<AdminState>>,
    Query(p): Query<SearchParams>,
) -> Result<Json<Vec<Hit>>, ApiError> {
    let memory = memory(&state)?;
    let q = SearchQuery {
        scope: p.scope.unwrap_or_else(|| state.config.memory.scope.clone()),
        text: p.q,
        kinds: Vec::new(),
        limit: p.limit.unwrap_or(20).min(200),
        include_inactive: false,
    };
    Ok(Json(memory.search(q).await?))
}

/// `?scope=` of the memory routes (the configured scope when absent).
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct ScopeParam {
    pub scope: Option<String>,
}

async fn stats(
    State(state): State<Arc<AdminState>>,
    Query(p): Query<ScopeParam>,
) -> Result<Json<db::Stats>, ApiError> {
    read(&state, move |s| {
        db::stats(s.connection(), p.scope.as_deref())
    })
    .await
}

async fn show(
    State(state): State<Arc<AdminState>>,
    Path(id): Path<String>,
) -> Result<Json<Shown>, ApiError> {
    read(&state, move |s| {
        let conn = s.connection();
        let unit = db::get(conn, &id)?.ok_or_else(|| MemoryError::NotFound(id.clone()))?;
        let history = db::history(conn, &id)?;
        let events = db::events(
            conn,
            &EventQuery {
                memory_id: Some(id),
                ..EventQuery::default()
            },
        )?;
        Ok(Shown {
            unit,
            history,
            events,
        })
    })
    .await
}

/// A typed answer rather than a `json!` value: scores and importances are `f32`, and going
/// through `Value` would print 0.8 as 0.800000011920929.
#[derive(serde::Serialize)]
struct Shown {
    unit: metaclaw_memory::MemoryUnit,
    history: Vec<db::Version>,
    events: Vec<db::Event>,
}

#[derive(Deserialize)]
struct Create {
    #[serde(default)]
    scope: Option<String>,
    kind: Kind,
    content: String,
    #[serde(default)]
    importance: Option<f32>,
    #[serde(default)]
    pinned: bool,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    fact_key: Option<String>,
}

async fn create(
    State(state): State<Arc<AdminState>>,
    Json(c): Json<Create>,
) -> Result<Json<metaclaw_memory::MemoryUnit>, ApiError> {
    let unit = NewUnit {
        scope: c.scope.unwrap_or_else(|| state.config.memory.scope.clone()),
        kind: c.kind,
        content: c.content,
        summary: String::new(),
        fact_key: c.fact_key,
        importance: c.importance.unwrap_or(0.8),
        confidence: 1.0,
        pinned: c.pinned,
        source: Source::Manual,
        source_session: None,
        source_turn: None,
        tags: c.tags,
        entities: Vec::new(),
        expires_ms: None,
    };
    let scope = unit.scope.clone();
    let done = write(&state, move |s| {
        db::insert(s.connection_mut(), &unit, ACTOR, now())
    })
    .await?;
    changed(&state, Some(&scope));
    Ok(done)
}

/// The dashboard follows a successful change live.
fn announce(state: &AdminState) {
    state.events.emit(crate::events::EngineEvent::MemoryChanged);
}

/// After a successful change by a person, the memory's embeddings catch up (and the
/// change is announced).
fn changed(state: &AdminState, scope: Option<&str>) {
    if let Some(memory) = &state.memory {
        memory.units_changed(scope);
    }
}

#[derive(Deserialize)]
struct Edit {
    #[serde(flatten)]
    patch: UnitPatch,
    /// The version the editor saw; a newer one on disk answers 409 instead of overwriting.
    #[serde(default)]
    expected_version: Option<u64>,
}

async fn edit(
    State(state): State<Arc<AdminState>>,
    Path(id): Path<String>,
    Json(e): Json<Edit>,
) -> Result<Json<metaclaw_memory::MemoryUnit>, ApiError> {
    let done = write(&state, move |s| {
        db::update(
            s.connection_mut(),
            &id,
            &e.patch,
            ACTOR,
            now(),
            e.expected_version,
        )
    })
    .await?;
    changed(&state, None);
    Ok(done)
}

/// A change of one unit's state (pin, unpin, forget, restore, purge), announced when done.
async fn lifecycle<T: Send + 'static>(
    state: &AdminState,
    f: impl FnOnce(&mut Store) -> Result<T, MemoryError> + Send + 'static,
) -> Result<Json<T>, ApiError> {
    let done = write(state, f).await?;
    announce(state);
    Ok(done)
}

type Unit = Result<Json<metaclaw_memory::MemoryUnit>, ApiError>;

async fn pin(State(state): State<Arc<AdminState>>, Path(id): Path<String>) -> Unit {
    lifecycle(&state, move |s| {
        db::set_pinned(s.connection_mut(), &id, true, ACTOR, now())
    })
    .await
}

async fn unpin(State(state): State<Arc<AdminState>>, Path(id): Path<String>) -> Unit {
    lifecycle(&state, move |s| {
        db::set_pinned(s.connection_mut(), &id, false, ACTOR, now())
    })
    .await
}

async fn forget(State(state): State<Arc<AdminState>>, Path(id): Path<String>) -> Unit {
    lifecycle(&state, move |s| {
        db::archive(s.connection_mut(), &id, ACTOR, now())
    })
    .await
}

async fn restore(State(state): State<Arc<AdminState>>, Path(id): Path<String>) -> Unit {
    lifecycle(&state, move |s| {
        db::restore(s.connection_mut(), &id, ACTOR, now())
    })
    .await
}

async fn purge(
    State(state): State<Arc<AdminState>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    lifecycle(&state, move |s| {
        db::purge(s.connection_mut(), &id, ACTOR, now()).map(|()| json!({"purged": id}))
    })
    .await
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ExportParams {
    scope: Option<String>,
    include_inactive: bool,
}

/// JSONL, one unit per line (what `import` reads back).
async fn export(
    State(state): State<Arc<AdminState>>,
    Query(p): Query<ExportParams>,
) -> Result<Response, ApiError> {
    memory(&state)?;
    let bytes = store_access::read(state.db.clone(), move |store| {
        let mut out = Vec::new();
        db::export_jsonl(
            store.connection(),
            p.scope.as_deref(),
            p.include_inactive,
            &mut out,
        )
        // Every export failure is the server's, whatever the memory error says.
        .map_err(ApiError::internal)?;
        Ok::<_, ApiError>(out)
    })
    .await?;
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], bytes).into_response())
}

async fn import(
    State(state): State<Arc<AdminState>>,
    body: axum::body::Body,
) -> Result<Json<db::ImportReport>, ApiError> {
    // Spooled first, so a slow upload never holds the database's write lock (turns keep
    // being recorded while it arrives).
    let spooled = spool(body)
        .await
        .map_err(|e| ApiError::BadRequest(format!("the upload did not arrive whole: {e}")))?;
    let done = write(&state, move |s| {
        let reader = std::io::BufReader::new(spooled);
        db::import_jsonl(s.connection_mut(), reader, "import", now())
    })
    .await?;
    changed(&state, None);
    Ok(done)
}

/// Writes the request body to an anonymous temporary file and rewinds it.
async fn spool(body: axum::body::Body) -> std::io::Result<std::fs::File> {
    use futures_util::StreamExt;
    use std::io::{Seek, Write};
    let mut file = tokio::task::spawn_blocking(tempfile::tempfile)
        .await
        .map_err(std::io::Error::other)??;
    let mut stream = body.into_data_stream();
    let mut pending = Vec::new();
    while let Some(chunk) = stream.next().await {
        pending.extend_from_slice(&chunk.map_err(std::io::Error::other)?);
        // Written in blocks of 1 MiB, off the runtime's threads.
        if pending.len() >= 1 << 20 {
            let block = std::mem::take(&mut pending);
            file = tokio::task::spawn_blocking(move || file.write_all(&block).map(|()| file))
                .await
                .map_err(std::io::Error::other)??;
        }
    }
    tokio::task::spawn_blocking(move || {
        file.write_all(&pending)?;
        file.rewind()?;
        Ok(file)
    })
    .await
    .map_err(std::io::Error::other)?
}

#[derive(Deserialize)]
struct ExtractRequest {
    session_id: String,
}

async fn extract(
    State(state): State<Arc<AdminState>>,
    Json(req): Json<ExtractRequest>,
) -> Result<Json<Extracted>, ApiError> {
    let memory = memory(&state)?;
    match memory.extract_now(&req.session_id, true, None).await {
        Some(out) => Ok(Json(out)),
        None => Err(ApiError::Unavailable(QUEUE_FULL.into())),
    }
}

/// Consolidates a scope now and answers with what was done.
async fn consolidate(
    State(state): State<Arc<AdminState>>,
    Query(p): Query<ScopeParam>,
) -> Result<Json<Value>, ApiError> {
    let memory = memory(&state)?;
    let scope = p.scope.unwrap_or_else(|| state.config.memory.scope.clone());
    match memory.consolidate_now(&scope).await {
        Some(steps) => Ok(Json(json!({"scope": scope, "steps": steps?}))),
        None => Err(ApiError::Unavailable(QUEUE_FULL.into())),
    }
}
