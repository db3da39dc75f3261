//! `/api/skills`: the library as the engine serves it — list, one skill, search with scores,
//! the evolution log, enable/disable and edit. Writes go to the files; the watcher picks
//! them up like any other edit, so there is one path for every change.

use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use metaclaw_skills::{Skill, parse_skill, render_skill, write_skill_atomically};
use metaclaw_store::Store;
use serde::Deserialize;
use serde_json::{Value, json};

use super::routes::{AdminState, error};
use crate::config::SkillRetrieval;
use crate::skills::evolution::Evolution;
use crate::skills::{CurrentSkills, SemanticQuery};

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

fn off() -> Response {
    error(
        StatusCode::CONFLICT,
        "skills are off (skills.enabled: false)",
    )
}

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

async fn list(State(state): State<Arc<AdminState>>) -> Response {
    let Some(skills) = state.skills.as_ref() else {
        return off();
    };
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
    Json(json!({"generation": snapshot.generation, "skills": list, "errors": errors}))
        .into_response()
}

async fn show(State(state): State<Arc<AdminState>>, Path(name): Path<String>) -> Response {
    let Some(skills) = state.skills.as_ref() else {
        return off();
    };
    let snapshot = skills.current.get();
    match snapshot.library.get(&name) {
        Some(s) => {
            let mut v = skill_json(s, true);
            v["file"] = Value::String(render_skill(s).unwrap_or_default());
            Json(v).into_response()
        }
        None => error(StatusCode::NOT_FOUND, &format!("no skill named `{name}`")),
    }
}

#[derive(Deserialize)]
struct SearchQuery {
    q: String,
    limit: Option<usize>,
}

/// Every matching skill with its score and matched terms (and its cosine when a semantic
/// index is in force), and which of them a turn with this text would get injected. The
/// ranking follows the mode: BM25F, cosine, or both fused.
async fn search(State(state): State<Arc<AdminState>>, Query(q): Query<SearchQuery>) -> Response {
    let Some(skills) = state.skills.as_ref() else {
        return off();
    };
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
    Json(json!({
        "query": q.q,
        "generation": snapshot.generation,
        "mode": skills.mode,
        // Whether this answer used the semantic index (else it is lexical: template mode,
        // vectors not loaded yet, or the embeddings API failed for this query).
        "semantic": similar.is_some(),
        "semantic_index_skills": snapshot.semantic().map(|i| i.len()),
        "injected": injected,
        "ranked": ranked,
    }))
    .into_response()
}

#[derive(Deserialize)]
struct LogQuery {
    limit: Option<usize>,
}

async fn log(State(state): State<Arc<AdminState>>, Query(q): Query<LogQuery>) -> Response {
    let db = state.db.clone();
    let limit = q.limit.unwrap_or(20).min(1000);
    let result = tokio::task::spawn_blocking(move || {
        let store = Store::open_read_only(&db)?;
        Ok::<_, metaclaw_store::StoreError>((
            store.skill_events(limit)?,
            store.skill_event_counts()?,
        ))
    })
    .await;
    match result {
        Ok(Ok((events, counts))) => {
            Json(json!({"events": events, "counts": counts})).into_response()
        }
        Ok(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

#[derive(Deserialize)]
struct Edit {
    /// The whole `SKILL.md`, frontmatter included.
    text: String,
}

/// Replaces a skill's file with `text` after checking it parses and keeps its name.
async fn edit(
    State(state): State<Arc<AdminState>>,
    Path(name): Path<String>,
    Json(edit): Json<Edit>,
) -> Response {
    let Some(skills) = state.skills.as_ref() else {
        return off();
    };
    let skill = match parse_skill(&edit.text, None) {
        Ok((skill, _warnings)) => skill,
        Err(e) => return error(StatusCode::BAD_REQUEST, &e.to_string()),
    };
    if skill.name != name {
        return error(
            StatusCode::BAD_REQUEST,
            &format!(
                "the file names `{}`; renaming is not an edit (create the new skill, then delete the old one)",
                skill.name
            ),
        );
    }
    write(skills, skill).await
}

async fn enable(State(state): State<Arc<AdminState>>, Path(name): Path<String>) -> Response {
    set_disabled(&state, &name, false).await
}

async fn disable(State(state): State<Arc<AdminState>>, Path(name): Path<String>) -> Response {
    set_disabled(&state, &name, true).await
}

async fn set_disabled(state: &AdminState, name: &str, disabled: bool) -> Response {
    let Some(skills) = state.skills.as_ref() else {
        return off();
    };
    let Some(mut skill) = skills.current.get().library.get(name).cloned() else {
        return error(StatusCode::NOT_FOUND, &format!("no skill named `{name}`"));
    };
    skill.disabled = disabled;
    write(skills, skill).await
}

async fn write(skills: &SkillsAdmin, skill: Skill) -> Response {
    let dir = skills.dir.clone();
    let json = skill_json(&skill, true);
    match tokio::task::spawn_blocking(move || write_skill_atomically(&dir, &skill)).await {
        Ok(Ok(_)) => Json(json).into_response(),
        Ok(Err(e)) => error(StatusCode::BAD_REQUEST, &e.to_string()),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

#[derive(Deserialize)]
struct EvolveRequest {
    session_id: String,
}

/// Evolves on a session's turns now (those not evolved on yet) and answers with the event.
async fn evolve(State(state): State<Arc<AdminState>>, Json(req): Json<EvolveRequest>) -> Response {
    let Some(skills) = state.skills.as_ref() else {
        return off();
    };
    let Some(evolution) = &skills.evolution else {
        return error(
            StatusCode::CONFLICT,
            "no evolver model is configured (set llm.* or skills.evolver_model)",
        );
    };
    match evolution.evolve_session(&req.session_id).await {
        Some(outcome) => Json(outcome).into_response(),
        None => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the evolution queue is full or stopped; try again",
        ),
    }
}
