//! The engine's memory: what the injector reads on the request path (read-only, pooled
//! connections) and the one background worker that writes — extraction after every
//! `memory.flush_every` main turns and at session end, on request, access statistics, the
//! adaptive retrieval policy, and unit embeddings.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use metaclaw_memory::adapt::{self, Evidence, Outcome};
use metaclaw_memory::consolidate::{self, ConsolidationPolicy, Step};
use metaclaw_memory::db;
use metaclaw_memory::{Found, Hit, Prepared, RenderedMemory, SearchQuery, search_with};
use tokio::sync::{mpsc, oneshot};

use super::error::MemoryServiceError;
use super::extraction::{Extracted, Extractor};
use super::policies::Policies;
use super::reader::Readers;
use super::vectors::Vectors;
use crate::clock::unix_ms;
use crate::events::{EngineEvent, Events};
use crate::llm::Endpoint;
use crate::llm::pacing::{Decision, Deferred, JobHealth, Pacing};
use crate::llm::queued::Queued;
use crate::recorder::RecorderHandle;
use crate::schedule::gate::{Done, Held, run_in_windows};
use crate::schedule::{Gate, StopSignal};
use crate::store_access;
use crate::supervise::Supervisor;

/// Jobs waiting; beyond this a trigger is dropped (logged): the next one reads the same
/// turns, since each reads everything not yet extracted.
const QUEUE: usize = 256;

#[derive(Debug, Clone)]
pub struct MemorySettings {
    /// `memory.auto_extract` and not `memory.manual_trigger`: the automatic triggers.
    pub auto: bool,
    /// `memory.flush_every`; 0 leaves only session end.
    pub flush_every: u32,
    /// `memory.auto_consolidate`: consolidate a scope after each extraction that changed it.
    pub consolidate: bool,
    /// `memory.adaptive_policy`: let retrieval outcomes tune each scope's policy.
    pub adaptive: bool,
}

#[derive(Clone)]
pub struct MemoryConfig {
    pub db: PathBuf,
    pub recorder: RecorderHandle,
    pub endpoint: Option<Endpoint>,
    pub http: reqwest::Client,
    pub settings: MemorySettings,
    /// Starts from the configured policy; scopes' stored policies are loaded as used.
    pub policies: Arc<Policies>,
    /// `None` in the `keyword` retrieval mode or without an embeddings API.
    pub vectors: Option<Arc<Vectors>>,
    /// `memory_changed` after extraction, consolidation and edits.
    pub events: Events,
}

enum Job {
    Extract {
        session: String,
        last: bool,
        /// Overrides the scope the turns were recorded in.
        scope: Option<String>,
        /// Asked for by a person: runs even while the model is backing off.
        explicit: bool,
        reply: Option<oneshot::Sender<Extracted>>,
    },
    Retrieved {
        scope: String,
        ids: Vec<String>,
        outcome: Outcome,
    },
    /// Build or refresh a scope's embedding index.
    Index(String),
    Consolidate {
        scope: String,
        reply: Option<oneshot::Sender<Result<Vec<Step>, MemoryServiceError>>>,
    },
}

/// Cheap to clone; never blocks the caller.
#[derive(Clone)]
pub struct Memory {
    tx: mpsc::Sender<Job>,
    readers: Readers,
    policies: Arc<Policies>,
    vectors: Option<Arc<Vectors>>,
    settings: MemorySettings,
    events: Events,
    /// Back-off of the extraction model after failed or unusable answers.
    pacing: Arc<Pacing>,
    /// Automatic extractions (`last` or not) that came while backing off, run by the
    /// worker once the back-off allows.
    deferred: Arc<Deferred<bool>>,
    /// Automatic extractions in the queue, by session and `last`.
    queued: Arc<Queued<(String, bool)>>,
}

impl Memory {
    pub fn start(config: MemoryConfig) -> Memory {
        Self::start_gated(config, Gate::ungated())
    }

    /// Like [`Memory::start`]; when `gate` is gated, consolidation after extraction waits
    /// for a training window (the scopes to consolidate are held until then). Extraction
    /// and consolidation asked for explicitly run at once.
    pub fn start_gated(config: MemoryConfig, gate: Gate) -> Memory {
        Self::start_supervised(config, gate, &Supervisor::detached())
    }

