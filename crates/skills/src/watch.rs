//! A library that reloads itself when its folders change. Readers take an `Arc` snapshot
//! under a lock held only for the pointer swap, so they never wait on disk.

use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use notify_debouncer_mini::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};
use tokio::sync::watch as channel;

use crate::library::Library;
use crate::parse::SkillError;

/// A cheaply cloneable handle to the current library snapshot.
#[derive(Debug, Clone)]
pub struct SharedLibrary {
    current: Arc<RwLock<Arc<Library>>>,
    generation: channel::Receiver<u64>,
}

impl SharedLibrary {
    /// The latest snapshot; it stays valid however long the caller holds it.
    pub fn current(&self) -> Arc<Library> {
        let guard = self.current.read().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(&guard)
    }

    /// Bumped after every reload, once the new snapshot is in place.
    pub fn subscribe(&self) -> channel::Receiver<u64> {
        self.generation.clone()
    }
}

/// Keeps the watcher alive; dropping it stops watching (the last snapshot stays readable).
pub struct WatchGuard {
    _debouncer: Debouncer<RecommendedWatcher>,
}

fn load_logged(dirs: &[PathBuf]) -> Arc<Library> {
    let lib = Library::load(dirs);
    for e in &lib.errors {
        tracing::warn!("skipping skill: {e}");
    }
    Arc::new(lib)
}

/// Loads `dirs` (as [`Library::load`]) and reloads them on any change under them, at most
/// once per `debounce`. Folders missing now are loaded when present but not watched.
pub fn watch(
    dirs: &[PathBuf],
    debounce: Duration,
) -> Result<(SharedLibrary, WatchGuard), SkillError> {
    let current = Arc::new(RwLock::new(load_logged(dirs)));
    let (tx, rx) = channel::channel(0u64);
    let shared = SharedLibrary {
        current: Arc::clone(&current),
        generation: rx,
    };

    let reload_dirs = dirs.to_vec();
    let on_events = move |res: DebounceEventResult| {
        if let Err(e) = res {
            tracing::warn!("skills watcher: {e}");
        }
        // Reload whatever the events were: a full load is cheap and never misses a change.
        let lib = load_logged(&reload_dirs);
        *current.write().unwrap_or_else(PoisonError::into_inner) = lib;
        tx.send_modify(|g| *g += 1);
    };
    let watch_err = |dir: &PathBuf, e: notify_debouncer_mini::notify::Error| {
        SkillError::io(dir, std::io::Error::other(e))
    };
    let first = dirs.first().cloned().unwrap_or_default();
    let mut debouncer = new_debouncer(debounce, on_events).map_err(|e| watch_err(&first, e))?;
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        debouncer
            .watcher()
            .watch(dir, RecursiveMode::Recursive)
            .map_err(|e| watch_err(dir, e))?;
    }
    Ok((
        shared,
        WatchGuard {
            _debouncer: debouncer,
        },
    ))
}
