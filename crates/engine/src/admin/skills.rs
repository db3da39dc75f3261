//! `/api/skills`: the library as the engine serves it — list, one skill, search with scores,
//! the evolution log, enable/disable and edit. Writes go to the files; the watcher picks
//! them up like any other edit, so there is one path for every change.

use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use metaclaw_skills::{Skill, history, parse_skill, render_skill};
use serde::Deserialize;
use serde_json::{Value, json};

use super::api_error::ApiError;
use super::routes::AdminState;
use crate::config::SkillRetrieval;
use crate::skills::evolution::Evolution;
use crate::skills::{CurrentSkills, SemanticQuery};
use crate::store_access;

/// What the skills routes need from the engine.
#[derive(Clone)]
pub struct SkillsAdmin {
    pub current: CurrentSkills,
    pub dir: PathBuf,
    /// `None` when no evolver model is configured.
    pub evolution: Option<Evolution>,
    /// `skills.retrieval_mode`, as configured.
    pub mode: SkillRetrieval,
    /// The query side of semantic retrieval; `None` in template mode or without an API.
    pub semantic: Option<Arc<SemanticQuery>>,
    /// The team library (`skills.sync.remote`), when one is set.
    pub team: Option<metaclaw_skills::team::Team>,
    /// The generation of the library in force, changed by the watcher after each reload.
    pub swapped: tokio::sync::watch::Receiver<u64>,
}

/// How long a change made through the API waits for the library to serve it.
const SERVE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

impl SkillsAdmin {
    /// The generation in force now; read before a write, for [`Self::served_after`].
    pub(super) fn generation(&self) -> u64 {
        *self.swapped.borrow()
    }

    /// Returns once the library in force is newer than `before` (the watcher picked up the
    /// file just written), or after [`SERVE_WAIT`]: an answer then means the change is live,
    /// so a screen reloading the list shows it.
    pub(super) async fn served_after(&self, before: u64) {
        let mut swapped = self.swapped.clone();
        let _ = tokio::time::timeout(SERVE_WAIT, swapped.wait_for(|g| *g != before)).await;
    }
}

pub fn router() -> Router<Arc<AdminState>> {
    Router::new()
        .route("/api/skills", get(list))
        .route("/api/skills/search", get(search))
        .route("/api/skills/log", get(log))
        .route("/api/skills/evolve", post(evolve))
        .route("/api/skills/{name}", get(show).put(edit))
        .route("/api/skills/{name}/enable", post(enable))
        .route("/api/skills/{name}/disable", post(disable))
}

/// The skills routes' state, or 409 when skills are off.
pub(super) fn skills(state: &AdminState) -> Result<&SkillsAdmin, ApiError> {
    state
        .skills
        .as_ref()
        .ok_or_else(|| ApiError::Conflict("skills are off (skills.enabled: false)".into()))
}

fn no_skill(name: &str) -> ApiError {
    ApiError::NotFound(format!("no skill named `{name}`"))
}

type Answer = Result<Json<Value>, ApiError>;

/// The listing fields; `body` only when asked for one skill.
pub fn skill_json(s: &Skill, with_body: bool) -> Value {
    let mut v = json!({
        "name": s.name, "description": s.description, "category": s.category,
        "tags": s.tags, "always": s.always, "disabled": s.disabled, "source": s.source,
        "provenance": s.provenance,
    });
    if with_body {
        v["body"] = Value::String(s.body.clone());
    }
    v
}

async fn list(State(state): State<Arc<AdminState>>) -> Answer {
    let skills = skills(&state)?;
    let snapshot = skills.current.get();
    let list: Vec<Value> = snapshot
        .library
        .skills
        .iter()
        .map(|s| skill_json(s, false))
        .collect();
    let errors: Vec<String> = snapshot
        .library
        .errors
        .iter()
        .map(ToString::to_string)
        .collect();
    Ok(Json(
        json!({"generation": snapshot.generation, "skills": list, "errors": errors}),
    ))
}

async fn show(State(state): State<Arc<AdminState>>, Path(name): Path<String>) -> Answer {
    let snapshot = skills(&state)?.current.get();
    let s = snapshot.library.get(&name).ok_or_else(|| no_skill(&name))?;
    let mut v = skill_json(s, true);
    v["file"] = Value::String(render_skill(s).unwrap_or_default());
    Ok(Json(v))
}

#[derive(Deserialize)]
struct SearchQuery {
    q: String,
    limit: Option<usize>,
}

