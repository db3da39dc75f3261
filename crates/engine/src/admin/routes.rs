//! Admin routes. Store reads happen on blocking threads, never on the agent API's path.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Query, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use metaclaw_proxy::SharedState;
use metaclaw_proxy::seams::TurnSink;
use metaclaw_store::Store;
use serde::Deserialize;
use serde_json::{Value, json};
use subtle::ConstantTimeEq;
use tokio_util::sync::CancellationToken;

use super::agents::AgentsAdmin;
use super::api_error::ApiError;
use super::skills::{self, SkillsAdmin};
use super::status::{
    Health, LearningModel, MemoryStatus, SkillsStatus, Status, TeamStatus, UpstreamStatus,
    WechatStatus,
};
use super::{memory, memory_policy};
use crate::config::Config;
use crate::memory::Memory;
use crate::recorder::RecorderHandle;
use crate::store_access;

/// What the admin routes read.
pub struct AdminState {
    pub proxy: SharedState,
    /// Where the engine actually listens (`--port 0` picks a free port).
    pub addr: std::net::SocketAddr,
    pub token: String,
    pub config: Config,
    pub config_warnings: Vec<String>,
    pub upstreams: Vec<UpstreamStatus>,
    pub started: Instant,
    pub db: PathBuf,
    pub home: PathBuf,
    pub log_dir: PathBuf,
    pub recorder: RecorderHandle,
    pub shutdown: CancellationToken,
    /// The engine's background tasks (`/api/status` reports them).
    pub tasks: crate::supervise::Supervisor,
    /// `None` when skills are off.
    pub skills: Option<SkillsAdmin>,
    /// `None` when memory is off.
    pub memory: Option<Memory>,
    /// `/api/agents`: where agents are pointed, and writes to their files one at a time.
    pub agents: AgentsAdmin,
    /// `/api/scheduler`: training windows and the pause (every mode).
    pub scheduler: crate::schedule::Windows,
    /// `POST /api/restart`.
    pub restart: crate::run::RestartHandle,
    pub events: crate::events::Events,
    /// `/api/learning`, `/v1/admin/train_step`: `None` unless the mode trains weights.
    pub learning: Option<crate::rl::Learning>,
    /// The model each learning purpose (`evolution`, `extraction`, `embeddings`) calls, to
    /// price its recorded tokens.
    pub learning_models: std::collections::BTreeMap<String, String>,
    /// `/api/wechat`: OpenClaw's WeChat plugin, its install and QR login.
    pub wechat: crate::wechat::Wechat,
    /// Retrieval by meaning's source, for status.
    pub embeddings: Option<crate::embeddings::Embeddings>,
    /// `/api/storage`: the database's size and retention.
    pub storage: crate::storage::Storage,
    /// Whether a newer version exists or is installed already.
    pub updates: crate::updates::Updates,
}

pub fn router(state: Arc<AdminState>) -> Router {
    Router::new()
        .route("/api/status", get(status))
        .route("/api/config", get(config))
        .route("/api/turns", get(turns))
        .route("/api/recorder/flush", post(flush))
        .route("/api/shutdown", post(shutdown))
        .route("/api/restart", post(restart))
        .merge(skills::router())
        .merge(super::skills_exchange::router())
        .merge(super::skills_review::router())
        .merge(memory::router())
        .merge(memory_policy::router())
        .merge(super::memory_profile::router())
        .merge(super::providers::router())
        .merge(super::agents::router())
        .merge(super::scheduler::router())
        .merge(super::setup::router())
        .merge(super::settings::router())
        .merge(super::stats::router())
        .merge(super::logs::router())
        .merge(super::events::router())
        .merge(super::learning::router())
        .merge(super::turn_usage::router())
        .merge(super::learning_usage::router())
        .merge(super::cost::router())
        .merge(super::updates::router())
        .merge(super::effect::router())
        .merge(super::wechat::router())
        .merge(super::embeddings::router())
        .merge(super::storage::router())
        .merge(super::plugin::router())
        .route_layer(middleware::from_fn_with_state(state.clone(), require_token))
        .with_state(state)
}

