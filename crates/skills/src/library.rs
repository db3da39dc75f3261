//! A library: every `<dir>/*/SKILL.md` of a list of folders, later folders overriding earlier.

use std::collections::BTreeMap;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::parse::{SkillError, parse_skill};
use crate::skill::Skill;

/// An immutable snapshot of the loaded skills; a broken file is skipped and reported.
#[derive(Debug, Default)]
pub struct Library {
    /// Sorted by name, names unique.
    pub skills: Vec<Skill>,
    /// Files that could not be read or parsed, and duplicate names.
    pub errors: Vec<SkillError>,
}

impl Library {
    /// Loads the folders in order. A missing folder is not an error: the user's library may
    /// not exist yet. Parse warnings are logged, not kept.
    pub fn load(dirs: &[PathBuf]) -> Library {
        let mut by_name = BTreeMap::new();
        let mut errors = Vec::new();
        for dir in dirs {
            for skill in load_dir(dir, &mut errors) {
                by_name.insert(skill.name.clone(), skill);
            }
        }
        Library {
            skills: by_name.into_values().collect(),
            errors,
        }
    }

    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills
            .binary_search_by(|s| s.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.skills[i])
    }

    /// Skills that may be retrieved or injected.
    pub fn enabled(&self) -> impl Iterator<Item = &Skill> {
        self.skills.iter().filter(|s| !s.disabled)
    }

    pub fn len(&self) -> usize {
        self.skills.len()
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// A hash of everything retrieval and injection use, so callers (e.g. index caches)
    /// can tell whether the content changed across reloads.
    pub fn fingerprint(&self) -> u64 {
        let mut h = Sha256::new();
        for s in &self.skills {
            let flags = [u8::from(s.always), u8::from(s.disabled)];
            let fields = [&s.name, &s.description, &s.category, &s.body];
            for f in fields.into_iter().chain(&s.tags) {
                // Length prefixes keep ("ab","c") and ("a","bc") apart.
                h.update((f.len() as u64).to_le_bytes());
                h.update(f.as_bytes());
            }
            h.update(flags);
        }
        let d = h.finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(&d[..8]);
        u64::from_le_bytes(first)
    }
}

/// The skills of one folder, by sorted folder name; a second use of a name is an error.
fn load_dir(dir: &Path, errors: &mut Vec<SkillError>) -> Vec<Skill> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            errors.push(SkillError::io(dir, e));
            return Vec::new();
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path().join("SKILL.md"))
        .filter(|p| p.is_file())
        .collect();
    files.sort();

    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut skills = Vec::new();
    for path in files {
        let parsed = fs::read_to_string(&path)
            .map_err(|e| SkillError::io(&path, e))
            .and_then(|text| parse_skill(&text, Some(&path)));
        let (skill, warnings) = match parsed {
            Ok(ok) => ok,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        for w in warnings {
            tracing::warn!("{w}");
        }
        if let Some(first) = seen.get(&skill.name) {
            let msg = format!(
                "duplicate skill name `{}`, already defined in {}",
                skill.name,
                first.display()
            );
            errors.push(SkillError::invalid(Some(&path), None, msg));
            continue;
        }
        let folder = path.parent().and_then(Path::file_name);
        if folder.is_some_and(|f| *f != *skill.name) {
            tracing::warn!(
                "{}: name `{}` differs from its folder name; writes will go to {}/",
                path.display(),
                skill.name,
                skill.name
            );
        }
        seen.insert(skill.name.clone(), path);
        skills.push(skill);
    }
    skills
}