/// Every matching skill with its score and matched terms (and its cosine when a semantic
/// index is in force), and which of them a turn with this text would get injected. The
/// ranking follows the mode: BM25F, cosine, or both fused.
async fn search(State(state): State<Arc<AdminState>>, Query(q): Query<SearchQuery>) -> Answer {
    let skills = skills(&state)?;
    let snapshot = skills.current.get();
    let similar = match &skills.semantic {
        Some(semantic) => semantic
            .similar(&snapshot, &q.q)
            .await
            .map(|sim| (semantic, sim)),
        None => None,
    };
    let (injected, ranked) = match &similar {
        Some((semantic, sim)) => (
            snapshot
                .retriever
                .retrieve_fused(&q.q, sim, semantic.fusion, semantic.min_similarity),
            snapshot.retriever.rank_fused(&q.q, sim, semantic.fusion),
        ),
        None => (snapshot.retrieve(&q.q), snapshot.retriever.rank(&q.q)),
    };
    let injected: Vec<String> = injected.into_iter().map(|h| h.name).collect();
    let ranked: Vec<Value> = ranked
        .into_iter()
        .take(q.limit.unwrap_or(20).min(500))
        .map(|h| {
            let mut v = json!({"name": h.name, "score": h.score, "matched_terms": h.matched_terms,
                               "injected": injected.contains(&h.name)});
            if let Some(cosine) = h.cosine {
                v["cosine"] = json!(cosine);
            }
            v
        })
        .collect();
    Ok(Json(json!({
        "query": q.q,
        "generation": snapshot.generation,
        "mode": skills.mode,
        // Whether this answer used the semantic index (else it is lexical: template mode,
        // vectors not loaded yet, or the embeddings API failed for this query).
        "semantic": similar.is_some(),
        "semantic_index_skills": snapshot.semantic().map(|i| i.len()),
        "injected": injected,
        "ranked": ranked,
    })))
}

#[derive(Deserialize)]
struct LogQuery {
    limit: Option<usize>,
}

async fn log(State(state): State<Arc<AdminState>>, Query(q): Query<LogQuery>) -> Answer {
    let limit = q.limit.unwrap_or(20).min(1000);
    store_access::read(state.db.clone(), move |store| {
        let (events, counts) = (store.skill_events(limit)?, store.skill_event_counts()?);
        Ok(Json(json!({"events": events, "counts": counts})))
    })
    .await
}

#[derive(Deserialize)]
struct Edit {
    /// The whole `SKILL.md`, frontmatter included.
    text: String,
}

/// Replaces a skill's file with `text` after checking it parses and keeps its name; the
/// file it replaces is kept in the skill's history.
async fn edit(
    State(state): State<Arc<AdminState>>,
    Path(name): Path<String>,
    Json(edit): Json<Edit>,
) -> Answer {
    let skills = skills(&state)?;
    let (skill, _warnings) =
        parse_skill(&edit.text, None).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    if skill.name != name {
        return Err(ApiError::BadRequest(format!(
            "the file names `{}`; renaming is not an edit (create the new skill, then delete the old one)",
            skill.name
        )));
    }
    write(skills, skill).await
}

async fn enable(State(state): State<Arc<AdminState>>, Path(name): Path<String>) -> Answer {
    set_disabled(&state, &name, false).await
}

async fn disable(State(state): State<Arc<AdminState>>, Path(name): Path<String>) -> Answer {
    set_disabled(&state, &name, true).await
}

async fn set_disabled(state: &AdminState, name: &str, disabled: bool) -> Answer {
    let skills = skills(state)?;
    let mut skill = skills
        .current
        .get()
        .library
        .get(name)
        .cloned()
        .ok_or_else(|| no_skill(name))?;
    skill.disabled = disabled;
    write(skills, skill).await
}

async fn write(skills: &SkillsAdmin, skill: Skill) -> Answer {
    let dir = skills.dir.clone();
    let json = skill_json(&skill, true);
    let before = skills.generation();
    // A file the library refuses to write is the request's fault: nothing was changed.
    let changed = tokio::task::spawn_blocking(move || {
        let file = dir.join(&skill.name).join("SKILL.md");
        let old = std::fs::read(&file).ok();
        history::replace(&dir, &skill, "edited").map(|_| std::fs::read(&file).ok() != old)
    })
    .await?
    .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    if changed {
        skills.served_after(before).await;
    }
    Ok(Json(json))
}

#[derive(Deserialize)]
struct EvolveRequest {
    session_id: String,
}

/// Evolves on a session's turns now (those not evolved on yet) and answers with the event.
async fn evolve(
    State(state): State<Arc<AdminState>>,
    Json(req): Json<EvolveRequest>,
) -> Result<Response, ApiError> {
    let Some(evolution) = &skills(&state)?.evolution else {
        return Err(ApiError::Conflict(
            "no evolver model is configured (set llm.* or skills.evolver_model)".into(),
        ));
    };
    match evolution.evolve_session(&req.session_id).await {
        Some(outcome) => Ok(Json(outcome).into_response()),
        None => Err(ApiError::Unavailable(
            "the evolution queue is full or stopped; try again".into(),
        )),
    }
}
