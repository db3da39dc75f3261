//! `skills import`: skill folders from a folder or a `.zip` into a library.
//!
//! Accepted layouts: one skill folder (`SKILL.md` inside), a folder of skill folders, or a
//! `.zip` of either (also with one wrapping folder, as archives often have). A skill folder
//! is Anthropic's Agent Skills layout and ours alike: `SKILL.md` with YAML front matter
//! (`name`, `description`, ...) and any resource files beside it, which are kept. Other
//! tools' front matter (ClawHub's `version`, `metadata.openclaw`) is kept under `metadata`.
//!
//! Every skill passes the safety gate; a flagged one is quarantined, never written into the
//! library. The rest are written as `source: imported` with where they came from, replacing
//! a library skill of the same name (reported as updated) unless nothing changed (skipped).

use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::gate::{self, Finding};
use crate::parse::{SkillError, parse_skill};
use crate::quarantine::{self, copy_resources};
use crate::skill::{Provenance, Skill, Source};
use crate::write::{render_skill, write_atomically};

/// Most files an archive may hold.
const MAX_ENTRIES: usize = 2_000;
/// Most bytes an archive may unpack to.
const MAX_UNPACKED: u64 = 50 * 1024 * 1024;

/// What happened to one skill.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub enum Outcome {
    Imported,
    /// Replaced a library skill of the same name.
    Updated,
    /// The library already holds the same skill.
    Skipped,
    /// Held back by the safety gate.
    Quarantined {
        reasons: Vec<Finding>,
    },
    /// Not a readable skill: `file:line: message`.
    Invalid {
        error: String,
    },
}

/// One skill of an import: its name (its folder's, when it could not be read).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    pub name: String,
    #[serde(flatten)]
    pub outcome: Outcome,
    /// What the file had that MetaClaw does not keep (unknown front matter keys, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Imports the skills of `source` (a folder or a `.zip`) into the library folder `library`.
/// Fails only when `source` cannot be read at all or holds no skill; each skill's own
/// problem is its item's outcome.
pub fn import(library: &Path, source: &Path) -> Result<Vec<Item>, SkillError> {
    let origin = source.display().to_string();
    if source.is_file() {
        let staging = library.join(format!(".incoming-{}", unique()));
        let unpacked =
            unzip(source, &staging).and_then(|()| import_dir(library, &staging, &origin));
        let _ = fs::remove_dir_all(&staging);
        return unpacked;
    }
    import_dir(library, source, &origin)
}

fn import_dir(library: &Path, dir: &Path, origin: &str) -> Result<Vec<Item>, SkillError> {
    let folders = skill_folders(dir)?;
    if folders.is_empty() {
        let msg = "no skill found (a folder with a SKILL.md, or a folder of such folders)";
        return Err(SkillError::invalid(Some(dir), None, msg.into()));
    }
    fs::create_dir_all(library).map_err(|e| SkillError::io(library, e))?;
    Ok(folders
        .iter()
        .map(|folder| import_one(library, folder, origin))
        .collect())
}

/// `dir` itself when it is a skill folder, else its skill subfolders; a folder wrapping one
/// other folder is looked into.
fn skill_folders(dir: &Path) -> Result<Vec<PathBuf>, SkillError> {
    if dir.join("SKILL.md").is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let entries = fs::read_dir(dir).map_err(|e| SkillError::io(dir, e))?;
    let mut subdirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    subdirs.sort();
    let skills: Vec<PathBuf> = subdirs
        .iter()
        .filter(|d| d.join("SKILL.md").is_file())
        .cloned()
        .collect();
    match (skills.is_empty(), subdirs.as_slice()) {
        (true, [only]) => skill_folders(only),
        _ => Ok(skills),
    }
}

fn import_one(library: &Path, folder: &Path, origin: &str) -> Item {
    let folder_name = folder
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let file = folder.join("SKILL.md");
    let parsed = fs::read_to_string(&file)
        .map_err(|e| SkillError::io(&file, e))
        .and_then(|text| parse_skill(&text, Some(&file)));
    let (mut skill, warnings) = match parsed {
        Ok((skill, warnings)) => (skill, warnings.iter().map(ToString::to_string).collect()),
        Err(e) => {
            return Item {
                name: folder_name,
                outcome: Outcome::Invalid {
                    error: e.to_string(),
                },
                warnings: Vec::new(),
            };
        }
    };
    skill.source = Source::Imported;
    skill.path = None;
    let provenance = skill.provenance.get_or_insert_with(Provenance::default);
    provenance.origin = Some(origin.to_owned());
    let name = skill.name.clone();
    let outcome = match place(library, folder, &skill, origin) {
        Ok(outcome) => outcome,
        Err(e) => Outcome::Invalid {
            error: e.to_string(),
        },
    };
    Item {
        name,
        outcome,
        warnings,
    }
}

