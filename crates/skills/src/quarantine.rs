//! Skills the gate held back: `<library>/.quarantine/<name>/`, the skill's folder as it
//! came (its `SKILL.md` and resource files) beside `QUARANTINE.json` saying why, when and
//! from where. The loader skips dot-folders, so nothing here is ever retrieved or injected;
//! a skill leaves only by an explicit `release` (into the library) or `delete`.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::gate::Finding;
use crate::parse::{SkillError, is_slug, parse_skill};
use crate::skill::Skill;
use crate::write::{render_skill, write_atomically};

/// The folder under a library that holds quarantined skills.
pub const DIR: &str = ".quarantine";
const RECORD: &str = "QUARANTINE.json";

/// A quarantined skill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Held {
    pub name: String,
    pub description: String,
    /// Why it was held back.
    pub reasons: Vec<Finding>,
    /// How it came: `import`, `team` or `learned`, and from where (a path, a remote).
    pub origin: String,
    /// When, in Unix milliseconds.
    pub at_ms: u64,
}

/// Holds `skill` back with `reasons`: its `SKILL.md` and the resource files of `resources`
/// (the folder it came from, if any) go under `<library>/.quarantine/<name>/`, replacing an
/// earlier quarantined version of the same name.
pub fn hold(
    library: &Path,
    skill: &Skill,
    resources: Option<&Path>,
    reasons: Vec<Finding>,
    origin: &str,
) -> Result<Held, SkillError> {
    let folder = slot(library, &skill.name)?;
    if folder.exists() {
        fs::remove_dir_all(&folder).map_err(|e| SkillError::io(&folder, e))?;
    }
    fs::create_dir_all(&folder).map_err(|e| SkillError::io(&folder, e))?;
    if let Some(from) = resources {
        copy_resources(from, &folder)?;
    }
    write_atomically(&folder.join("SKILL.md"), render_skill(skill)?.as_bytes())?;
    let held = Held {
        name: skill.name.clone(),
        description: skill.description.clone(),
        reasons,
        origin: origin.to_owned(),
        at_ms: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
    };
    let record = serde_json::to_vec_pretty(&held)
        .map_err(|e| SkillError::invalid(None, None, format!("quarantine record: {e}")))?;
    write_atomically(&folder.join(RECORD), &record)?;
    Ok(held)
}

/// Every quarantined skill, by name. A folder whose record is unreadable is listed with
/// that as its reason, so it can still be seen and deleted.
pub fn list(library: &Path) -> Vec<Held> {
    let Ok(entries) = fs::read_dir(library.join(DIR)) else {
        return Vec::new();
    };
    let mut out: Vec<Held> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            is_slug(&name).then(|| read_record(&e.path(), name))
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Moves a quarantined skill into the library (replacing a skill of the same name there),
/// by the user's explicit choice. Returns its new `SKILL.md`.
pub fn release(library: &Path, name: &str) -> Result<PathBuf, SkillError> {
    let from = existing(library, name)?;
    let file = from.join("SKILL.md");
    let text = fs::read_to_string(&file).map_err(|e| SkillError::io(&file, e))?;
    parse_skill(&text, Some(&file))?;
    let _ = fs::remove_file(from.join(RECORD));
    let to = library.join(name);
    if to.exists() {
        fs::remove_dir_all(&to).map_err(|e| SkillError::io(&to, e))?;
    }
    fs::rename(&from, &to).map_err(|e| SkillError::io(&to, e))?;
    Ok(to.join("SKILL.md"))
}

/// Deletes a quarantined skill.
pub fn delete(library: &Path, name: &str) -> Result<(), SkillError> {
    let folder = existing(library, name)?;
    fs::remove_dir_all(&folder).map_err(|e| SkillError::io(&folder, e))
}

fn slot(library: &Path, name: &str) -> Result<PathBuf, SkillError> {
    if !is_slug(name) {
        let msg = format!("expected a skill name like debug-systematically, got {name:?}");
        return Err(SkillError::invalid(None, None, msg));
    }
    Ok(library.join(DIR).join(name))
}

fn existing(library: &Path, name: &str) -> Result<PathBuf, SkillError> {
    let folder = slot(library, name)?;
    if !folder.is_dir() {
        let msg = format!("no quarantined skill named {name}");
        return Err(SkillError::invalid(None, None, msg));
    }
    Ok(folder)
}

fn read_record(folder: &Path, name: String) -> Held {
    let path = folder.join(RECORD);
    match fs::read(&path)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice::<Held>(&b).map_err(|e| e.to_string()))
    {
        Ok(held) => held,
        Err(e) => Held {
            name,
            description: String::new(),
            reasons: vec![Finding {
                rule: "unreadable-record".into(),
                reason: format!("{}: {e}", path.display()),
                field: String::new(),
                line: None,
                excerpt: String::new(),
            }],
            origin: String::new(),
            at_ms: 0,
        },
    }
}

/// Copies the files beside a skill's `SKILL.md` (scripts, references, assets), except
/// `SKILL.md` itself and dot-files; symlinks are not followed.
pub(crate) fn copy_resources(from: &Path, to: &Path) -> Result<(), SkillError> {
    let entries = fs::read_dir(from).map_err(|e| SkillError::io(from, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| SkillError::io(from, e))?;
        let name = entry.file_name();
        let path = entry.path();
        if name == "SKILL.md" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        let kind = entry.file_type().map_err(|e| SkillError::io(&path, e))?;
        let target = to.join(&name);
        if kind.is_dir() {
            fs::create_dir_all(&target).map_err(|e| SkillError::io(&target, e))?;
            copy_resources(&path, &target)?;
        } else if kind.is_file() {
            fs::copy(&path, &target).map_err(|e| SkillError::io(&target, e))?;
        }
    }
    Ok(())
}
