//! Earlier versions of each skill: `<library>/.history/<name>/<n>.md`, the replaced
//! `SKILL.md` byte for byte, beside `<n>.json` saying when it was written, when and why it
//! was replaced. Every write over an existing skill keeps the old file here first, so any
//! change can be looked at and rolled back; a rollback is such a write too, so it can be
//! undone. The loader skips dot-folders, so nothing here is ever retrieved or injected.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::outside;
use crate::parse::{SkillError, is_slug, parse_skill};
use crate::skill::Skill;
use crate::write::{render_skill, write_atomically};

/// The folder under a library that holds earlier versions.
pub const DIR: &str = ".history";
/// Versions kept per skill; the oldest go first, so the folder cannot grow for ever.
pub const KEEP: usize = 20;

/// One earlier version of a skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Version {
    /// Counts up per skill; the highest is the version replaced last.
    pub n: u32,
    /// When this version was written (its file's modification time), Unix milliseconds.
    pub written_ms: u64,
    /// When it was replaced, Unix milliseconds.
    pub replaced_ms: u64,
    /// What replaced it: `learned`, `approved`, `edited`, `team`, `imported`, `updated`
    /// (a newer built-in), `rollback`, `deleted`.
    pub reason: String,
}

/// Writes `skill` as `<library>/<name>/SKILL.md`, first keeping the file it replaces (if
/// any) as the newest version, with `reason`.
pub fn replace(library: &Path, skill: &Skill, reason: &str) -> Result<PathBuf, SkillError> {
    let text = render_skill(skill)?;
    replace_bytes(library, &skill.name, text.as_bytes(), reason)
}

/// Like [`replace`], with the file's bytes as they are.
pub fn replace_bytes(
    library: &Path,
    name: &str,
    bytes: &[u8],
    reason: &str,
) -> Result<PathBuf, SkillError> {
    keep(library, name, reason)?;
    let folder = library.join(name);
    fs::create_dir_all(&folder).map_err(|e| SkillError::io(&folder, e))?;
    // What MetaClaw wrote is what it saw, noted first: a reload between the two writes
    // must not take this write for an edit made outside MetaClaw.
    outside::remember(library, name, bytes)?;
    let target = folder.join("SKILL.md");
    write_atomically(&target, bytes)?;
    Ok(target)
}

/// Copies the current `SKILL.md` of `name` (if there is one) into its history as the
/// newest version, then drops versions beyond [`KEEP`]. Returns the version kept.
pub fn keep(library: &Path, name: &str, reason: &str) -> Result<Option<Version>, SkillError> {
    slot(library, name)?;
    let current = library.join(name).join("SKILL.md");
    let bytes = match fs::read(&current) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(SkillError::io(&current, e)),
    };
    let written_ms = fs::metadata(&current)
        .and_then(|m| m.modified())
        .map_or(0, millis);
    keep_bytes(library, name, &bytes, written_ms, reason).map(Some)
}

/// Keeps `bytes` (a file of `name` written at `written_ms`) as its newest version, replaced
/// now for `reason`, then drops versions beyond [`KEEP`].
pub(crate) fn keep_bytes(
    library: &Path,
    name: &str,
    bytes: &[u8],
    written_ms: u64,
    reason: &str,
) -> Result<Version, SkillError> {
    let folder = slot(library, name)?;
    fs::create_dir_all(&folder).map_err(|e| SkillError::io(&folder, e))?;
    let n = numbers(&folder).last().map_or(1, |n| n + 1);
    let version = Version {
        n,
        written_ms,
        replaced_ms: millis(SystemTime::now()),
        reason: reason.to_owned(),
    };
    write_atomically(&folder.join(format!("{n}.md")), bytes)?;
    let record = serde_json::to_vec_pretty(&version)
        .map_err(|e| SkillError::invalid(None, None, format!("history record: {e}")))?;
    write_atomically(&folder.join(format!("{n}.json")), &record)?;
    let all = numbers(&folder);
    for old in &all[..all.len().saturating_sub(KEEP)] {
        for ext in ["md", "json"] {
            let path = folder.join(format!("{old}.{ext}"));
            fs::remove_file(&path).map_err(|e| SkillError::io(&path, e))?;
        }
    }
    Ok(version)
}

/// The versions of `name`, newest first. A version whose record is unreadable is listed
/// with `reason` saying so, so it can still be seen and restored.
pub fn list(library: &Path, name: &str) -> Result<Vec<Version>, SkillError> {
    let folder = slot(library, name)?;
    let mut out: Vec<Version> = numbers(&folder)
        .into_iter()
        .map(|n| {
            let path = folder.join(format!("{n}.json"));
            fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<Version>(&b).ok())
                .unwrap_or_else(|| Version {
                    n,
                    written_ms: 0,
                    replaced_ms: 0,
                    reason: format!("unreadable record {}", path.display()),
                })
        })
        .collect();
    out.reverse();
    Ok(out)
}

/// The file of version `n` of `name`, byte for byte.
pub fn read(library: &Path, name: &str, n: u32) -> Result<Vec<u8>, SkillError> {
    let path = slot(library, name)?.join(format!("{n}.md"));
    fs::read(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            SkillError::invalid(None, None, format!("{name} has no version {n}"))
        } else {
            SkillError::io(&path, e)
        }
    })
}

