//! `/api/skills/import`, `/api/skills/quarantine`, `/api/skills/sync`: bringing skills in
//! (a `.zip`, or a folder's files as JSON), the quarantine of the safety gate, and the team
//! library. All of it works on the library's files, like the CLI; the watcher serves the
//! result on the next turn.

use std::path::{Component, Path as FsPath, PathBuf};
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, header};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use base64::Engine as _;
use metaclaw_skills::import::import;
use metaclaw_skills::quarantine;
use metaclaw_skills::team::{Manifest, sync};
use serde::Deserialize;
use serde_json::{Value, json};

use super::api_error::ApiError;
use super::routes::AdminState;
use super::skills::SkillsAdmin;

/// Largest upload: a zip, or a folder's files as base64 JSON (a third larger).
const MAX_UPLOAD: usize = 64 * 1024 * 1024;

type Answer = Result<Json<Value>, ApiError>;

pub fn router() -> Router<Arc<AdminState>> {
    Router::new()
        .route(
            "/api/skills/import",
            post(import_upload).layer(DefaultBodyLimit::max(MAX_UPLOAD)),
        )
        .route("/api/skills/quarantine", get(list_quarantine))
        .route("/api/skills/quarantine/{name}", delete(discard))
        .route("/api/skills/quarantine/{name}/release", post(release))
        .route("/api/skills/sync", get(sync_state).post(sync_now))
}

fn skills(state: &AdminState) -> Result<&SkillsAdmin, ApiError> {
    state
        .skills
        .as_ref()
        .ok_or_else(|| ApiError::Conflict("skills are off (skills.enabled: false)".into()))
}

/// A folder upload: each file with its path relative to the chosen folder.
#[derive(Deserialize)]
struct Folder {
    files: Vec<UploadedFile>,
}

#[derive(Deserialize)]
struct UploadedFile {
    path: String,
    content_base64: String,
}

async fn import_upload(
    State(state): State<Arc<AdminState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Answer {
    let dir = skills(&state)?.dir.clone();
    let kind = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let staging = tempfile::Builder::new()
        .prefix(".upload-")
        .tempdir_in(&dir)
        .map_err(|e| {
            ApiError::Internal(format!("cannot stage the upload in {}: {e}", dir.display()))
        })?;
    let source = if kind.starts_with("application/zip") || kind.starts_with("application/x-zip") {
        let file = staging.path().join("upload.zip");
        std::fs::write(&file, &body).map_err(|e| ApiError::Internal(e.to_string()))?;
        file
    } else if kind.starts_with("application/json") {
        let folder: Folder = serde_json::from_slice(&body).map_err(|e| {
            ApiError::BadRequest(format!(
                "expected {{\"files\": [{{\"path\", \"content_base64\"}}]}}: {e}"
            ))
        })?;
        unpack_folder(staging.path(), &folder)?;
        staging.path().to_path_buf()
    } else {
        return Err(ApiError::BadRequest(
            "send a .zip (Content-Type: application/zip) or a folder's files as JSON".into(),
        ));
    };
    let items = tokio::task::spawn_blocking(move || {
        let out = import(&dir, &source);
        drop(staging);
        out
    })
    .await?
    .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    Ok(Json(json!({ "items": items })))
}

/// Writes the uploaded files under `root`, refusing paths that would leave it.
fn unpack_folder(root: &FsPath, folder: &Folder) -> Result<(), ApiError> {
    if folder.files.is_empty() {
        return Err(ApiError::BadRequest("the folder is empty".into()));
    }
    for f in &folder.files {
        let rel = PathBuf::from(&f.path);
        let plain =
            !f.path.is_empty() && rel.components().all(|c| matches!(c, Component::Normal(_)));
        if !plain {
            return Err(ApiError::BadRequest(format!(
                "{:?} is not a path inside the folder",
                f.path
            )));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&f.content_base64)
            .map_err(|e| ApiError::BadRequest(format!("{}: not base64: {e}", f.path)))?;
        let target = root.join(rel);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| ApiError::Internal(e.to_string()))?;
        }
        std::fs::write(&target, bytes).map_err(|e| ApiError::Internal(e.to_string()))?;
    }
    Ok(())
}

async fn list_quarantine(State(state): State<Arc<AdminState>>) -> Answer {
    let dir = skills(&state)?.dir.clone();
    let held = tokio::task::spawn_blocking(move || quarantine::list(&dir)).await?;
    Ok(Json(json!({ "quarantined": held })))
}

async fn release(State(state): State<Arc<AdminState>>, Path(name): Path<String>) -> Answer {
    let dir = skills(&state)?.dir.clone();
    let held = name.clone();
    tokio::task::spawn_blocking(move || quarantine::release(&dir, &held))
        .await?
        .map_err(|e| ApiError::NotFound(e.to_string()))?;
    Ok(Json(json!({ "released": name })))
}

async fn discard(State(state): State<Arc<AdminState>>, Path(name): Path<String>) -> Answer {
    let dir = skills(&state)?.dir.clone();
    let held = name.clone();
    tokio::task::spawn_blocking(move || quarantine::delete(&dir, &held))
        .await?
        .map_err(|e| ApiError::NotFound(e.to_string()))?;
    Ok(Json(json!({ "deleted": name })))
}

async fn sync_state(State(state): State<Arc<AdminState>>) -> Answer {
    let skills = skills(&state)?;
    let dir = skills.dir.clone();
    let manifest = tokio::task::spawn_blocking(move || Manifest::load(&dir))
        .await?
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(Json(json!({
        "enabled": skills.team.is_some(),
        "remote": skills.team.as_ref().map(|t| t.shown_remote()),
        "last_sync_ms": manifest.last_sync_ms,
        "last_error": manifest.last_error,
        "pending": manifest.pending,
        "deleted": manifest.deleted,
    })))
}

async fn sync_now(State(state): State<Arc<AdminState>>) -> Answer {
    let skills = skills(&state)?;
    let team = skills.team.clone().ok_or_else(|| {
        ApiError::Unavailable(
            "no team library: set skills.sync.remote (any git URL your git reaches)".into(),
        )
    })?;
    let dir = skills.dir.clone();
    let report = tokio::task::spawn_blocking(move || sync(&dir, &team))
        .await?
        .map_err(|e| ApiError::BadGateway(e.to_string()))?;
    Ok(Json(json!({ "report": report })))
}