    /// [`Memory::start_gated`] with its worker under `tasks`: a worker that panics starts
    /// again on the same queue (the job it was running is lost, the queued ones are not).
    pub fn start_supervised(config: MemoryConfig, gate: Gate, tasks: &Supervisor) -> Memory {
        let (tx, rx) = mpsc::channel(QUEUE);
        let deferred = gate
            .is_gated()
            .then(|| defer_consolidation(tasks, gate, tx.downgrade()));
        let memory = Memory {
            tx,
            readers: Readers::new(config.db.clone()),
            policies: Arc::clone(&config.policies),
            vectors: config.vectors.clone(),
            settings: config.settings.clone(),
            events: config.events.clone(),
            pacing: Arc::new(Pacing::new("memory_extraction")),
            deferred: Arc::new(Deferred::default()),
            queued: Arc::new(Queued::default()),
        };
        let paced = (Arc::clone(&memory.pacing), Arc::clone(&memory.deferred));
        let queued = Arc::clone(&memory.queued);
        let rx = Arc::new(tokio::sync::Mutex::new(rx));
        tasks.spawn_restarting("memory worker", move || {
            let (config, rx, deferred) = (config.clone(), Arc::clone(&rx), deferred.clone());
            run(config, rx, deferred, paced.clone(), Arc::clone(&queued))
        });
        memory
    }

    /// Failing extractions and the back-off, for status.
    pub fn health(&self) -> JobHealth {
        self.pacing.health()
    }

    /// An automatic trigger is queued unless the model is backing off: then it is held
    /// until the back-off allows (once per session) and the turns wait. Once the model has
    /// failed too often, the rules read the turns at once.
    fn may_extract(&self, session_id: &str, last: bool) -> bool {
        let wait = matches!(self.pacing.decide(session_id, false), Decision::Wait);
        if wait {
            self.deferred.push(session_id, last);
        }
        !wait
    }

    /// What memory holds for a turn, before it is fitted to a budget ([`Self::render`]).
    /// Read-only. What needs no embedding (pinned units, the profile, full-text candidates)
    /// is read while the question is embedded; units close in meaning are added once its
    /// vector is known. `None` when the database cannot be read (logged): the turn is
    /// served without memories.
    pub async fn find(&self, scope: &str, query: &str) -> Option<TurnMemory> {
        let (readers, policies) = (self.readers.clone(), Arc::clone(&self.policies));
        let (name, text) = (scope.to_string(), query.to_string());
        let prepare = move |s: &metaclaw_store::Store| {
            let now = unix_ms(SystemTime::now());
            let policy = policies.get(s.connection(), &name);
            Prepared::new(s.connection(), &name, &text, policy, now)
        };
        let found = if let Some(vectors) = self.by_meaning(scope) {
            let by_words = tokio::task::spawn_blocking(move || readers.with(prepare));
            let (prepared, similar) = tokio::join!(by_words, vectors.similar(scope, query));
            let prepared = served_without_memories(prepared)?;
            let readers = self.readers.clone();
            tokio::task::spawn_blocking(move || {
                readers.with(|s| {
                    let similar = similar.as_deref().unwrap_or(&[]);
                    prepared.complete(s.connection(), similar)
                })
            })
            .await
        } else {
            // Nothing to wait for: one trip to a reader.
            tokio::task::spawn_blocking(move || {
                readers.with(|s| prepare(s).and_then(|p| p.complete(s.connection(), &[])))
            })
            .await
        };
        Some(TurnMemory {
            scope: scope.to_owned(),
            found: served_without_memories(found)?,
        })
    }

    /// The memory section of what [`Self::find`] found, within `budget` tokens (`None`
    /// when nothing fits or `budget` is 0). The units shown are counted as accessed by the
    /// worker, later, with what the retrieval found.
    pub fn render(&self, memory: TurnMemory, budget: usize) -> Option<RenderedMemory> {
        if budget == 0 {
            return None;
        }
        let retrieval = memory.found.render(budget);
        let job = Job::Retrieved {
            scope: memory.scope,
            ids: retrieval
                .rendered
                .as_ref()
                .map(|r| r.ids.clone())
                .unwrap_or_default(),
            outcome: retrieval.outcome,
        };
        if self.tx.try_send(job).is_err() {
            tracing::debug!("memory queue full; statistics of one retrieval skipped");
        }
        retrieval.rendered
    }

    /// The units of `scope` close to `query` in meaning, when embeddings are on and the
    /// scope's index is in; a missing or stale index (one built before the local model loaded)
    /// is queued for a rebuild, and this query is answered by words.
    async fn similar(&self, scope: &str, query: &str) -> Option<Vec<(String, f32)>> {
        self.by_meaning(scope)?.similar(scope, query).await
    }