async fn require_token(State(state): State<Arc<AdminState>>, req: Request, next: Next) -> Response {
    let presented = metaclaw_proxy::bearer_token(req.headers()).unwrap_or_default();
    if bool::from(presented.as_bytes().ct_eq(state.token.as_bytes())) {
        return next.run(req).await;
    }
    error(
        StatusCode::UNAUTHORIZED,
        "admin API needs `Authorization: Bearer <token>` from $METACLAW_HOME/run/admin_token",
    )
}

pub(super) fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": {"message": message}}))).into_response()
}

async fn status(State(state): State<Arc<AdminState>>) -> Response {
    let db = state.db.clone();
    // A missing or locked database must not break status: the counts are then 0 and the
    // health section says why.
    let (turns, evolution, memory, unreadable) = tokio::task::spawn_blocking(move || {
        if !db.exists() {
            let problem = format!("the database file {} is missing", db.display());
            return (0, Default::default(), None, Some(problem));
        }
        let store = match Store::open_read_only(&db) {
            Ok(s) => s,
            Err(e) => {
                let problem = format!("the database cannot be read: {e}");
                return (0, Default::default(), None, Some(problem));
            }
        };
        let (turns, unreadable) = match store.stats() {
            Ok(s) => (s.turns, None),
            Err(e) => (0, Some(format!("the database cannot be read: {e}"))),
        };
        let memory = metaclaw_memory::db::stats(store.connection(), None).ok();
        (
            turns,
            store.skill_event_counts().unwrap_or_default(),
            memory,
            unreadable,
        )
    })
    .await
    .unwrap_or_default();
    let health = health(&state, unreadable).await;
    let memory = state.memory.as_ref().map(|_| {
        let m = memory.unwrap_or_default();
        MemoryStatus {
            active: m.active,
            pinned: m.pinned,
            superseded: m.superseded,
            archived: m.archived,
            scopes: m.scopes.len(),
        }
    });
    let exchange = match &state.skills {
        Some(s) => {
            let (dir, team) = (s.dir.clone(), s.team.clone());
            tokio::task::spawn_blocking(move || {
                let held = metaclaw_skills::quarantine::list(&dir).len();
                let synced = team.map(|t| {
                    let m = metaclaw_skills::team::Manifest::load(&dir).unwrap_or_default();
                    TeamStatus {
                        remote: t.shown_remote(),
                        last_sync_ms: m.last_sync_ms,
                        last_error: m.last_error,
                    }
                });
                (held, synced)
            })
            .await
            .unwrap_or_default()
        }
        None => (0, None),
    };
    let skills = state.skills.as_ref().map(|s| {
        let snapshot = s.current.get();
        let library = &snapshot.library;
        let mut by_source = std::collections::BTreeMap::new();
        for skill in &library.skills {
            let word = serde_json::to_value(skill.source)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            *by_source.entry(word).or_insert(0) += 1;
        }
        SkillsStatus {
            by_source,
            quarantined: exchange.0,
            team: exchange.1.clone(),
            count: library.len(),
            disabled: library.skills.iter().filter(|s| s.disabled).count(),
            broken_files: library.errors.len(),
            generation: snapshot.generation,
            evolutions: evolution.events,
            evolutions_failed: evolution.failed,
            skills_added: evolution.skills_added,
            skills_improved: evolution.skills_improved,
            last_evolution_at_ms: evolution.last_at_ms,
        }
    });
    let wechat = {
        let w = state.wechat.clone();
        tokio::task::spawn_blocking(move || w.view())
            .await
            .ok()
            .filter(|v| v.state != crate::wechat::State::Off)
            .map(|v| WechatStatus {
                state: v.state.name().to_owned(),
                line: v.line,
            })
    };
    let stats = state.proxy.stats.snapshot();
    let body = Status {
        version: metaclaw_updates::version::current().to_owned(),
        pid: std::process::id(),
        mode: state.config.mode.to_string(),
        listen: state.addr.to_string(),
        uptime_secs: state.started.elapsed().as_secs(),
        upstreams: state.upstreams.clone(),
        requests: stats.requests,
        errors: stats.errors,
        last_error: stats.last_error,
        last_error_at_ms: stats.last_error_at_ms,
        sessions_open: state.proxy.sessions.open_count(),
        turns_recorded: turns,
        recorder_queue: state.recorder.queue_depth(),
        recorder_dropped: state.recorder.dropped(),
        home: state.home.display().to_string(),
        log_dir: state.log_dir.display().to_string(),
        skills,
        memory,
        health,
        learning_calls: crate::llm::calls::snapshot(),
        tasks: state.tasks.report(),
        wechat,
        embeddings: state.embeddings.as_ref().map(|e| e.status()),
        storage: Some(state.storage.status()),
        update: Some(state.updates.status()),
        learning_model: LearningModel::new(
            state
                .skills
                .as_ref()
                .is_some_and(|_| state.config.skills.auto_evolve),
            state.memory.is_some() && state.config.memory.auto_extract,
            &state.learning_models,
        ),
    };
    Json(body).into_response()
}

