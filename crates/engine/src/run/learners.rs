//! Start phase 2: the learners. The training windows first (the jobs may wait on them),
//! then weight learning's samples, the recorder, the live skill library, skill evolution and
//! memory, each worker under the engine's supervisor. After the proxy is bound (`follow`):
//! the request-activity watcher and weight learning's loops.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use metaclaw_proxy::SharedState;
use metaclaw_schedule::clock::{Clock, SystemClock};
use metaclaw_schedule::idle::LastActivity;
use metaclaw_skills::retrieval::Fusion;

use crate::config::{Config, EmbeddingSource, SkillRetrieval};
use crate::embeddings::{self, Embeddings, LocalModel, QueryEmbedder};
use crate::events::Events;
use crate::llm::Endpoint;
use crate::memory::{Memory, MemoryConfig, MemorySettings, Policies, Vectors, policies};
use crate::paths::Paths;
use crate::recorder::{self, RecorderHandle, RecorderWorker};
use crate::schedule::{self, Gate, Windows};
use crate::secrets::SecretStore;
use crate::skills::evolution::{Evolution, EvolutionSettings, Worker};
use crate::skills::{SemanticQuery, SemanticSetup, SkillsRuntime};
use crate::supervise::Supervisor;

use super::EngineError;
use super::resolve::{JobModels, Resolved};

/// Turns waiting for the recorder; beyond this, turns are dropped (counted) rather than
/// slowing the agent down.
const RECORDER_CAPACITY: usize = 4096;

pub(super) struct Learners {
    pub windows: Windows,
    pub last_request: LastActivity,
    pub learning: Option<crate::rl::Learning>,
    pub recorder: RecorderHandle,
    pub worker: RecorderWorker,
    /// `None` when skills are off.
    pub skills: Option<SkillsRuntime>,
    pub semantic_query: Option<Arc<SemanticQuery>>,
    /// What skills and memory are found by meaning with; `None` when neither uses it.
    pub embeddings: Option<Embeddings>,
    pub evolution: Option<Evolution>,
    pub memory: Option<Memory>,
}

pub(super) async fn start(
    resolved: &Resolved,
    models: JobModels,
    paths: &Paths,
    events: &Events,
    tasks: &Supervisor,
) -> Result<Learners, EngineError> {
    let config = &resolved.config;
    let last_request = LastActivity::new(SystemClock.now());
    let windows = start_scheduler(config, paths, &resolved.secrets, &last_request, tasks).await?;
    let gate = if config.scheduler.gate_background_learning {
        Gate::new(windows.clone())
    } else {
        Gate::ungated()
    };
    let learning = resolved.rl.clone().and_then(|settings| {
        crate::rl::Learning::new(settings, events.clone())
            .inspect_err(
                |e| tracing::warn!(error = %e, "weight learning is off: cannot open its samples"),
            )
            .ok()
    });
    let (recorder, worker) = recorder::start(&paths.db, RECORDER_CAPACITY)
        .map_err(|e| EngineError::Recorder(e.to_string()))?;
    let source = embeddings_source(config, paths, models.embeddings, tasks);
    let embedder = query_embedder(config, source.as_ref());
    let semantic = config
        .skills
        .enabled
        .then(|| semantic_setup(config, paths, source.clone()))
        .flatten();
    let semantic_query = semantic
        .as_ref()
        .zip(embedder.clone())
        .map(|(s, e)| Arc::new(SemanticQuery::new(s, e)));
    let skills = if config.skills.enabled {
        let (dir, db) = (config.skills_dir(paths), paths.db.clone());
        let retrieval = retrieval_config(config);
        Some(SkillsRuntime::start_with(dir, db, retrieval, semantic, tasks).await)
    } else {
        None
    };
    let background = Background {
        recorder: &recorder,
        events,
        tasks,
    };
    let evolution = start_evolution(
        config,
        paths,
        skills.as_ref(),
        models.evolver,
        &background,
        gate.clone(),
    );
    if config.skills.enabled {
        crate::skills::team_sync::start(config, paths, background.events, background.tasks);
    }
    let vectors = memory_vectors(config, paths, source.clone(), embedder);
    let memory = start_memory(config, paths, models.extractor, vectors, &background, gate);
    Ok(Learners {
        windows,
        last_request,
        learning,
        recorder,
        worker,
        skills,
        semantic_query,
        embeddings: source,
        evolution,
        memory,
    })
}