    /// The vectors, when `scope` can be searched by meaning now (embeddings on, its index
    /// in and of the query's model). A missing or stale index is queued for a rebuild.
    fn by_meaning(&self, scope: &str) -> Option<&Arc<Vectors>> {
        let v = self.vectors.as_ref()?;
        if v.wants_refresh(scope) && self.tx.try_send(Job::Index(scope.to_owned())).is_err() {
            v.refresh_not_queued(scope);
            tracing::debug!("memory queue full; embedding refresh deferred");
        }
        v.searchable(scope).then_some(v)
    }

    /// A search for people and the compatibility route: the scope's policy, and units close
    /// in meaning when embeddings are on. Read-only (nothing is counted as accessed).
    pub async fn search(&self, q: SearchQuery) -> Result<Vec<Hit>, MemoryServiceError> {
        let similar = self.similar(&q.scope, &q.text).await;
        let (readers, policies) = (self.readers.clone(), Arc::clone(&self.policies));
        let hits = tokio::task::spawn_blocking(move || {
            let now = unix_ms(SystemTime::now());
            readers.with(|s| {
                let policy = policies.get(s.connection(), &q.scope);
                let similar = similar.as_deref().unwrap_or(&[]);
                search_with(s.connection(), &q, &policy, now, similar)
            })
        })
        .await???;
        Ok(hits)
    }

    /// Units were added or edited by a person: their vectors are computed now rather than
    /// when the index goes stale. `None`: every indexed scope (the caller does not know
    /// which changed).
    pub fn units_changed(&self, scope: Option<&str>) {
        self.events.emit(EngineEvent::MemoryChanged);
        let Some(v) = &self.vectors else {
            return;
        };
        let scopes = match scope {
            Some(s) => vec![s.to_owned()],
            None => v.indexed_scopes(),
        };
        for scope in scopes {
            if self.tx.try_send(Job::Index(scope)).is_err() {
                tracing::debug!("memory queue full; embedding refresh deferred");
            }
        }
    }

    /// A session's main turn was answered, its `answered`-th: every `memory.flush_every`
    /// of them trigger an extraction.
    pub fn main_turn(&self, session_id: &str, answered: u32) {
        let every = self.settings.flush_every;
        if !self.settings.auto || every == 0 || !answered.is_multiple_of(every) {
            return;
        }
        if self.may_extract(session_id, false) {
            self.enqueue(session_id, false);
        }
    }

    pub fn session_ended(&self, session_id: &str) {
        if self.settings.auto && self.may_extract(session_id, true) {
            self.enqueue(session_id, true);
        }
    }

    /// Extracts from a session now (CLI, admin), into `scope` when given, else the scope
    /// its turns were recorded in. Runs even while the model is backing off.
    pub async fn extract_now(
        &self,
        session_id: &str,
        last: bool,
        scope: Option<&str>,
    ) -> Option<Extracted> {
        self.extract_and_wait(session_id, last, scope, true).await
    }

    /// Like [`Memory::extract_now`], for callers that are not a person (the compatibility
    /// routes agents call): while the model is backing off the turns wait, or are read by
    /// the rules once it has failed too often.
    pub async fn extract_paced(
        &self,
        session_id: &str,
        last: bool,
        scope: Option<&str>,
    ) -> Option<Extracted> {
        self.extract_and_wait(session_id, last, scope, false).await
    }

    async fn extract_and_wait(
        &self,
        session_id: &str,
        last: bool,
        scope: Option<&str>,
        explicit: bool,
    ) -> Option<Extracted> {
        let (tx, rx) = oneshot::channel();
        let job = Job::Extract {
            session: session_id.to_string(),
            last,
            scope: scope.map(str::to_owned),
            explicit,
            reply: Some(tx),
        };
        if self.tx.try_send(job).is_err() {
            tracing::warn!(
                session = session_id,
                "memory queue full; this extraction is skipped"
            );
            return None;
        }
        rx.await.ok()
    }

    /// Consolidates a scope now (CLI, admin API).
    pub async fn consolidate_now(
        &self,
        scope: &str,
    ) -> Option<Result<Vec<Step>, MemoryServiceError>> {
        let (tx, rx) = oneshot::channel();
        let job = Job::Consolidate {
            scope: scope.to_string(),
            reply: Some(tx),
        };
        self.tx.try_send(job).ok()?;
        rx.await.ok()
    }

