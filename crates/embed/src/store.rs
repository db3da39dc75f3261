//! The model store: `<root>/<name>/` holds one model's files.
//!
//! Installs are atomic: files are staged in a temporary folder inside the root, loaded once to
//! prove they work, then renamed into place; a failure at any step leaves the model that was
//! there before. One writer at a time per store is assumed (the engine's).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use tempfile::TempDir;

use crate::embedder::Embedder;
use crate::error::{EmbedError, IoContext, Result, invalid};
use crate::layout;
use crate::manifest::DEFAULT_MANIFEST;

/// Written into an installed model's folder: whether it is the default model, so a status
/// check does not hash half a gigabyte.
const MARKER: &str = "metaclaw-model.json";
const STAGING_PREFIX: &str = ".staging-";
const REPLACED_PREFIX: &str = ".replaced-";
/// A staging folder this old was left by a process that died mid-install.
const STALE_STAGING: Duration = Duration::from_secs(24 * 3600);

#[derive(Serialize, Deserialize)]
struct Marker {
    default: bool,
}

/// A model folder in the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub name: String,
    pub dir: PathBuf,
    /// Bytes on disk, all files counted.
    pub size_bytes: u64,
    /// Byte-for-byte the default model ([`DEFAULT_MANIFEST`]).
    pub is_default: bool,
}

impl Installed {
    /// What to tell the user when the model is not the default one.
    pub fn warning(&self) -> Option<String> {
        (!self.is_default).then(|| {
            format!(
                "the model {:?} is not MetaClaw's default embedding model ({}): it was accepted, \
                 but retrieval has not been tuned for it, and its vectors cannot be compared with \
                 those of another model",
                self.name, DEFAULT_MANIFEST.name
            )
        })
    }
}

/// Models under one root folder (the engine's `$METACLAW_HOME/models`).
#[derive(Debug, Clone)]
pub struct ModelStore {
    root: PathBuf,
}

impl ModelStore {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder a model of this name lives in (whether or not it is installed).
    pub fn dir(&self, name: &str) -> Result<PathBuf> {
        check_name(name)?;
        Ok(self.root.join(name))
    }

    /// The model of that name, if a complete one is installed.
    pub fn installed(&self, name: &str) -> Result<Option<Installed>> {
        let dir = self.dir(name)?;
        if layout::check(&dir).is_err() {
            return Ok(None);
        }
        let is_default = match std::fs::read(dir.join(MARKER))
            .ok()
            .and_then(|b| serde_json::from_slice::<Marker>(&b).ok())
        {
            Some(marker) => marker.default,
            // Put there by hand: compare with the pinned checksums.
            None => DEFAULT_MANIFEST.matches(&dir)?,
        };
        Ok(Some(Installed {
            name: name.to_string(),
            size_bytes: disk_size(&dir)?,
            dir,
            is_default,
        }))
    }

    /// Every installed model, by name.
    pub fn status(&self) -> Result<Vec<Installed>> {
        let entries = match std::fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e).at(&self.root),
        };
        let mut models = Vec::new();
        for entry in entries {
            let entry = entry.at(&self.root)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if check_name(&name).is_err() || !entry.path().is_dir() {
                continue;
            }
            if let Some(model) = self.installed(&name)? {
                models.push(model);
            }
        }
        models.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(models)
    }

    /// Loads an installed model.
    pub fn load(&self, name: &str) -> Result<Embedder> {
        Embedder::load(&self.dir(name)?)
    }

    /// An empty folder inside the root to build an install in; removed if dropped.
    pub(crate) fn stage(&self) -> Result<TempDir> {
        std::fs::create_dir_all(&self.root).at(&self.root)?;
        self.recover();
        tempfile::Builder::new()
            .prefix(STAGING_PREFIX)
            .tempdir_in(&self.root)
            .at(&self.root)
    }

    /// Proves the staged files are a working model, then puts them in place as `name`.
    pub(crate) fn commit(&self, staged: TempDir, name: &str) -> Result<Installed> {
        let target = self.dir(name)?;
        let dir = staged.path();
        layout::check(dir)?;
        let embedder = Embedder::load(dir)?;
        let probe = embedder.embed(&["ok"])?;
        if probe
            .first()
            .is_none_or(|v| v.len() != embedder.dimension() || v.iter().any(|x| !x.is_finite()))
        {
            return Err(invalid(
                layout::WEIGHTS,
                "the model computes no usable vector",
            ));
        }
        drop(embedder);
        let is_default = DEFAULT_MANIFEST.matches(dir)?;
        let marker = serde_json::to_vec(&Marker {
            default: is_default,
        })
        .map_err(|e| invalid(MARKER, e.to_string()))?;
        std::fs::write(dir.join(MARKER), marker).at(dir.join(MARKER))?;
        self.swap(&staged, &target)?;
        drop(staged);
        self.installed(name)?
            .ok_or_else(|| EmbedError::MissingFile {
                dir: target,
                file: layout::CONFIG.to_string(),
            })
    }

    /// Renames `staged` to `target`. A model already there is moved aside first (a directory
    /// cannot be renamed over a non-empty one) and put back if the second rename fails.
    fn swap(&self, staged: &TempDir, target: &Path) -> Result<()> {
        if !target.exists() {
            return std::fs::rename(staged.path(), target).at(target);
        }
        let aside = tempfile::Builder::new()
            .prefix(REPLACED_PREFIX)
            .tempdir_in(&self.root)
            .at(&self.root)?;
        let name = target.file_name().unwrap_or_default();
        let old = aside.path().join(name);
        std::fs::rename(target, &old).at(target)?;
        if let Err(e) = std::fs::rename(staged.path(), target) {
            let _ = std::fs::rename(&old, target);
            return Err(e).at(target);
        }
        // Dropping `aside` deletes the old model.
        Ok(())
    }

    /// Puts back a model that a crash left moved aside, and removes old staging folders.
    fn recover(&self) {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(REPLACED_PREFIX) {
                for old in std::fs::read_dir(&path).into_iter().flatten().flatten() {
                    let target = self.root.join(old.file_name());
                    if !target.exists() {
                        let _ = std::fs::rename(old.path(), target);
                    }
                }
                let _ = std::fs::remove_dir_all(&path);
            } else if name.starts_with(STAGING_PREFIX) {
                let stale = entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| SystemTime::now().duration_since(t).ok())
                    .is_some_and(|age| age > STALE_STAGING);
                if stale {
                    let _ = std::fs::remove_dir_all(&path);
                }
            }
        }
    }
}

/// A plain folder name: it must not escape the root or hide among the store's own folders.
fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if ok {
        Ok(())
    } else {
        Err(EmbedError::InvalidName(name.to_string()))
    }
}

fn disk_size(dir: &Path) -> Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).at(dir)? {
        let entry = entry.at(dir)?;
        let meta = entry.metadata().at(entry.path())?;
        total += if meta.is_dir() {
            disk_size(&entry.path())?
        } else {
            meta.len()
        };
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::check_name;

    #[test]
    fn names_stay_inside_the_store() {
        for good in ["paraphrase-multilingual-MiniLM-L12-v2", "a", "m_1.2"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", ".", "..", ".hidden", "a/b", "a\\b", "../x", "é", "a b"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }
}