fn place(
    library: &Path,
    folder: &Path,
    skill: &Skill,
    origin: &str,
) -> Result<Outcome, SkillError> {
    let findings = gate::scan(skill);
    if !findings.is_empty() {
        quarantine::hold(
            library,
            skill,
            Some(folder),
            findings.clone(),
            &format!("import: {origin}"),
        )?;
        return Ok(Outcome::Quarantined { reasons: findings });
    }
    let target = library.join(&skill.name);
    let existing = fs::read_to_string(target.join("SKILL.md"))
        .ok()
        .and_then(|text| parse_skill(&text, None).ok())
        .map(|(s, _)| s);
    if let Some(current) = &existing
        && same_skill(current, skill)
        && same_files(folder, &target)
    {
        return Ok(Outcome::Skipped);
    }
    // Built beside the library under a dot-name (which the loader and the watcher's reload
    // skip), then swapped in, so the library never shows a half-written skill.
    let staged = library.join(format!(".staged-{}-{}", skill.name, unique()));
    fs::create_dir_all(&staged).map_err(|e| SkillError::io(&staged, e))?;
    let built = copy_resources(folder, &staged)
        .and_then(|()| render_skill(skill))
        .and_then(|text| write_atomically(&staged.join("SKILL.md"), text.as_bytes()));
    if let Err(e) = built {
        let _ = fs::remove_dir_all(&staged);
        return Err(e);
    }
    crate::history::keep(library, &skill.name, "imported")?;
    if target.exists() {
        fs::remove_dir_all(&target).map_err(|e| SkillError::io(&target, e))?;
    }
    fs::rename(&staged, &target).map_err(|e| SkillError::io(&target, e))?;
    Ok(if existing.is_some() {
        Outcome::Updated
    } else {
        Outcome::Imported
    })
}

/// Equal in everything retrieval and injection use, and in what other tools wrote.
fn same_skill(a: &Skill, b: &Skill) -> bool {
    (
        &a.name,
        &a.description,
        &a.category,
        &a.tags,
        a.always,
        a.disabled,
        a.body.trim(),
        &a.extra,
    ) == (
        &b.name,
        &b.description,
        &b.category,
        &b.tags,
        b.always,
        b.disabled,
        b.body.trim(),
        &b.extra,
    )
}

/// Whether the resource files (all but `SKILL.md` and dot-files) of two folders are equal.
fn same_files(a: &Path, b: &Path) -> bool {
    let listing = |dir: &Path| -> Option<Vec<(PathBuf, Vec<u8>)>> {
        let mut out = Vec::new();
        collect(dir, dir, &mut out).ok()?;
        out.sort();
        Some(out)
    };
    matches!((listing(a), listing(b)), (Some(x), Some(y)) if x == y)
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == "SKILL.md" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            collect(root, &path, out)?;
        } else if kind.is_file() {
            let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
            out.push((rel, fs::read(&path)?));
        }
    }
    Ok(())
}

/// Unpacks `archive` into `into`, refusing entries that would land outside it, links, and
/// archives too large to be a set of skills.
fn unzip(archive: &Path, into: &Path) -> Result<(), SkillError> {
    let file = fs::File::open(archive).map_err(|e| SkillError::io(archive, e))?;
    let bad = |message: String| SkillError::invalid(Some(archive), None, message);
    let mut zip = zip::ZipArchive::new(file).map_err(|e| bad(format!("not a zip archive: {e}")))?;
    if zip.len() > MAX_ENTRIES {
        return Err(bad(format!("{} entries; at most {MAX_ENTRIES}", zip.len())));
    }
    let mut unpacked = 0u64;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| bad(e.to_string()))?;
        let raw = entry.name().map_err(|e| bad(e.to_string()))?.into_owned();
        let Some(rel) = enclosed(&raw) else {
            return Err(bad(format!("entry {raw:?} would land outside the folder")));
        };
        if entry
            .unix_mode()
            .is_some_and(|m| m & 0o170_000 == 0o120_000)
        {
            return Err(bad(format!("entry {raw:?} is a symbolic link")));
        }
        let target = into.join(rel);
        if entry.is_dir() {
            fs::create_dir_all(&target).map_err(|e| SkillError::io(&target, e))?;
            continue;
        }
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(|e| SkillError::io(parent, e))?;
        }
        unpacked += entry.size();
        if unpacked > MAX_UNPACKED {
            return Err(bad(format!("unpacks to more than {MAX_UNPACKED} bytes")));
        }
        copy_bounded(&mut entry, &target, MAX_UNPACKED)?;
    }
    Ok(())
}

/// Writes at most `limit` bytes of `from` (a declared size can lie).
fn copy_bounded(from: &mut impl Read, to: &Path, limit: u64) -> Result<(), SkillError> {
    let mut out = fs::File::create(to).map_err(|e| SkillError::io(to, e))?;
    let copied =
        std::io::copy(&mut from.take(limit + 1), &mut out).map_err(|e| SkillError::io(to, e))?;
    if copied > limit {
        let msg = format!("unpacks to more than {limit} bytes");
        return Err(SkillError::invalid(Some(to), None, msg));
    }
    Ok(())
}

/// A relative path of plain components, or `None` (absolute, `..`, drive prefixes).
fn enclosed(name: &str) -> Option<PathBuf> {
    let path = Path::new(name);
    let plain = path
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    (plain && !name.is_empty()).then(|| path.to_path_buf())
}

fn unique() -> String {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("{}-{ms}", std::process::id())
}