    pub fn readers(&self) -> &Readers {
        &self.readers
    }

    pub fn policies(&self) -> &Arc<Policies> {
        &self.policies
    }

    fn enqueue(&self, session: &str, last: bool) {
        let job = Job::Extract {
            session: session.to_string(),
            last,
            scope: None,
            explicit: false,
            reply: None,
        };
        self.queued.send(
            &self.tx,
            (session.to_owned(), last),
            job,
            "memory extraction",
        );
    }
}

/// Scopes to consolidate in the next window, run through the worker (the one writer) one
/// at a time under the window's permit. A consolidation is one short transaction: once
/// started it finishes; the scopes after it wait for the next window.
fn defer_consolidation(
    tasks: &Supervisor,
    gate: Gate,
    worker: mpsc::WeakSender<Job>,
) -> Arc<Held<String>> {
    let held = Arc::new(Held::default());
    run_in_windows(
        tasks,
        gate,
        "memory.consolidation",
        held.clone(),
        move |scope, _: StopSignal| {
            let worker = worker.clone();
            async move {
                let Some(tx) = worker.upgrade() else {
                    return Done::End;
                };
                let (reply, done) = oneshot::channel();
                let job = Job::Consolidate {
                    scope,
                    reply: Some(reply),
                };
                if tx.send(job).await.is_err() {
                    return Done::End;
                }
                drop(tx);
                match done.await {
                    Ok(_) => Done::Yes,
                    Err(_) => Done::End,
                }
            }
        },
    );
    held
}

async fn run(
    config: MemoryConfig,
    jobs: Arc<tokio::sync::Mutex<mpsc::Receiver<Job>>>,
    deferred: Option<Arc<Held<String>>>,
    (pacing, waiting): (Arc<Pacing>, Arc<Deferred<bool>>),
    queued: Arc<Queued<(String, bool)>>,
) {
    // Held for the worker's life; a panic drops it, so the restarted worker takes it over.
    let mut jobs = jobs.lock().await;
    let extractor = Extractor {
        db: &config.db,
        recorder: &config.recorder,
        http: &config.http,
        endpoint: config.endpoint.as_ref(),
        pacing: &pacing,
    };
    // Retrievals per scope since its policy was last considered. Kept in memory: a restart
    // only delays the next decision.
    let mut evidence: HashMap<String, Evidence> = HashMap::new();
    loop {
        let job = tokio::select! {
            job = jobs.recv() => match job {
                Some(job) => job,
                None => break,
            },
            (session, last) = waiting.next(&pacing) => Job::Extract {
                session,
                last,
                scope: None,
                explicit: false,
                reply: None,
            },
        };
        match job {
            Job::Extract {
                session,
                last,
                scope,
                explicit,
                reply,
            } => {
                if reply.is_none() {
                    queued.started(&(session.clone(), last));
                }
                let out = extractor
                    .session(&session, last, scope.as_deref(), explicit)
                    .await;
                if out.waiting && scope.is_none() {
                    waiting.push(&session, last);
                }
                match &out.error {
                    Some(e) => {
                        tracing::warn!(session, error = %e, "memory extraction failed; the turns wait for the next attempt")
                    }
                    None if out.turns > 0 => tracing::info!(
                        session,
                        scope = out.scope,
                        extractor = out.extractor,
                        fallback = out.fallback.as_deref().unwrap_or_default(),
                        added = out.applied.added.len(),
                        updated = out.applied.updated.len(),
                        superseded = out.applied.superseded.len(),
                        ignored = out.applied.ignored,
                        "memories extracted"
                    ),
                    None => {}
                }
                let changed = !out.applied.added.is_empty()
                    || !out.applied.updated.is_empty()
                    || !out.applied.superseded.is_empty();
                if changed {
                    config.events.emit(EngineEvent::MemoryChanged);
                }
                if config.settings.consolidate && changed {
                    match &deferred {
                        Some(held) => held.add(out.scope.clone()),
                        None => {
                            let _ = consolidate(&config, &out.scope).await;
                        }
                    }
                }
                if changed && let Some(v) = &config.vectors {
                    index(v, &out.scope).await;
                }
                if let Some(reply) = reply {
                    let _ = reply.send(out);
                }
            }
            Job::Retrieved {
                scope,
                ids,
                outcome,
            } => {
                record_access(&config.db, ids).await;
                if config.settings.adaptive {
                    let ev = evidence.entry(scope.clone()).or_default();
                    ev.count(outcome, config.policies.cached(&scope).max_units);
                    if ev.is_full() {
                        let ev = evidence.remove(&scope).unwrap_or_default();
                        adapt_policy(&config, &scope, ev).await;
                    }
                }
            }
            Job::Index(scope) => {
                if let Some(v) = &config.vectors {
                    index(v, &scope).await;
                }
            }
            Job::Consolidate { scope, reply } => {
                let done = consolidate(&config, &scope).await;
                if let Some(reply) = reply {
                    let _ = reply.send(done);
                }
            }
        }
    }
}

