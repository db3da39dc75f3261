//! The user's pause: no learning until a time, or until they resume. It survives restarts
//! in a small JSON file.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::error::ScheduleError;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Pause {
    pub since: Timestamp,
    /// `None`: until the user resumes.
    pub until: Option<Timestamp>,
}

impl Pause {
    /// A pause whose end has passed counts as no pause, wherever it is read.
    pub fn is_active(&self, now: Timestamp) -> bool {
        self.until.is_none_or(|until| now < until)
    }
}

/// Where the pause is kept (`~/.metaclaw/pause.json` in the app).
#[derive(Debug, Clone)]
pub struct PauseFile {
    path: PathBuf,
}

impl PauseFile {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        PauseFile { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The saved pause, expired or not (the caller knows the time); `None` when there is
    /// no file. A file that does not parse is an error naming it, never deleted: the user
    /// paused on purpose, and silently learning anyway would break that.
    pub fn load(&self) -> Result<Option<Pause>, ScheduleError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(ScheduleError::PauseRead {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|source| ScheduleError::PauseCorrupt {
                path: self.path.clone(),
                source,
            })
    }

    /// Writes a temporary file (0600) next to the target and renames it over, so a crash
    /// leaves the old pause or the new one, never half of one.
    pub fn save(&self, pause: &Pause) -> Result<(), ScheduleError> {
        let write_err = |source| ScheduleError::PauseWrite {
            path: self.path.clone(),
            source,
        };
        let json =
            serde_json::to_vec_pretty(pause).map_err(|e| write_err(std::io::Error::other(e)))?;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(write_err)?;
        }
        metaclaw_files::write_atomic(&self.path, &json, Some(0o600)).map_err(write_err)?;
        Ok(())
    }

    /// Removes the pause; no file is fine.
    pub fn clear(&self) -> Result<(), ScheduleError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(ScheduleError::PauseWrite {
                path: self.path.clone(),
                source,
            }),
        }
    }
}
