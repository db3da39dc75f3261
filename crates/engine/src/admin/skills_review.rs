//! `/api/skills/proposals…` and `/api/skills/{name}/history`, `/rollback`: learned skills
//! waiting for approval (`skills.review: ask`) and every skill's earlier versions. Like the
//! CLI, these work on the library's files; the watcher serves the result on the next turn.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use metaclaw_skills::{history, proposals};
use serde::Deserialize;
use serde_json::{Value, json};

use super::api_error::ApiError;
use super::routes::AdminState;
use super::skills::skills;
use crate::clock::unix_ms;
use crate::events::EngineEvent;
use crate::store_access;

type Answer = Result<Json<Value>, ApiError>;

pub fn router() -> Router<Arc<AdminState>> {
    Router::new()
        .route("/api/skills/proposals", get(list))
        .route("/api/skills/proposals/{name}/approve", post(approve))
        .route("/api/skills/proposals/{name}/reject", post(reject))
        .route("/api/skills/{name}/history", get(versions))
        .route("/api/skills/{name}/rollback", post(rollback))
}

/// Reads the body as `T`; an empty body or `null` is `T::default()`, so the plain action
/// needs none.
fn optional<T: for<'de> Deserialize<'de> + Default>(body: &Bytes) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice::<Option<T>>(body)
        .map(Option::unwrap_or_default)
        .map_err(|e| ApiError::BadRequest(format!("body: {e}")))
}

fn current_text(dir: &std::path::Path, name: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(name).join("SKILL.md")).ok()
}

/// Each proposal with its file and the library's current file of that name (none for a
/// new skill), so the reviewer sees the change.
async fn list(State(state): State<Arc<AdminState>>) -> Answer {
    let dir = skills(&state)?.dir.clone();
    let items = tokio::task::spawn_blocking(move || {
        proposals::list(&dir)
            .into_iter()
            .map(|p| {
                let mut v = json!(p);
                v["text"] = json!(proposals::text(&dir, &p.name).ok());
                v["current"] = json!(current_text(&dir, &p.name));
                v
            })
            .collect::<Vec<_>>()
    })
    .await?;
    Ok(Json(json!({ "proposals": items })))
}

#[derive(Deserialize, Default)]
struct Approve {
    /// The whole `SKILL.md` as the reviewer edited it; absent: as proposed.
    text: Option<String>,
}

async fn approve(
    State(state): State<Arc<AdminState>>,
    Path(name): Path<String>,
    body: Bytes,
) -> Answer {
    let library = skills(&state)?;
    let dir = library.dir.clone();
    let edit: Approve = optional(&body)?;
    let approved = name.clone();
    let before = library.generation();
    tokio::task::spawn_blocking(move || proposals::approve(&dir, &approved, edit.text.as_deref()))
        .await?
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    // Answered once the skill is live: a screen reloading the library then lists it.
    library.served_after(before).await;
    proposals_changed(&state);
    Ok(Json(json!({ "approved": name })))
}

/// Tells the tray and open screens that one fewer proposal waits (no new names: nothing to
/// notify about).
fn proposals_changed(state: &AdminState) {
    state
        .events
        .emit(EngineEvent::SkillProposed { names: Vec::new() });
}

async fn reject(State(state): State<Arc<AdminState>>, Path(name): Path<String>) -> Answer {
    let dir = skills(&state)?.dir.clone();
    let rejected = name.clone();
    tokio::task::spawn_blocking(move || proposals::reject(&dir, &rejected))
        .await?
        .map_err(|e| ApiError::NotFound(e.to_string()))?;
    proposals_changed(&state);
    Ok(Json(json!({ "rejected": name })))
}

/// The current file and each earlier version, newest first, each with what followed the
/// main turns that carried the skill while that version was in the library.
async fn versions(State(state): State<Arc<AdminState>>, Path(name): Path<String>) -> Answer {
    let dir = skills(&state)?.dir.clone();
    let (shown, dir2) = (name.clone(), dir.clone());
    let listed = tokio::task::spawn_blocking(move || -> Result<_, ApiError> {
        let versions =
            history::list(&dir2, &shown).map_err(|e| ApiError::BadRequest(e.to_string()))?;
        let texts: Vec<Option<String>> = versions
            .iter()
            .map(|v| {
                history::read(&dir2, &shown, v.n)
                    .ok()
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
            })
            .collect();
        Ok((versions, texts, current_text(&dir2, &shown)))
    })
    .await??;
    let (versions, texts, current) = listed;
    if current.is_none() && versions.is_empty() {
        return Err(ApiError::NotFound(format!("no skill named `{name}`")));
    }
    let now = unix_ms(SystemTime::now());
    // The current file has been live since the newest version was replaced.
    let since = versions.first().map_or(0, |v| v.replaced_ms);
    let windows: Vec<(i64, i64)> = std::iter::once((clamp(since), now.saturating_add(1)))
        .chain(
            versions
                .iter()
                .map(|v| (clamp(v.written_ms), clamp(v.replaced_ms))),
        )
        .collect();
    let effects = effects(state.db.clone(), name.clone(), windows).await;
    let mut effects = effects.into_iter();
    let current_effect = effects.next().flatten();
    let versions: Vec<Value> = versions
        .into_iter()
        .zip(texts)
        .zip(effects)
        .map(|((v, text), effect)| {
            let mut out = json!(v);
            out["text"] = json!(text);
            out["effect"] = json!(effect);
            out
        })
        .collect();
    Ok(Json(json!({
        "name": name,
        "current": {"text": current, "since_ms": since, "effect": current_effect},
        "versions": versions,
    })))
}

fn clamp(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// What followed each window's turns; `None` per window when the database cannot say
/// (none yet), so the history is still shown.
async fn effects(
    db: PathBuf,
    name: String,
    windows: Vec<(i64, i64)>,
) -> Vec<Option<metaclaw_store::Outcome>> {
    let n = windows.len();
    let read = store_access::read(db, move |store| -> Result<_, ApiError> {
        windows
            .iter()
            .map(|&(from, to)| Ok(Some(store.carried_between(&name, from, to)?)))
            .collect::<Result<Vec<_>, ApiError>>()
    })
    .await;
    read.unwrap_or_else(|_| vec![None; n])
}

#[derive(Deserialize, Default)]
struct Rollback {
    /// The version to restore; absent: the newest.
    to: Option<u32>,
}

async fn rollback(
    State(state): State<Arc<AdminState>>,
    Path(name): Path<String>,
    body: Bytes,
) -> Answer {
    let library = skills(&state)?;
    let dir = library.dir.clone();
    let asked: Rollback = optional(&body)?;
    let target = name.clone();
    let before = library.generation();
    let restored = tokio::task::spawn_blocking(move || history::rollback(&dir, &target, asked.to))
        .await?
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    library.served_after(before).await;
    Ok(Json(json!({ "name": name, "restored": restored })))
}
