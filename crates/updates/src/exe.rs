//! Whether the program file changed under the running process (a package upgrade replaces
//! it), and which version the new file is, so a restart can be offered.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::Notify;

/// `--version` of the new file is instant; this bounds a broken one.
const VERSION_DEADLINE: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    len: u64,
    modified: Option<SystemTime>,
    #[cfg(unix)]
    inode: (u64, u64),
}

fn identity(path: &Path) -> Option<Identity> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Identity {
        len: meta.len(),
        modified: meta.modified().ok(),
        #[cfg(unix)]
        inode: {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        },
    })
}

/// The program file as it was when the process started.
#[derive(Debug, Clone)]
pub struct ExeWatch {
    path: PathBuf,
    started: Option<Identity>,
}

static PROCESS: std::sync::OnceLock<Option<ExeWatch>> = std::sync::OnceLock::new();

impl ExeWatch {
    /// The running program's file as it was when this was first called: the host calls it
    /// at start, so an engine restarted in place still compares with what the process runs.
    pub fn process() -> Option<&'static ExeWatch> {
        PROCESS.get_or_init(Self::current).as_ref()
    }

    /// Watches the running program's file from now on.
    pub fn current() -> Option<ExeWatch> {
        let exe = std::env::current_exe().ok()?;
        // Linux names a file replaced before this call "… (deleted)".
        let path = exe
            .to_str()
            .and_then(|s| s.strip_suffix(" (deleted)"))
            .map_or(exe.clone(), PathBuf::from);
        Some(Self::of(path))
    }

    /// Watches `path` from now on.
    pub fn of(path: PathBuf) -> ExeWatch {
        let started = identity(&path);
        ExeWatch { path, started }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Wakes `wake` whenever something in the program's folder is created, renamed or
    /// removed (an upgrade renames the new file over the old one), so a change is seen at
    /// once rather than at the next poll. `None` when the folder cannot be watched; keep the
    /// watcher as long as it should watch.
    pub fn watch_folder(&self, wake: Arc<Notify>) -> Option<RecommendedWatcher> {
        let dir = self.path.parent()?;
        let mut watcher = notify::recommended_watcher(move |res: notify::Result<Event>| {
            if let Ok(event) = res
                && !matches!(event.kind, EventKind::Access(_))
            {
                wake.notify_one();
            }
        })
        .inspect_err(|e| tracing::debug!(error = %e, "the program's folder is not watched"))
        .ok()?;
        watcher
            .watch(dir, RecursiveMode::NonRecursive)
            .inspect_err(|e| tracing::debug!(error = %e, "the program's folder is not watched"))
            .ok()?;
        Some(watcher)
    }

    /// Whether a different file is at the path now (one stat; a missing file is not a change:
    /// mid-upgrade, or removed with the package).
    pub fn changed(&self) -> bool {
        match (identity(&self.path), &self.started) {
            (Some(now), Some(then)) => now != *then,
            _ => false,
        }
    }

    /// The version the file at the path reports (`metaclaw X` from `--version`).
    pub async fn version_on_disk(&self) -> Option<String> {
        let out = tokio::time::timeout(
            VERSION_DEADLINE,
            tokio::process::Command::new(&self.path)
                .arg("--version")
                .kill_on_drop(true)
                .output(),
        )
        .await
        .ok()?
        .ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        let v = text.trim().strip_prefix("metaclaw ")?.trim();
        (out.status.success() && !v.is_empty()).then(|| v.to_owned())
    }
}