/// Restores version `to` of `name` (the newest when `None`) byte for byte, keeping the file
/// it replaces as a new version, so rolling back again undoes it. Returns the version
/// restored.
pub fn rollback(library: &Path, name: &str, to: Option<u32>) -> Result<u32, SkillError> {
    let folder = slot(library, name)?;
    let n = match to {
        Some(n) => n,
        None => numbers(&folder).last().copied().ok_or_else(|| {
            SkillError::invalid(None, None, format!("{name} has no earlier version"))
        })?,
    };
    let bytes = read(library, name, n)?;
    // A version that no longer parses as this skill would vanish from the library.
    let text = String::from_utf8_lossy(&bytes);
    let (skill, _) = parse_skill(&text, None)?;
    if skill.name != name {
        let msg = format!("version {n} names `{}`, not `{name}`", skill.name);
        return Err(SkillError::invalid(None, None, msg));
    }
    replace_bytes(library, name, &bytes, "rollback")?;
    Ok(n)
}

pub(crate) fn slot(library: &Path, name: &str) -> Result<PathBuf, SkillError> {
    if !is_slug(name) {
        let msg = format!("expected a skill name like debug-systematically, got {name:?}");
        return Err(SkillError::invalid(None, None, msg));
    }
    Ok(library.join(DIR).join(name))
}

/// The version numbers present in a skill's history folder, ascending.
fn numbers(folder: &Path) -> Vec<u32> {
    let Ok(entries) = fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut out: Vec<u32> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".md")?.parse().ok()
        })
        .collect();
    out.sort_unstable();
    out
}

pub(crate) fn millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::Source;

    fn skill(name: &str, body: &str) -> Skill {
        Skill {
            name: name.into(),
            description: "Use when testing history".into(),
            category: "coding".into(),
            tags: vec![],
            always: false,
            disabled: false,
            source: Source::User,
            provenance: None,
            body: body.into(),
            path: None,
            extra: Default::default(),
        }
    }

    #[test]
    fn each_replace_keeps_the_previous_file_and_rollback_restores_it_byte_for_byte() {
        let lib = tempfile::tempdir().unwrap();
        let file = lib.path().join("brew/SKILL.md");
        // Bytes no renderer would produce: a rollback must not re-render them.
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        let first = "---\nname: brew\ndescription: Use when testing history\n---\n\nfirst  \n\n";
        fs::write(&file, first).unwrap();
        replace(lib.path(), &skill("brew", "second"), "edited").unwrap();
        let versions = list(lib.path(), "brew").unwrap();
        assert_eq!(versions.len(), 1);
        assert_eq!((versions[0].n, versions[0].reason.as_str()), (1, "edited"));
        assert_eq!(read(lib.path(), "brew", 1).unwrap(), first.as_bytes());

        let second = fs::read(&file).unwrap();
        assert_eq!(rollback(lib.path(), "brew", None).unwrap(), 1);
        assert_eq!(fs::read(&file).unwrap(), first.as_bytes());
        // The rollback is a version too: rolling back again undoes it.
        assert_eq!(list(lib.path(), "brew").unwrap()[0].reason, "rollback");
        assert_eq!(rollback(lib.path(), "brew", None).unwrap(), 2);
        assert_eq!(fs::read(&file).unwrap(), second);
        assert_eq!(rollback(lib.path(), "brew", Some(1)).unwrap(), 1);
        assert_eq!(fs::read(&file).unwrap(), first.as_bytes());
    }

    #[test]
    fn history_is_bounded_and_the_library_never_loads_it() {
        let lib = tempfile::tempdir().unwrap();
        for i in 0..(KEEP + 5) {
            replace(lib.path(), &skill("brew", &format!("body {i}")), "edited").unwrap();
        }
        let versions = list(lib.path(), "brew").unwrap();
        assert_eq!(versions.len(), KEEP);
        assert_eq!(versions[0].n as usize, KEEP + 4, "newest first");
        assert_eq!(versions[KEEP - 1].n, 5, "the oldest went");
        let loaded = crate::Library::load(&[lib.path().to_path_buf()]);
        let names: Vec<&str> = loaded.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["brew"]);
    }

    #[test]
    fn bad_names_and_missing_versions_are_clear_errors_that_change_nothing() {
        let lib = tempfile::tempdir().unwrap();
        replace(lib.path(), &skill("brew", "only"), "edited").unwrap();
        let before = fs::read(lib.path().join("brew/SKILL.md")).unwrap();
        let e = rollback(lib.path(), "brew", None).unwrap_err();
        assert!(e.to_string().contains("no earlier version"), "{e}");
        let e = rollback(lib.path(), "brew", Some(7)).unwrap_err();
        assert!(e.to_string().contains("no version 7"), "{e}");
        let e = rollback(lib.path(), "../x", None).unwrap_err();
        assert!(e.to_string().contains("expected a skill name"), "{e}");
        assert_eq!(fs::read(lib.path().join("brew/SKILL.md")).unwrap(), before);
    }
}
