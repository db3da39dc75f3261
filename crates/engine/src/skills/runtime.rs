//! The live skill library: watched on disk, indexed off the hot path, generation persisted.
//! With a semantic retrieval mode, each new snapshot is served lexically at once and gets its
//! semantic index attached by a background task when the vectors are in.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use metaclaw_skills::retrieval::RetrievalConfig;
use metaclaw_skills::{Library, SharedLibrary, WatchGuard};
use metaclaw_store::Store;
use tokio::sync::watch;
use tokio::task::AbortHandle;

use super::generation;
use super::semantic::{self, SemanticSetup};
use super::snapshot::{CurrentSkills, Snapshot};
use crate::supervise::Supervisor;

/// Edits usually come as a burst of events (editor temp file, rename, chmod).
const DEBOUNCE: Duration = Duration::from_millis(300);

pub struct SkillsRuntime {
    pub dir: PathBuf,
    pub current: CurrentSkills,
    /// The generation of the snapshot in force; changes after each swap.
    pub swapped: watch::Receiver<u64>,
    _guard: Option<WatchGuard>,
    refresher: Option<AbortHandle>,
    /// The first library's semantic build when there is no refresher to own it.
    _semantic: Option<AbortOnDrop>,
}

/// A background task that must not outlive its owner.
struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn spawn_semantic(
    tasks: &Supervisor,
    snapshot: Arc<Snapshot>,
    setup: Option<&SemanticSetup>,
) -> Option<AbortOnDrop> {
    let setup = setup?.clone();
    let shutdown = tasks.shutdown_token();
    // It may wait long (a backoff, or the local model that is not in yet): it ends with the
    // engine rather than being aborted at the shutdown deadline.
    let fill = async move {
        tokio::select! {
            () = shutdown.cancelled() => {}
            () = semantic::fill(snapshot, setup) => {}
        }
    };
    Some(AbortOnDrop(tasks.spawn("skill embeddings", fill)))
}

impl SkillsRuntime {
    /// Loads `dir`, builds the first index and keeps both up to date as files change. A
    /// watcher that cannot start (e.g. the inotify limit) leaves the library loaded but static.
    pub async fn start(dir: PathBuf, db: PathBuf, config: RetrievalConfig) -> SkillsRuntime {
        Self::start_with(dir, db, config, None, &Supervisor::detached()).await
    }

    /// [`Self::start`], plus a semantic index for each library when `semantic` is given (the
    /// `embedding` and `hybrid` modes).
    pub async fn start_with(
        dir: PathBuf,
        db: PathBuf,
        config: RetrievalConfig,
        semantic: Option<SemanticSetup>,
        tasks: &Supervisor,
    ) -> SkillsRuntime {
        let (library, guard) = match metaclaw_skills::watch(std::slice::from_ref(&dir), DEBOUNCE) {
            Ok((shared, guard)) => (Some(shared), Some(guard)),
            Err(e) => {
                tracing::warn!(error = %e, "skill files will not reload until restart");
                (None, None)
            }
        };
        note_outside_edits(&dir).await;
        let first = match &library {
            Some(shared) => shared.current(),
            None => Arc::new(Library::load(std::slice::from_ref(&dir))),
        };
        let snapshot = build(first, config.clone(), db.clone()).await;
        let (tx, swapped) = watch::channel(snapshot.generation);
        let current = CurrentSkills::new(snapshot);
        let first = spawn_semantic(tasks, current.get(), semantic.as_ref());
        let (refresher, first) = match library {
            Some(shared) => {
                let refresh = Refresh {
                    dir: dir.clone(),
                    current: current.clone(),
                    config,
                    db,
                    swapped: tx,
                    semantic,
                    tasks: tasks.clone(),
                };
                let task = refresh.run(shared, first);
                (Some(tasks.spawn("skill library reload", task)), None)
            }
            None => (None, first),
        };
        SkillsRuntime {
            dir,
            current,
            swapped,
            _guard: guard,
            refresher,
            _semantic: first,
        }
    }
}

impl Drop for SkillsRuntime {
    fn drop(&mut self) {
        if let Some(task) = self.refresher.take() {
            task.abort();
        }
    }
}

/// What the reload task keeps.
struct Refresh {
    dir: PathBuf,
    current: CurrentSkills,
    config: RetrievalConfig,
    db: PathBuf,
    swapped: watch::Sender<u64>,
    semantic: Option<SemanticSetup>,
    tasks: Supervisor,
}

impl Refresh {
    /// Rebuilds the index after every reload and swaps it in whole. A semantic build still
    /// running for the previous library is dropped (aborted): its result would be stale.
    async fn run(self, shared: SharedLibrary, mut pending: Option<AbortOnDrop>) {
        let mut changes = shared.subscribe();
        while changes.changed().await.is_ok() {
            note_outside_edits(&self.dir).await;
            // The watcher reports only content changes, so every one is worth a rebuild.
            let snapshot = build(shared.current(), self.config.clone(), self.db.clone()).await;
            let generation = snapshot.generation;
            let skills = snapshot.library.len();
            let snapshot = self.current.set(snapshot);
            let next = spawn_semantic(&self.tasks, snapshot, self.semantic.as_ref());
            drop(std::mem::replace(&mut pending, next));
            self.swapped.send_replace(generation);
            tracing::info!(skills, generation, "skill library reloaded");
        }
    }
}

/// Keeps, as a version, what an edit made outside MetaClaw replaced (see
/// `metaclaw_skills::outside`): file reads and writes, off the runtime's worker threads.
async fn note_outside_edits(dir: &Path) {
    let dir = dir.to_owned();
    match tokio::task::spawn_blocking(move || metaclaw_skills::outside::note(&dir)).await {
        Ok(Ok(kept)) if !kept.is_empty() => {
            tracing::info!(skills = ?kept, "kept the versions that edits outside MetaClaw replaced");
        }
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "cannot keep versions of skills edited outside MetaClaw")
        }
        Err(e) => tracing::warn!(error = %e, "the skill history task failed"),
    }
}

/// Indexing and the generation's database write are blocking work: kept off the runtime's
/// worker threads so requests never wait on them.
async fn build(library: Arc<Library>, config: RetrievalConfig, db: PathBuf) -> Snapshot {
    let built = tokio::task::spawn_blocking(move || {
        let generation = persisted_generation(&db, library.fingerprint());
        Snapshot::build(library, config, generation)
    })
    .await;
    built.unwrap_or_else(|e| {
        tracing::error!(error = %e, "skill index build failed; serving without skills");
        Snapshot::build(Arc::new(Library::default()), RetrievalConfig::default(), 0)
    })
}

fn persisted_generation(db: &Path, fingerprint: u64) -> u64 {
    match Store::open(db).and_then(|mut s| generation::advance(&mut s, fingerprint)) {
        Ok(g) => g,
        Err(e) => {
            tracing::warn!(error = %e, "could not persist the skill generation");
            0
        }
    }
}
