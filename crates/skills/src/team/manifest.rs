//! What the last sync agreed on, kept in the library as `.team.json` (a dot-file the loader
//! skips): each shared skill's content hash, so a change on either side since then is seen
//! as that side's change, and the names the user deleted, which sync removes from the team.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::TeamError;
use crate::skill::Skill;
use crate::write::write_atomically;

const FILE: &str = ".team.json";

#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Name → content hash both sides held after the last sync.
    #[serde(default)]
    pub synced: BTreeMap<String, String>,
    /// Deleted by the user, not yet removed from the team library.
    #[serde(default)]
    pub deleted: BTreeSet<String>,
    /// When the last sync finished (Unix ms), and what failed then, if anything.
    #[serde(default)]
    pub last_sync_ms: Option<u64>,
    #[serde(default)]
    pub last_error: Option<String>,
    /// Local changes committed in the clone but not yet accepted by the remote.
    #[serde(default)]
    pub pending: Vec<String>,
}

impl Manifest {
    pub fn load(library: &Path) -> Result<Manifest, TeamError> {
        let path = library.join(FILE);
        match fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| TeamError::Manifest(format!("{}: {e}", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Manifest::default()),
            Err(e) => Err(TeamError::Manifest(format!("{}: {e}", path.display()))),
        }
    }

    pub fn save(&self, library: &Path) -> Result<(), TeamError> {
        let bytes =
            serde_json::to_vec_pretty(self).map_err(|e| TeamError::Manifest(e.to_string()))?;
        write_atomically(&library.join(FILE), &bytes)
            .map_err(|e| TeamError::Manifest(e.to_string()))
    }
}

/// A skill's shared content: what a teammate's agent would be given, not where it came from
/// or whether one user switched it off.
pub fn content_hash(skill: &Skill, folder: Option<&Path>) -> String {
    let mut h = Sha256::new();
    let fields = [
        &skill.name,
        &skill.description,
        &skill.category,
        &skill.body,
    ];
    for f in fields.into_iter().chain(&skill.tags) {
        h.update((f.len() as u64).to_le_bytes());
        h.update(f.trim().as_bytes());
    }
    h.update([u8::from(skill.always)]);
    if let Some(dir) = folder {
        let mut files = Vec::new();
        resources(dir, dir, &mut files);
        files.sort();
        for (rel, bytes) in files {
            h.update(rel.as_bytes());
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(&bytes);
        }
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn resources(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        if name == "SKILL.md" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => resources(root, &path, out),
            Ok(t) if t.is_file() => {
                if let Ok(bytes) = fs::read(&path) {
                    let rel = path.strip_prefix(root).unwrap_or(&path);
                    out.push((rel.to_string_lossy().into_owned(), bytes));
                }
            }
            _ => {}
        }
    }
}
