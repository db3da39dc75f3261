//! Starting and stopping the engine: config, secrets, recorder, proxy, admin API, run files.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use metaclaw_proxy::seams::TurnSink;
use metaclaw_proxy::{AppState, SharedState};
use metaclaw_schedule::clock::{Clock, SystemClock};
use metaclaw_schedule::idle::LastActivity;
use metaclaw_skills::retrieval::Fusion;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::admin::{self, AdminState, AgentsAdmin, SkillsAdmin, UpstreamStatus};
use crate::config::{Config, ConfigError, Overrides, SkillRetrieval};
use crate::context::{ContextInjector, SqliteSticky};
use crate::events::{EngineEvent, Events};
use crate::llm::{self, Endpoint, QueryEmbedder};
use crate::memory::compat::{self, CompatState};
use crate::memory::{Memory, MemoryConfig, MemorySettings, Policies, Vectors, policies};
use crate::paths::{Paths, PathsError};
use crate::recorder::{self, RecorderWorker};
use crate::runfiles::{self, InstanceLock, RunError, RunInfo};
use crate::schedule::{self, Gate, Windows};
use crate::secrets::{SecretError, SecretStore, ensure_proxy_key};
use crate::skills::evolution::{Evolution, EvolutionSettings, LearningSink, Worker};
use crate::skills::{SemanticQuery, SemanticSetup, SkillsRuntime};
use crate::supervise::Supervisor;
use crate::wiring::{self, LLM_KEY, WiringError};

/// Turns waiting for the recorder; beyond this, turns are dropped (counted) rather than
/// slowing the agent down.
const RECORDER_CAPACITY: usize = 4096;
/// How long shutdown and restart wait for background tasks before aborting them.
const TASKS_DEADLINE: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Paths(#[from] PathsError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Secret(#[from] SecretError),
    #[error(transparent)]
    Wiring(#[from] WiringError),
    #[error(transparent)]
    Run(#[from] RunError),
    #[error("cannot open the database: {0}")]
    Recorder(String),
    #[error("{0}")]
    Bind(String),
    #[error("internal task failed: {0}")]
    Task(String),
}

#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    pub overrides: Overrides,
    /// The admin token to publish instead of a fresh one (kept across a restart).
    pub admin_token: Option<String>,
    /// The host's event bus: it outlives restarts, so the host subscribes once.
    pub events: Events,
}

impl StartOptions {
    /// The options for starting again after `engine` stopped for a restart: same address,
    /// same admin token, same event bus; the config file is read afresh.
    pub fn for_restart(mut self, addr: SocketAddr, admin_token: &str) -> Self {
        self.overrides.port = Some(addr.port());
        self.admin_token = Some(admin_token.to_owned());
        self
    }
}

/// Asks a running engine to stop so its host starts it again ([`Stopped::Restart`]): what
/// `POST /api/restart` and the tray's Mode ▸ do.
#[derive(Debug, Clone)]
pub struct RestartHandle {
    asked: Arc<AtomicBool>,
    shutdown: CancellationToken,
    events: Events,
}

impl RestartHandle {
    pub fn restart(&self) {
        self.asked.store(true, Ordering::SeqCst);
        self.events.emit(EngineEvent::Restarting);
        self.shutdown.cancel();
    }

    fn asked(&self) -> bool {
        self.asked.load(Ordering::SeqCst)
    }
}

/// Why [`Engine::wait`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// Signal, `metaclaw stop`, Quit: the host exits.
    Shutdown,
    /// New settings were applied (`POST /api/restart`): the host starts the engine again with
    /// [`StartOptions::for_restart`].
    Restart,
}

/// A running engine. Dropping it without [`Engine::wait`] leaves the server task running until
/// the process exits; call [`Engine::shutdown`] then `wait` for a clean stop.
pub struct Engine {
    addr: SocketAddr,
    shutdown: CancellationToken,
    server: oneshot::Receiver<std::io::Result<()>>,
    tasks: Supervisor,
    recorder: RecorderWorker,
    skills: Option<SkillsRuntime>,
    paths: Paths,
    scheduler: Windows,
    admin_token: String,
    restart: RestartHandle,
    events: Events,
    _lock: InstanceLock,
}