/// What memory found for one turn ([`Memory::find`]), waiting for its budget.
pub struct TurnMemory {
    scope: String,
    found: Found,
}

/// The value of a read on a blocking reader connection; a failure is logged and the turn
/// gets no memories.
fn served_without_memories<T>(
    read: Result<
        Result<Result<T, metaclaw_memory::MemoryError>, metaclaw_store::StoreError>,
        tokio::task::JoinError,
    >,
) -> Option<T> {
    match read {
        Ok(Ok(Ok(v))) => Some(v),
        Ok(Ok(Err(e))) => {
            tracing::warn!(error = %e, "memory retrieval failed; turn served without memories");
            None
        }
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "memory database unavailable; turn served without memories");
            None
        }
        Err(e) => {
            tracing::warn!(error = %e, "memory retrieval failed; turn served without memories");
            None
        }
    }
}

/// Considers one window of evidence for `scope`'s policy; a change is stored with its
/// reason, logged, and in force from the next turn.
async fn adapt_policy(config: &MemoryConfig, scope: &str, ev: Evidence) {
    let (db, policies, name) = (
        config.db.clone(),
        Arc::clone(&config.policies),
        scope.to_owned(),
    );
    let done = store_access::write(db, move |store| {
        let current = policies.get(store.connection(), &name);
        let active = db::active_count(store.connection(), &name)?;
        let Some(change) = adapt::decide(&current, policies.base(), &ev, active) else {
            return Ok(None);
        };
        let now = unix_ms(SystemTime::now());
        db::save_policy(
            store.connection_mut(),
            &name,
            &change.policy,
            &change.reason,
            now,
        )?;
        policies.set(&name, change.policy);
        Ok::<_, MemoryServiceError>(Some(change.reason))
    })
    .await;
    match done {
        Ok(Some(reason)) => tracing::info!(scope, reason, "memory retrieval policy adapted"),
        Ok(None) => {}
        Err(e) => tracing::warn!(scope, error = %e, "memory retrieval policy not adapted"),
    }
}

async fn index(vectors: &Vectors, scope: &str) {
    match vectors.refresh(scope).await {
        Ok(r) if r.embedded > 0 => tracing::info!(
            scope,
            indexed = r.indexed,
            embedded = r.embedded,
            missing = r.missing,
            "memory embeddings updated"
        ),
        Ok(_) => {}
        Err(e) => tracing::warn!(scope, error = %e, "memory embeddings not updated"),
    }
}

/// Runs consolidation on a blocking thread; its changes are audited by the store.
async fn consolidate(config: &MemoryConfig, scope: &str) -> Result<Vec<Step>, MemoryServiceError> {
    let (db, name) = (config.db.clone(), scope.to_string());
    let scope = name.clone();
    let done = store_access::write(db, move |store| {
        let now = unix_ms(SystemTime::now());
        let policy = ConsolidationPolicy::default();
        Ok(consolidate::run(
            store.connection_mut(),
            &scope,
            now,
            &policy,
        )?)
    })
    .await;
    match &done {
        Ok(steps) if !steps.is_empty() => {
            tracing::info!(scope = %name, steps = steps.len(), "memory consolidated");
            config.events.emit(EngineEvent::MemoryChanged);
        }
        Err(e) => tracing::warn!(error = %e, "memory consolidation failed"),
        Ok(_) => {}
    }
    done
}

async fn record_access(db: &std::path::Path, ids: Vec<String>) {
    if ids.is_empty() {
        return;
    }
    let db = db.to_path_buf();
    let done = store_access::write(db, move |store| {
        let now = unix_ms(SystemTime::now());
        let seen: Vec<(String, i64)> = ids.into_iter().map(|id| (id, now)).collect();
        Ok::<_, MemoryServiceError>(db::record_access(store.connection_mut(), &seen)?)
    })
    .await;
    if let Err(e) = done {
        tracing::debug!(error = %e, "memory access statistics not recorded");
    }
}
