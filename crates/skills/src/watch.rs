//! A library that reloads itself when its folders change. Readers take an `Arc` snapshot
//! under a lock held only for the pointer swap, so they never wait on disk.

use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock, mpsc};
use std::time::Duration;

use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
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

/// Keeps the watcher alive; dropping it stops watching (the last snapshot stays readable) and
/// ends the reload thread, which closes the [`SharedLibrary::subscribe`] channel.
pub struct WatchGuard {
    _watcher: RecommendedWatcher,
}

fn load_logged(dirs: &[PathBuf]) -> Arc<Library> {
    let lib = Library::load(dirs);
    for e in &lib.errors {
        tracing::warn!("skipping skill: {e}");
    }
    Arc::new(lib)
}

/// Loads `dirs` (as [`Library::load`]) and reloads them on any change under them, once the
/// changes have been quiet for `debounce`. Subscribers hear of a reload only when the
/// library's content changed. Folders missing now are loaded when present but not watched.
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

    let (changed, changes) = mpsc::channel::<()>();
    let on_event = move |res: notify::Result<Event>| match res {
        // Reading the files (our own reloads included) reports opens and closes; only
        // writes, creations, renames and removals change the library.
        Ok(event) if matches!(event.kind, EventKind::Access(_)) => {}
        Ok(_) => {
            let _ = changed.send(());
        }
        Err(e) => tracing::warn!("skills watcher: {e}"),
    };
    let watch_err = |dir: &PathBuf, e: notify::Error| SkillError::io(dir, std::io::Error::other(e));
    let first = dirs.first().cloned().unwrap_or_default();
    let mut watcher = notify::recommended_watcher(on_event).map_err(|e| watch_err(&first, e))?;
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        watcher
            .watch(dir, RecursiveMode::Recursive)
            .map_err(|e| watch_err(dir, e))?;
    }
    let reload_dirs = dirs.to_vec();
    std::thread::Builder::new()
        .name("metaclaw-skills-watch".into())
        .spawn(move || reload_on_changes(&changes, debounce, &reload_dirs, &current, &tx))
        .map_err(|e| SkillError::io(&first, e))?;
    Ok((shared, WatchGuard { _watcher: watcher }))
}

/// Waits for a change, lets a burst of them settle, reloads, and repeats until the watcher
/// is dropped (its sender with it).
fn reload_on_changes(
    changes: &mpsc::Receiver<()>,
    debounce: Duration,
    dirs: &[PathBuf],
    current: &RwLock<Arc<Library>>,
    tx: &channel::Sender<u64>,
) {
    while changes.recv().is_ok() {
        let mut open = true;
        loop {
            match changes.recv_timeout(debounce) {
                Ok(()) => {}
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        let lib = load_logged(dirs);
        let same = {
            let old = current.read().unwrap_or_else(PoisonError::into_inner);
            same_content(&old, &lib)
        };
        if !same {
            *current.write().unwrap_or_else(PoisonError::into_inner) = lib;
            tx.send_modify(|g| *g += 1);
        }
        if !open {
            return;
        }
    }
}

/// Same skills, whole, and same broken files: nothing for readers to rebuild.
fn same_content(a: &Library, b: &Library) -> bool {
    a.skills == b.skills
        && a.errors.len() == b.errors.len()
        && a.errors
            .iter()
            .zip(&b.errors)
            .all(|(x, y)| x.to_string() == y.to_string())
}
