//! The live skill library: watched on disk, indexed off the hot path, generation persisted.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use metaclaw_skills::retrieval::RetrievalConfig;
use metaclaw_skills::{Library, SharedLibrary, WatchGuard};
use metaclaw_store::Store;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::generation;
use super::snapshot::{CurrentSkills, Snapshot};

/// Edits usually come as a burst of events (editor temp file, rename, chmod).
const DEBOUNCE: Duration = Duration::from_millis(300);

pub struct SkillsRuntime {
    pub dir: PathBuf,
    pub current: CurrentSkills,
    /// The generation of the snapshot in force; changes after each swap.
    pub swapped: watch::Receiver<u64>,
    _guard: Option<WatchGuard>,
    refresher: Option<JoinHandle<()>>,
}

impl SkillsRuntime {
    /// Loads `dir`, builds the first index and keeps both up to date as files change. A
    /// watcher that cannot start (e.g. the inotify limit) leaves the library loaded but static.
    pub async fn start(dir: PathBuf, db: PathBuf, config: RetrievalConfig) -> SkillsRuntime {
        let (library, guard) = match metaclaw_skills::watch(std::slice::from_ref(&dir), DEBOUNCE) {
            Ok((shared, guard)) => (Some(shared), Some(guard)),
            Err(e) => {
                tracing::warn!(error = %e, "skill files will not reload until restart");
                (None, None)
            }
        };
        let first = match &library {
            Some(shared) => shared.current(),
            None => Arc::new(Library::load(std::slice::from_ref(&dir))),
        };
        let snapshot = build(first, config.clone(), db.clone()).await;
        let (tx, swapped) = watch::channel(snapshot.generation);
        let current = CurrentSkills::new(snapshot);
        let refresher =
            library.map(|shared| tokio::spawn(refresh(shared, current.clone(), config, db, tx)));
        SkillsRuntime {
            dir,
            current,
            swapped,
            _guard: guard,
            refresher,
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

/// Rebuilds the index after every reload and swaps it in whole.
async fn refresh(
    shared: SharedLibrary,
    current: CurrentSkills,
    config: RetrievalConfig,
    db: PathBuf,
    swapped: watch::Sender<u64>,
) {
    let mut changes = shared.subscribe();
    while changes.changed().await.is_ok() {
        let snapshot = build(shared.current(), config.clone(), db.clone()).await;
        let generation = snapshot.generation;
        let skills = snapshot.library.len();
        current.set(snapshot);
        swapped.send_replace(generation);
        tracing::info!(skills, generation, "skill library reloaded");
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