/// Once the proxy is bound: agent requests count as activity for the idle window, and
/// weight learning connects, judges, trains and (when configured) rolls out against it.
pub(super) fn follow(
    learners: &Learners,
    config: &Config,
    state: &SharedState,
    addr: SocketAddr,
    tasks: &Supervisor,
) {
    schedule::follow_requests(
        state.clone(),
        learners.last_request.clone(),
        schedule::idle_threshold(config),
        tasks,
    );
    let Some(learning) = &learners.learning else {
        return;
    };
    let injector = state.injector.clone();
    // `madmax` trains only inside windows; `rl` as soon as a batch is full.
    let gate = if config.mode == crate::config::Mode::Madmax {
        Gate::new(learners.windows.clone())
    } else {
        Gate::ungated()
    };
    learning.spawn(Arc::new(move || injector.generation()), gate, tasks);
    let key = state.config.api_key.clone();
    crate::rl::rollout::spawn(learning, &config.rl, addr, key, tasks);
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
    recorder: &'a RecorderHandle,
    events: &'a Events,
    tasks: &'a Supervisor,
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
            policies: Arc::new(Policies::new(policies::configured(
                &config.memory,
                config.skills.embedding_source() == EmbeddingSource::Local,
            ))),
            vectors,
            events: background.events.clone(),
        },
        gate,
        background.tasks,
    ))
}

/// Where vectors come from when skills or memory are retrieved by meaning: the local model
/// (loaded, or downloaded first, in the background) or the embeddings API.
fn embeddings_source(
    config: &Config,
    paths: &Paths,
    api: Option<Endpoint>,
    tasks: &Supervisor,
) -> Option<Embeddings> {
    if !super::resolve::wants_embeddings(config) {
        return None;
    }
    match config.skills.embedding_source() {
        EmbeddingSource::Api => {
            let Some(endpoint) = api else {
                tracing::warn!(
                    "skills.embedding_source is api but no embeddings API resolves (set skills.embedding_api_base, or use an openai llm.api_base); skills and memories are found by their words only"
                );
                return None;
            };
            let http = background_http("retrieval by meaning")?;
            Some(Embeddings::Api { endpoint, http })
        }
        EmbeddingSource::Local | EmbeddingSource::Auto => {
            let model = LocalModel::new(
                paths.embedding_models(),
                &metaclaw_embed::DEFAULT_MANIFEST.name,
            );
            embeddings::prepare(Arc::clone(&model), config.skills.embedding_download, tasks);
            Some(Embeddings::Local(model))
        }
    }
}

/// The per-turn query embedding, shared by skills and memory; `skills.embedding_timeout_ms`
/// bounds what a turn waits for it.
fn query_embedder(config: &Config, source: Option<&Embeddings>) -> Option<Arc<QueryEmbedder>> {
    let timeout = Duration::from_millis(config.skills.embedding_timeout_ms);
    source.map(|s| Arc::new(QueryEmbedder::new(s.clone(), timeout)))
}

/// Unit embeddings for memory in the `hybrid` and `embedding` retrieval modes; `None`
/// otherwise, or without a source (then memory is found by words).
fn memory_vectors(
    config: &Config,
    paths: &Paths,
    source: Option<Embeddings>,
    embedder: Option<Arc<QueryEmbedder>>,
) -> Option<Arc<Vectors>> {
    policies::semantic_mode(&config.memory)?;
    if !config.memory.enabled {
        return None;
    }
    let (source, embedder) = (source?, embedder?);
    Some(Arc::new(Vectors::new(source, paths.db.clone(), embedder)))
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
                review: config.skills.review,
            },
        },
        gate,
        background.events.clone(),
        background.tasks,
    ))
}

/// What the `embedding` and `hybrid` modes need; `None` in `template` mode, or without a
/// source (then retrieval is lexical).
fn semantic_setup(
    config: &Config,
    paths: &Paths,
    source: Option<Embeddings>,
) -> Option<SemanticSetup> {
    let fusion = match config.skills.retrieval_mode {
        SkillRetrieval::Template => return None,
        SkillRetrieval::Embedding => Fusion::Embedding,
        SkillRetrieval::Hybrid => Fusion::Hybrid,
    };
    Some(SemanticSetup {
        source: source?,
        fusion,
        min_similarity: config.skills.min_similarity,
        db: paths.db.clone(),
    })
}

/// `skills.top_k` / `task_specific_top_k` / `standing_tokens` over the measured thresholds.
fn retrieval_config(config: &Config) -> metaclaw_skills::retrieval::RetrievalConfig {
    metaclaw_skills::retrieval::RetrievalConfig {
        top_k: config.skills.top_k as usize,
        task_specific_top_k: config.skills.task_specific_top_k as usize,
        standing_tokens: config.skills.standing_tokens as usize,
        ..Default::default()
    }
}
