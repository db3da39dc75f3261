//! `/api/memory`: everything MetaClaw remembers, for people — list with filters and
//! pagination, search that explains each match, one unit with its history, create, edit,
//! pin/unpin, forget (soft), restore, purge, export/import JSONL, statistics, extraction on
//! demand. Every change is written to the audit log by the memory store.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use metaclaw_memory::db::{self, EventQuery, ListQuery, SortBy, UnitPatch};
use metaclaw_memory::{Kind, MemoryError, NewUnit, SearchQuery, Source, Status};
use metaclaw_store::Store;
use serde::Deserialize;
use serde_json::json;

use super::routes::{AdminState, error};
use crate::memory::Memory;

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

fn off() -> Response {
    error(
        StatusCode::CONFLICT,
        "memory is off (memory.enabled: false)",
    )
}

fn now() -> i64 {
    crate::clock::now_ms()
}

/// Runs a database call on a blocking thread and answers with its JSON, or a clear error.
async fn on_db<T: serde::Serialize + Send + 'static>(
    state: &AdminState,
    write: bool,
    f: impl FnOnce(&mut Store) -> Result<T, MemoryError> + Send + 'static,
) -> Response {
    if state.memory.is_none() {
        return off();
    }
    let db = state.db.clone();
    let done = tokio::task::spawn_blocking(move || {
        let mut store = if write {
            Store::open(&db)
        } else {
            Store::open_read_only(&db)
        }
        .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
        f(&mut store).map_err(|e| (status_of(&e), e.to_string()))
    })
    .await;
    match done {
        Ok(Ok(v)) => Json(v).into_response(),
        Ok(Err((status, msg))) => error(status, &msg),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

fn status_of(e: &MemoryError) -> StatusCode {
    match e {
        MemoryError::NotFound(_) => StatusCode::NOT_FOUND,
        MemoryError::Conflict { .. } => StatusCode::CONFLICT,
        MemoryError::Invalid(_) => StatusCode::BAD_REQUEST,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
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

async fn list(State(state): State<Arc<AdminState>>, Query(p): Query<ListParams>) -> Response {
    let kinds = match p.kind.as_deref().map(Kind::parse) {
        Some(None) => return error(StatusCode::BAD_REQUEST, "unknown kind"),
        Some(Some(k)) => vec![k],
        None => Vec::new(),
    };
    let statuses = match p.status.as_deref().map(Status::parse) {
        Some(None) => return error(StatusCode::BAD_REQUEST, "unknown status"),
        Some(Some(s)) => vec![s],
        None => Vec::new(),
    };
    let source = match p.source.as_deref().map(Source::parse) {
        Some(None) => return error(StatusCode::BAD_REQUEST, "unknown source"),
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
    on_db(&state, false, move |s| db::list(s.connection(), &q)).await
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
) -> Response {
    let Some(memory) = state.memory.clone() else {
        return off();
    };
    let q = SearchQuery {
        scope: p.scope.unwrap_or_else(|| state.config.memory.scope.clone()),
        text: p.q,
        kinds: Vec::new(),
        limit: p.limit.unwrap_or(20).min(200),
        include_inactive: false,
    };
    match memory.search(q).await {
        Ok(hits) => Json(hits).into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e),
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ScopeParam {
    scope: Option<String>,
}

async fn stats(State(state): State<Arc<AdminState>>, Query(p): Query<ScopeParam>) -> Response {
    on_db(&state, false, move |s| {
        db::stats(s.connection(), p.scope.as_deref())
    })
    .await
}

async fn show(State(state): State<Arc<AdminState>>, Path(id): Path<String>) -> Response {
    on_db(&state, false, move |s| {
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

async fn create(State(state): State<Arc<AdminState>>, Json(c): Json<Create>) -> Response {
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
    let done = on_db(&state, true, move |s| {
        db::insert(s.connection_mut(), &unit, ACTOR, now())
    })
    .await;
    changed(&state, &done, Some(&scope));
    done
}

/// The dashboard follows a successful change live.
fn announce(state: &AdminState, done: &Response) {
    if done.status().is_success() {
        state.events.emit(crate::events::EngineEvent::MemoryChanged);
    }
}

/// After a successful change by a person, the memory's embeddings catch up (and the
/// change is announced).
fn changed(state: &AdminState, done: &Response, scope: Option<&str>) {
    if let Some(memory) = &state.memory
        && done.status().is_success()
    {
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
) -> Response {
    let done = on_db(&state, true, move |s| {
        db::update(
            s.connection_mut(),
            &id,
            &e.patch,
            ACTOR,
            now(),
            e.expected_version,
        )
    })
    .await;
    changed(&state, &done, None);
    done
}

async fn pin(State(state): State<Arc<AdminState>>, Path(id): Path<String>) -> Response {
    let done = on_db(&state, true, move |s| {
        db::set_pinned(s.connection_mut(), &id, true, ACTOR, now())
    })
    .await;
    announce(&state, &done);
    done
}

async fn unpin(State(state): State<Arc<AdminState>>, Path(id): Path<String>) -> Response {
    let done = on_db(&state, true, move |s| {
        db::set_pinned(s.connection_mut(), &id, false, ACTOR, now())
    })
    .await;
    announce(&state, &done);
    done
}

async fn forget(State(state): State<Arc<AdminState>>, Path(id): Path<String>) -> Response {
    let done = on_db(&state, true, move |s| {
        db::archive(s.connection_mut(), &id, ACTOR, now())
    })
    .await;
    announce(&state, &done);
    done
}

async fn restore(State(state): State<Arc<AdminState>>, Path(id): Path<String>) -> Response {
    let done = on_db(&state, true, move |s| {
        db::restore(s.connection_mut(), &id, ACTOR, now())
    })
    .await;
    announce(&state, &done);
    done
}

async fn purge(State(state): State<Arc<AdminState>>, Path(id): Path<String>) -> Response {
    let done = on_db(&state, true, move |s| {
        db::purge(s.connection_mut(), &id, ACTOR, now()).map(|()| json!({"purged": id}))
    })
    .await;
    announce(&state, &done);
    done
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ExportParams {
    scope: Option<String>,
    include_inactive: bool,
}

/// JSONL, one unit per line (what `import` reads back).
async fn export(State(state): State<Arc<AdminState>>, Query(p): Query<ExportParams>) -> Response {
    if state.memory.is_none() {
        return off();
    }
    let db = state.db.clone();
    let done = tokio::task::spawn_blocking(move || {
        let store = Store::open_read_only(&db).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        db::export_jsonl(
            store.connection(),
            p.scope.as_deref(),
            p.include_inactive,
            &mut out,
        )
        .map_err(|e| e.to_string())?;
        Ok::<_, String>(out)
    })
    .await;
    match done {
        Ok(Ok(bytes)) => ([(header::CONTENT_TYPE, "application/x-ndjson")], bytes).into_response(),
        Ok(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, &e),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

async fn import(State(state): State<Arc<AdminState>>, body: axum::body::Body) -> Response {
    // Spooled first, so a slow upload never holds the database's write lock (turns keep
    // being recorded while it arrives).
    let spooled = match spool(body).await {
        Ok(file) => file,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("the upload did not arrive whole: {e}"),
            );
        }
    };
    let done = on_db(&state, true, move |s| {
        let reader = std::io::BufReader::new(spooled);
        db::import_jsonl(s.connection_mut(), reader, "import", now())
    })
    .await;
    changed(&state, &done, None);
    done
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
) -> Response {
    let Some(memory): Option<Memory> = state.memory.clone() else {
        return off();
    };
    match memory.extract_now(&req.session_id, true, None).await {
        Some(out) => Json(out).into_response(),
        None => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the memory queue is full; try again",
        ),
    }
}

/// Consolidates a scope now and answers with what was done.
async fn consolidate(
    State(state): State<Arc<AdminState>>,
    Query(p): Query<ScopeParam>,
) -> Response {
    let Some(memory) = state.memory.clone() else {
        return off();
    };
    let scope = p.scope.unwrap_or_else(|| state.config.memory.scope.clone());
    match memory.consolidate_now(&scope).await {
        Some(Ok(steps)) => Json(json!({"scope": scope, "steps": steps})).into_response(),
        Some(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, &e),
        None => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the memory queue is full; try again",
        ),
    }
}