impl Engine {
    pub async fn start(paths: Paths, options: StartOptions) -> Result<Engine, EngineError> {
        paths.ensure_dirs()?;
        let loaded = Config::load(&paths)?;
        for w in &loaded.warnings {
            tracing::warn!("{w}");
        }
        let mut config = loaded.config.clone();
        config.apply(options.overrides);
        let lock = InstanceLock::acquire(&paths)?;
        install_skills(config.skills_dir(&paths)).await;

        // Keychain access blocks (D-Bus); keep it off the runtime's worker threads.
        let secrets = SecretStore::open(&paths)?.with_legacy(loaded.legacy_secrets.clone());
        let (proxy_config, upstreams, models, rl_settings) = {
            let secrets = secrets.clone();
            let config = config.clone();
            let paths = paths.clone();
            tokio::task::spawn_blocking(move || -> Result<_, EngineError> {
                let key = ensure_proxy_key(&secrets)?;
                let proxy = wiring::proxy_config(&config, &secrets, Some(key))?;
                let upstreams = upstream_status(&proxy, &config, &secrets);
                let rl = crate::rl::wants_rl(config.mode)
                    .then(|| crate::rl::resolve(&config, &paths, &secrets))
                    .transpose()?;
                let models = JobModels {
                    evolver: llm::evolver_endpoint(&config, &secrets),
                    embeddings: wants_embeddings(&config)
                        .then(|| llm::embedding_endpoint(&config, &secrets))
                        .flatten(),
                    extractor: llm::extractor_endpoint(&config, &secrets),
                };
                Ok((proxy, upstreams, models, rl))
            })
            .await
            .map_err(|e| EngineError::Task(e.to_string()))??
        };
        let mut learning_models = models.by_purpose();
        if let Some(rl) = &rl_settings {
            let judged = rl.judge.as_ref().map(|j| ("judge", &j.model));
            let taught = rl.teacher.as_ref().map(|t| ("distillation", &t.model));
            for (purpose, model) in judged.into_iter().chain(taught) {
                learning_models.insert(purpose.to_owned(), model.clone());
            }
        }
        if proxy_config.upstreams.is_empty() {
            tracing::warn!(
                "no LLM provider configured: requests will get a 503 until `metaclaw config set llm.api_base <url>` (and llm.api_key) and a restart"
            );
        }

        let shutdown = CancellationToken::new();
        let tasks = Supervisor::new(shutdown.clone());
        // Before the learning jobs: they may wait on its windows.
        let last_request = LastActivity::new(SystemClock.now());
        let windows = start_scheduler(&config, &paths, &secrets, &last_request, &tasks).await?;
        let gate = if config.scheduler.gate_background_learning {
            Gate::new(windows.clone())
        } else {
            Gate::ungated()
        };

        let learning = rl_settings.and_then(|settings| {
            crate::rl::Learning::new(settings, options.events.clone())
                .inspect_err(|e| tracing::warn!(error = %e, "weight learning is off: cannot open its samples"))
                .ok()
        });
        let (recorder, worker) = recorder::start(&paths.db, RECORDER_CAPACITY)
            .map_err(|e| EngineError::Recorder(e.to_string()))?;
        let embedder = query_embedder(&config, models.embeddings.as_ref());
        let semantic = config
            .skills
            .enabled
            .then(|| semantic_setup(&config, &paths, models.embeddings.clone()))
            .flatten();
        let semantic_query = semantic
            .as_ref()
            .zip(embedder.clone())
            .map(|(s, e)| Arc::new(SemanticQuery::new(s, e)));
        let skills = if config.skills.enabled {
            let (dir, db) = (config.skills_dir(&paths), paths.db.clone());
            let retrieval = retrieval_config(&config);
            Some(SkillsRuntime::start_with(dir, db, retrieval, semantic, &tasks).await)
        } else {
            None
        };
        let background = Background {
            recorder: &recorder,
            events: &options.events,
            tasks: &tasks,
        };
        let evolution = start_evolution(
            &config,
            &paths,
            skills.as_ref(),
            models.evolver,
            &background,
            gate.clone(),
        );
        let vectors = memory_vectors(&config, &paths, models.embeddings, embedder);
        let memory = start_memory(
            &config,
            &paths,
            models.extractor,
            vectors,
            &background,
            gate,
        );
        let sink: Arc<dyn TurnSink> = Arc::new(LearningSink {
            recorder: recorder.clone(),
            evolution: evolution.clone(),
            memory: memory.clone(),
            events: options.events.clone(),
            learning: learning.clone(),
            answered: Default::default(),
        });
        let injector = ContextInjector::new(
            skills.as_ref().map(|s| s.current.clone()),
            semantic_query.clone(),
            memory.clone(),
            config.injection.token_budget as usize,
        );
        let sticky = {
            let (db, recorder) = (paths.db.clone(), recorder.clone());
            tokio::task::spawn_blocking(move || SqliteSticky::open(db, recorder))
                .await
                .map_err(|e| EngineError::Task(e.to_string()))?
                .map_err(|e| EngineError::Recorder(e.to_string()))?
        };
        let mut app_state = AppState::new(
            proxy_config,
            Arc::new(injector),
            sink,
            config.memory.scope.clone(),
        )
        .map_err(|e| EngineError::Bind(format!("cannot build the HTTP client: {e}")))?
        .with_sticky_store(Arc::new(sticky));
        if let Some(learning) = &learning {
            app_state = app_state.with_local_model(learning.model());
        }
        let state: SharedState = Arc::new(app_state);
        if let Some(memory) = &memory {
            let readers = memory.readers().clone();
            state.sessions.on_quiet(Box::new(move || readers.release()));
        }
        {
            let recorder = recorder.clone();
            state
                .sessions
                .on_quiet(Box::new(move || recorder.release_memory()));
        }
        metaclaw_proxy::check_bind(&state).map_err(EngineError::Bind)?;
        let bind = state.config.bind;
        let listener = TcpListener::bind(bind).await.map_err(|e| {
            EngineError::Bind(format!(
                "cannot listen on {bind}: {e} (is another program using port {}? choose another with --port or `metaclaw config set proxy.port N`)",
                bind.port()
            ))
        })?;
        let addr = listener
            .local_addr()
            .map_err(|e| EngineError::Bind(e.to_string()))?;
        schedule::follow_requests(state.clone(), last_request, &tasks);
        if let Some(learning) = &learning {
            let injector = state.injector.clone();
            // `madmax` trains only inside windows; `rl` as soon as a batch is full.
            let gate = if config.mode == crate::config::Mode::Madmax {
                Gate::new(windows.clone())
            } else {
                Gate::ungated()
            };
            learning.spawn(Arc::new(move || injector.generation()), gate, &tasks);
            let key = state.config.api_key.clone();
            crate::rl::rollout::spawn(learning, &config.rl, addr, key, &tasks);
        }

        let run_info = RunInfo::publish(&paths, addr.port(), options.admin_token.as_deref())?;
        let token = run_info
            .admin_token
            .as_ref()
            .map(|t| t.expose().to_string())
            .unwrap_or_default();
        let restart = RestartHandle {
            asked: Arc::new(AtomicBool::new(false)),
            shutdown: shutdown.clone(),
            events: options.events.clone(),
        };
        let (agents_admin, reconnect) = {
            // Agents are pointed at the port actually listened on (`--port 0` included).
            let mut config = config.clone();
            config.proxy.port = addr.port();
            AgentsAdmin::new(paths.clone(), secrets.clone(), config)
        };
        let admin_state = Arc::new(AdminState {
            proxy: state.clone(),
            addr,
            token: token.clone(),
            config: config.clone(),
            config_warnings: loaded.warnings.clone(),
            upstreams,
            started: Instant::now(),
            db: paths.db.clone(),
            home: paths.home.clone(),
            log_dir: paths.logs.clone(),
            recorder,
            shutdown: shutdown.clone(),
            tasks: tasks.clone(),
            skills: skills.as_ref().map(|s| SkillsAdmin {
                current: s.current.clone(),
                dir: s.dir.clone(),
                evolution: evolution.clone(),
                mode: config.skills.retrieval_mode,
                semantic: semantic_query.clone(),
            }),
            memory: memory.clone(),
            agents: agents_admin,
            scheduler: windows.clone(),
            restart: restart.clone(),
            events: options.events.clone(),
            learning: learning.clone(),
            learning_models,
        });
        let compat = Arc::new(CompatState {
            proxy: state.clone(),
            memory: memory.clone(),
            recorder: admin_state.recorder.clone(),
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
            metaclaw_proxy::serve(listener, app, state.clone(), shutdown.clone()),
        );
        tracing::info!(%addr, mode = %config.mode, "MetaClaw is serving");
        // Once listening, so a restarted agent finds MetaClaw; off the start path. Agent
        // writes through the admin API wait for it.
        reconnect.spawn();
        options.events.emit(EngineEvent::Started {
            addr: addr.to_string(),
        });
        Ok(Engine {
            addr,
            shutdown,
            server,
            tasks,
            recorder: worker,
            skills,
            paths,
            scheduler: windows,
            admin_token: token,
            restart,
            events: options.events,
            _lock: lock,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Cancel to stop the engine (signals, `metaclaw stop`, the tray's Quit).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// The training windows (the tray's learning line, Pause and Resume).
    pub fn scheduler(&self) -> Windows {
        self.scheduler.clone()
    }

    /// The admin token this run published (the desktop window passes it to the UI).
    pub fn admin_token(&self) -> &str {
        &self.admin_token
    }

    /// For a host that restarts the engine itself (the tray's Mode ▸).
    pub fn restart_handle(&self) -> RestartHandle {
        self.restart.clone()
    }

    /// The bus the engine reports on (the one passed in [`StartOptions`]).
    pub fn events(&self) -> Events {
        self.events.clone()
    }

    pub fn shutdown(&self) {
        self.shutdown.cancel();
    }

    /// Waits until shutdown, then drains the recorder and removes the run files. Says whether
    /// the host should start the engine again.
    pub async fn wait(self) -> Result<Stopped, EngineError> {
        let served = self.server.await;
        // Dropping the library's watcher ends its reload task; every other task watches
        // the token or ends with its queue. Learning steps and extractions in progress get
        // a moment to finish their writes before the recorder drains.
        drop(self.skills);
        self.shutdown.cancel();
        self.tasks.join(TASKS_DEADLINE).await;
        // The server ended every open session; those events are queued before this drain.
        let worker = self.recorder;
        let drained = tokio::task::spawn_blocking(move || worker.shutdown())
            .await
            .map_err(|e| EngineError::Task(e.to_string()))?;
        runfiles::clear_if_owned(&self.paths, std::process::id())?;
        drained.map_err(|e| EngineError::Recorder(e.to_string()))?;
        match served {
            Ok(Ok(())) if self.restart.asked() => Ok(Stopped::Restart),
            Ok(Ok(())) => Ok(Stopped::Shutdown),
            Ok(Err(e)) => Err(EngineError::Bind(e.to_string())),
            Err(_) => Err(EngineError::Task(
                "the proxy server stopped unexpectedly".into(),
            )),
        }
    }
}

/// Fills the user's library with the built-in bank on first run and brings untouched
/// built-ins up to date; skills the user edited or deleted are left alone. A failure here
/// costs the user skills, not the proxy, so it is logged and start-up goes on.
async fn install_skills(dir: std::path::PathBuf) {
    let shown = dir.display().to_string();
    match tokio::task::spawn_blocking(move || metaclaw_skills::install_builtins(&dir)).await {
        Ok(Ok(report)) => tracing::info!(
            dir = %shown,
            installed = report.installed.len(),
            updated = report.updated.len(),
            kept_user_edits = report.kept_user_edits.len(),
            "skill library ready"
        ),
        Ok(Err(e)) => tracing::warn!(error = %e, "could not install the built-in skills"),
        Err(e) => tracing::warn!(error = %e, "could not install the built-in skills"),
    }
}

/// The training-window service, ticking until `shutdown`. Built off the runtime's workers:
/// finding the X display connects to it.
async fn start_scheduler(
    config: &Config,
    paths: &Paths,
    secrets: &SecretStore,
    last_request: &LastActivity,
    tasks: &Supervisor,
) -> Result<Windows, EngineError> {
    let (config, paths, secrets) = (config.clone(), paths.clone(), secrets.clone());
    let (last, tasks) = (last_request.clone(), tasks.clone());
    tokio::task::spawn_blocking(move || schedule::start(&config, &paths, &secrets, last, &tasks))
        .await
        .map_err(|e| EngineError::Task(e.to_string()))
}

/// What every learning worker is started with.
struct Background<'a> {
    recorder: &'a crate::recorder::RecorderHandle,
    events: &'a Events,
    tasks: &'a Supervisor,
}

/// Models the background jobs call, resolved once at start (reading keys blocks).
struct JobModels {
    evolver: Option<Endpoint>,
    embeddings: Option<Endpoint>,
    extractor: Option<Endpoint>,
}

impl JobModels {
    /// The model each learning purpose calls, as recorded in `learning_usage`.
    fn by_purpose(&self) -> std::collections::BTreeMap<String, String> {
        [
            ("evolution", &self.evolver),
            ("extraction", &self.extractor),
            ("embeddings", &self.embeddings),
        ]
        .into_iter()
        .filter_map(|(purpose, e)| Some((purpose.to_owned(), e.as_ref()?.model.clone())))
        .collect()
    }
}

/// The memory service, when memory is on. Without an extraction model the rule-based
/// extractor runs instead, so memory works offline too.
fn start_memory(
    config: &Config,
    paths: &Paths,
    extractor: Option<Endpoint>,
    vectors: Option<Arc<Vectors>>,
    background: &Background<'_>,
    gate: Gate,
) -> Option<Memory> {
    if !config.memory.enabled {
        return None;
    }
    if extractor.is_none() {
        tracing::info!("memory extraction uses the rule-based extractor: no model configured");
    }
    let http = background_http("memory")?;
    Some(Memory::start_supervised(
        MemoryConfig {
            db: paths.db.clone(),
            recorder: background.recorder.clone(),
            endpoint: extractor,
            http,
            settings: MemorySettings {
                auto: config.memory.auto_extract && !config.memory.manual_trigger,
                flush_every: config.memory.flush_every,
                consolidate: config.memory.auto_consolidate,
                adaptive: config.memory.adaptive_policy,
            },
            policies: Arc::new(Policies::new(policies::configured(&config.memory))),
            vectors,
            events: background.events.clone(),
        },
        gate,
        background.tasks,
    ))
}

/// Whether skills or memory retrieve by meaning, and so need an embeddings API.
fn wants_embeddings(config: &Config) -> bool {
    config.skills.enabled && config.skills.retrieval_mode != SkillRetrieval::Template
        || config.memory.enabled && policies::semantic_mode(&config.memory).is_some()
}

/// The per-turn query embedding, shared by skills and memory; `skills.embedding_timeout_ms`
/// bounds what a turn waits for it.
fn query_embedder(config: &Config, endpoint: Option<&Endpoint>) -> Option<Arc<QueryEmbedder>> {
    let http = background_http("retrieval by meaning")?;
    let timeout = Duration::from_millis(config.skills.embedding_timeout_ms);
    endpoint.map(|e| Arc::new(QueryEmbedder::new(e.clone(), http, timeout)))
}

/// Unit embeddings for memory in the `hybrid` and `embedding` retrieval modes; `None`
/// otherwise, or without an embeddings API (then memory is found by words, and the log
/// says why once).
fn memory_vectors(
    config: &Config,
    paths: &Paths,
    endpoint: Option<Endpoint>,
    embedder: Option<Arc<QueryEmbedder>>,
) -> Option<Arc<Vectors>> {
    let mode = policies::semantic_mode(&config.memory)?;
    if !config.memory.enabled {
        return None;
    }
    let (Some(endpoint), Some(embedder)) = (endpoint, embedder) else {
        tracing::warn!(
            ?mode,
            "memory.retrieval_mode needs an embeddings API (set skills.embedding_api_base, or use an openai llm.api_base); memory is found by words only"
        );
        return None;
    };
    let http = background_http("memory embeddings")?;
    Some(Arc::new(Vectors::new(
        endpoint,
        http,
        paths.db.clone(),
        embedder,
    )))
}

/// An HTTP client for a background job; `None` (logged, naming what is off) if the TLS
/// backend cannot start.
fn background_http(what: &str) -> Option<reqwest::Client> {
    reqwest::Client::builder()
        .user_agent(concat!("metaclaw/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| tracing::warn!(error = %e, "{what} is off"))
        .ok()
}

/// The evolution worker, when skills are on and an evolver model resolves. Without one,
/// evolution is off and says so once, instead of failing at every session end.
fn start_evolution(
    config: &Config,
    paths: &Paths,
    skills: Option<&SkillsRuntime>,
    evolver: Option<Endpoint>,
    background: &Background<'_>,
    gate: Gate,
) -> Option<Evolution> {
    let skills = skills?;
    let Some(endpoint) = evolver else {
        tracing::info!(
            "skill evolution is off: no evolver model (set llm.* or skills.evolver_model)"
        );
        return None;
    };
    let http = background_http("skill evolution")?;
    Some(Evolution::start_supervised(
        Worker {
            endpoint,
            http,
            current: skills.current.clone(),
            swapped: skills.swapped.clone(),
            dir: skills.dir.clone(),
            db: paths.db.clone(),
            recorder: background.recorder.clone(),
            settings: EvolutionSettings {
                auto: config.skills.auto_evolve,
                every_n_turns: config.skills.evolution_every_n_turns,
                max_new: config.skills.max_new_skills as usize,
            },
        },
        gate,
        background.events.clone(),
        background.tasks,
    ))
}

/// What the `embedding` and `hybrid` modes need; `None` in `template` mode, or when no
/// embeddings API resolves (then retrieval is lexical, and the log says why once).
fn semantic_setup(
    config: &Config,
    paths: &Paths,
    endpoint: Option<Endpoint>,
) -> Option<SemanticSetup> {
    let fusion = match config.skills.retrieval_mode {
        SkillRetrieval::Template => return None,
        SkillRetrieval::Embedding => Fusion::Embedding,
        SkillRetrieval::Hybrid => Fusion::Hybrid,
    };
    let Some(endpoint) = endpoint else {
        tracing::warn!(
            mode = ?config.skills.retrieval_mode,
            "skills.retrieval_mode needs an embeddings API (set skills.embedding_api_base, or use an openai llm.api_base); retrieval stays lexical"
        );
        return None;
    };
    let http = background_http("semantic skill retrieval")?;
    Some(SemanticSetup {
        endpoint,
        http,
        fusion,
        min_similarity: config.skills.min_similarity,
        db: paths.db.clone(),
    })
}

/// `skills.top_k` / `task_specific_top_k` over the measured thresholds.
fn retrieval_config(config: &Config) -> metaclaw_skills::retrieval::RetrievalConfig {
    metaclaw_skills::retrieval::RetrievalConfig {
        top_k: config.skills.top_k as usize,
        task_specific_top_k: config.skills.task_specific_top_k as usize,
        ..Default::default()
    }
}

fn upstream_status(
    proxy: &metaclaw_proxy::ProxyConfig,
    config: &Config,
    secrets: &SecretStore,
) -> Vec<UpstreamStatus> {
    proxy
        .upstreams
        .iter()
        .enumerate()
        .map(|(i, u)| {
            let account = if i == 0 {
                LLM_KEY.to_string()
            } else {
                config
                    .llm
                    .fallbacks
                    .get(i - 1)
                    .map(|f| f.key_account())
                    .unwrap_or_default()
            };
            UpstreamStatus {
                name: u.name.clone(),
                protocol: u.protocol.as_str().to_string(),
                base_url: u.base_url.clone(),
                model: u.model.clone(),
                key_source: secrets
                    .source_of(&account)
                    .ok()
                    .flatten()
                    .map_or_else(|| "none".to_string(), |s| s.to_string()),
            }
        })
        .collect()
}
