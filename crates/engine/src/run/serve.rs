//! Start phase 4: the run files (port, pid, admin token), the admin API, the memory
//! compatibility routes and the web UI merged into the proxy's router, and the server task;
//! then agents are pointed at the port actually listened on.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use metaclaw_proxy::SharedState;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::admin::{self, AdminState, AgentsAdmin, SkillsAdmin};
use crate::config::Config;
use crate::memory::compat::{self, CompatState};
use crate::paths::Paths;
use crate::runfiles::RunInfo;
use crate::supervise::Supervisor;

use super::learners::Learners;
use super::resolve::Resolved;
use super::{EngineError, RestartHandle, StartOptions};

/// What serving needs from the earlier phases.
pub(super) struct Serving<'a> {
    pub resolved: Resolved,
    pub learners: &'a Learners,
    pub paths: &'a Paths,
    pub state: SharedState,
    pub listener: TcpListener,
    pub addr: SocketAddr,
    pub restart: RestartHandle,
    pub tasks: &'a Supervisor,
}

/// The running server.
pub(super) struct Served {
    pub server: oneshot::Receiver<std::io::Result<()>>,
    /// The admin token this run published.
    pub token: String,
    pub wechat: crate::wechat::Wechat,
    pub updates: crate::updates::Updates,
}

pub(super) fn serve(s: Serving<'_>, options: &StartOptions) -> Result<Served, EngineError> {
    let Serving {
        resolved,
        learners,
        paths,
        state,
        listener,
        addr,
        restart,
        tasks,
    } = s;
    let config = resolved.config;
    let shutdown = tasks.shutdown_token();
    let run_info = RunInfo::publish(paths, addr.port(), options.admin_token.as_deref())?;
    let token = run_info
        .admin_token
        .as_ref()
        .map(|t| t.expose().to_string())
        .unwrap_or_default();
    let (agents_admin, reconnect) = {
        // Agents are pointed at the port actually listened on (`--port 0` included).
        let mut config = config.clone();
        config.proxy.port = addr.port();
        AgentsAdmin::new(paths.clone(), resolved.secrets.clone(), config)
    };
    let wechat = crate::wechat::Wechat::new(&config, options.events.clone());
    let storage = storage(&config, paths, learners, &state, &options.events);
    storage.start(tasks);
    let updates = crate::updates::Updates::start(&config.updates, options.events.clone(), tasks);
    let admin_state = Arc::new(AdminState {
        proxy: state.clone(),
        addr,
        token: token.clone(),
        config: config.clone(),
        config_warnings: resolved.warnings,
        upstreams: resolved.upstreams,
        started: Instant::now(),
        db: paths.db.clone(),
        home: paths.home.clone(),
        log_dir: paths.logs.clone(),
        recorder: learners.recorder.clone(),
        shutdown: shutdown.clone(),
        tasks: tasks.clone(),
        skills: learners.skills.as_ref().map(|s| SkillsAdmin {
            current: s.current.clone(),
            dir: s.dir.clone(),
            evolution: learners.evolution.clone(),
            mode: config.skills.retrieval_mode,
            semantic: learners.semantic_query.clone(),
            team: crate::skills::team_sync::team(&config, paths),
            swapped: s.swapped.clone(),
        }),
        memory: learners.memory.clone(),
        agents: agents_admin,
        scheduler: learners.windows.clone(),
        restart,
        events: options.events.clone(),
        learning: learners.learning.clone(),
        learning_models: resolved.learning_models,
        wechat: wechat.clone(),
        embeddings: learners.embeddings.clone(),
        storage,
        updates: updates.clone(),
    });
    let compat = Arc::new(CompatState {
        proxy: state.clone(),
        memory: learners.memory.clone(),
        recorder: learners.recorder.clone(),
        default_scope: config.memory.scope.clone(),
        flush_every: config.memory.flush_every,
    });
    let app = metaclaw_proxy::router(state.clone())
        .merge(compat::router(compat))
        .merge(admin::router(admin_state))
        .merge(crate::ui::router());
    let app = metaclaw_proxy::guard(app, state.clone());
    let server = tasks.spawn_answering(
        "proxy server",
        metaclaw_proxy::serve(listener, app, state, shutdown),
    );
    tracing::info!(%addr, mode = %config.mode, "MetaClaw is serving");
    // Once listening, so a restarted agent finds MetaClaw; off the start path. Agent
    // writes through the admin API wait for it.
    reconnect.spawn();
    wechat.on_start(tasks, options.wechat_relogin);
    Ok(Served {
        server,
        token,
        wechat,
        updates,
    })
}

/// Retention over the database, waiting for the learning jobs that are on.
fn storage(
    config: &Config,
    paths: &Paths,
    learners: &Learners,
    proxy: &SharedState,
    events: &crate::events::Events,
) -> crate::storage::Storage {
    let mut readers = crate::storage::Readers::default();
    if learners.evolution.is_some() {
        readers
            .session_marks
            .push(crate::storage::EVOLUTION_MARK.to_owned());
    }
    if learners.memory.is_some() && config.memory.auto_extract {
        readers
            .session_marks
            .push(crate::storage::EXTRACTION_MARK.to_owned());
    }
    let proxy = proxy.clone();
    crate::storage::Storage::new(
        paths.db.clone(),
        config.storage.clone(),
        readers,
        Arc::new(move || proxy.stats.snapshot().requests),
        learners.last_request.clone(),
        events.clone(),
    )
}