/// Lost recordings, failing learning jobs (those that failed since start) and the
/// database's state.
async fn health(state: &AdminState, unreadable: Option<String>) -> Health {
    let recorder = state.recorder.health();
    let mut learning = Vec::new();
    if let Some(e) = state.skills.as_ref().and_then(|s| s.evolution.as_ref()) {
        learning.push(e.health());
    }
    if let Some(m) = &state.memory {
        learning.push(m.health());
    }
    if let Some(l) = &state.learning {
        let (l, mode) = (l.clone(), state.config.mode);
        let error = tokio::task::spawn_blocking(move || l.view(mode).last_error)
            .await
            .ok()
            .flatten();
        if let Some(e) = error {
            learning.push(crate::llm::pacing::JobHealth {
                job: "rl_trainer".into(),
                failures: 1,
                last_error: Some(e),
                ..Default::default()
            });
        }
    }
    learning.retain(|j| j.failures > 0);
    Health {
        database: recorder.database_problem.clone().or(unreadable),
        recorder,
        learning,
    }
}

async fn config(State(state): State<Arc<AdminState>>) -> Response {
    let config = serde_json::to_value(&state.config).unwrap_or(Value::Null);
    Json(json!({"config": config, "warnings": state.config_warnings})).into_response()
}

#[derive(Deserialize)]
struct TurnsQuery {
    limit: Option<usize>,
    session: Option<String>,
}

async fn turns(
    State(state): State<Arc<AdminState>>,
    Query(q): Query<TurnsQuery>,
) -> Result<Json<Value>, ApiError> {
    store_access::read(state.db.clone(), move |store| {
        let rows = match q.session {
            Some(s) => store.session_turns(&s)?,
            None => store.recent_turns(q.limit.unwrap_or(50).min(1000))?,
        };
        Ok(Json(json!({"turns": rows})))
    })
    .await
}

/// Waits until every turn queued so far is committed (tests, and `metaclaw stop`).
async fn flush(State(state): State<Arc<AdminState>>) -> Result<Json<Value>, ApiError> {
    let recorder = state.recorder.clone();
    tokio::task::spawn_blocking(move || recorder.flush()).await??;
    Ok(Json(json!({"ok": true})))
}

/// New settings take effect: the engine stops and its host starts it again on the same
/// address with the same admin token (`metaclaw start` and the desktop app both do).
async fn restart(State(state): State<Arc<AdminState>>) -> Response {
    tracing::info!("restart requested through the admin API");
    state.restart.restart();
    Json(json!({"ok": true})).into_response()
}

async fn shutdown(State(state): State<Arc<AdminState>>) -> Response {
    tracing::info!("shutdown requested through the admin API");
    state.shutdown.cancel();
    Json(json!({"ok": true})).into_response()
}
