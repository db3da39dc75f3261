//! Learned skills waiting for a person (`skills.review: ask`): `<library>/.proposals/<name>/`
//! holds the proposed `SKILL.md` beside `PROPOSAL.json` (the sessions it came from, whether
//! it improves a skill of the library, when). The loader skips dot-folders, so a proposal is
//! never retrieved or injected; it enters the library only when approved.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::history;
use crate::parse::{SkillError, is_slug, parse_skill};
use crate::skill::Skill;
use crate::write::{render_skill, write_atomically};

/// The folder under a library that holds proposals.
pub const DIR: &str = ".proposals";
const RECORD: &str = "PROPOSAL.json";

/// A learned skill waiting for approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proposal {
    pub name: String,
    pub description: String,
    /// The sessions it was learned from.
    pub sessions: Vec<String>,
    /// It would replace the library's skill of the same name.
    pub improves: bool,
    /// When it was proposed, Unix milliseconds.
    pub at_ms: u64,
}

/// Files `skill` as a proposal, replacing an earlier proposal of the same name.
pub fn propose(library: &Path, skill: &Skill, improves: bool) -> Result<Proposal, SkillError> {
    let folder = slot(library, &skill.name)?;
    fs::create_dir_all(&folder).map_err(|e| SkillError::io(&folder, e))?;
    write_atomically(&folder.join("SKILL.md"), render_skill(skill)?.as_bytes())?;
    let proposal = Proposal {
        name: skill.name.clone(),
        description: skill.description.clone(),
        sessions: skill
            .provenance
            .as_ref()
            .map(|p| p.sessions.clone())
            .unwrap_or_default(),
        improves,
        at_ms: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
    };
    let record = serde_json::to_vec_pretty(&proposal)
        .map_err(|e| SkillError::invalid(None, None, format!("proposal record: {e}")))?;
    write_atomically(&folder.join(RECORD), &record)?;
    Ok(proposal)
}

/// Every proposal, by name; a folder without a readable record is skipped.
pub fn list(library: &Path) -> Vec<Proposal> {
    let Ok(entries) = fs::read_dir(library.join(DIR)) else {
        return Vec::new();
    };
    let mut out: Vec<Proposal> = entries
        .filter_map(Result::ok)
        .filter(|e| is_slug(&e.file_name().to_string_lossy()))
        .filter_map(|e| {
            let bytes = fs::read(e.path().join(RECORD)).ok()?;
            serde_json::from_slice(&bytes).ok()
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The proposed `SKILL.md` of `name`.
pub fn text(library: &Path, name: &str) -> Result<String, SkillError> {
    let file = existing(library, name)?.join("SKILL.md");
    fs::read_to_string(&file).map_err(|e| SkillError::io(&file, e))
}

/// Puts the proposal `name` into the library — as proposed, or as `edited` (a whole
/// `SKILL.md` that must keep the name) — keeping the skill it replaces in the history.
/// Returns the library file.
pub fn approve(library: &Path, name: &str, edited: Option<&str>) -> Result<PathBuf, SkillError> {
    let folder = existing(library, name)?;
    let text = match edited {
        Some(t) => t.to_owned(),
        None => text(library, name)?,
    };
    let (skill, _) = parse_skill(&text, None)?;
    if skill.name != name {
        let msg = format!("the file names `{}`, not `{name}`", skill.name);
        return Err(SkillError::invalid(None, None, msg));
    }
    let file = history::replace_bytes(library, name, text.as_bytes(), "approved")?;
    fs::remove_dir_all(&folder).map_err(|e| SkillError::io(&folder, e))?;
    Ok(file)
}

/// Discards the proposal `name`.
pub fn reject(library: &Path, name: &str) -> Result<(), SkillError> {
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
        let msg = format!("no proposed skill named {name}");
        return Err(SkillError::invalid(None, None, msg));
    }
    Ok(folder)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::{Provenance, Source};

    fn learned(body: &str) -> Skill {
        Skill {
            name: "brew".into(),
            description: "Use when brewing tea".into(),
            category: "general".into(),
            tags: vec![],
            always: false,
            disabled: false,
            source: Source::Evolved,
            provenance: Some(Provenance {
                sessions: vec!["s1".into()],
                ..Provenance::default()
            }),
            body: body.into(),
            path: None,
            extra: Default::default(),
        }
    }

    fn loaded(lib: &Path) -> Vec<String> {
        let library = crate::Library::load(&[lib.to_path_buf()]);
        library.skills.iter().map(|s| s.body.clone()).collect()
    }

    #[test]
    fn a_proposal_is_not_loaded_until_approved() {
        let lib = tempfile::tempdir().unwrap();
        let p = propose(lib.path(), &learned("Warm the pot."), false).unwrap();
        assert_eq!((p.sessions, p.improves), (vec!["s1".to_owned()], false));
        assert_eq!(list(lib.path()).len(), 1);
        assert!(loaded(lib.path()).is_empty());
        approve(lib.path(), "brew", None).unwrap();
        assert_eq!(loaded(lib.path()), ["Warm the pot."]);
        assert!(list(lib.path()).is_empty());
    }

    #[test]
    fn approving_an_improvement_keeps_the_old_version_and_an_edit_is_taken_as_written() {
        let lib = tempfile::tempdir().unwrap();
        crate::write_skill_atomically(lib.path(), &learned("Warm the pot.")).unwrap();
        propose(lib.path(), &learned("Warm the pot. Steep 3 min."), true).unwrap();
        let edited = text(lib.path(), "brew").unwrap().replace("3 min", "4 min");
        approve(lib.path(), "brew", Some(&edited)).unwrap();
        assert_eq!(loaded(lib.path()), ["Warm the pot. Steep 4 min."]);
        let old = history::read(lib.path(), "brew", 1).unwrap();
        assert!(
            String::from_utf8(old)
                .unwrap()
                .contains("\nWarm the pot.\n")
        );
    }

    #[test]
    fn reject_discards_and_bad_input_changes_nothing() {
        let lib = tempfile::tempdir().unwrap();
        propose(lib.path(), &learned("Warm the pot."), false).unwrap();
        let renamed = text(lib.path(), "brew")
            .unwrap()
            .replace("name: brew", "name: other");
        let e = approve(lib.path(), "brew", Some(&renamed)).unwrap_err();
        assert!(e.to_string().contains("names `other`"), "{e}");
        let e = approve(lib.path(), "brew", Some("no frontmatter")).unwrap_err();
        assert!(!e.to_string().is_empty());
        assert_eq!(list(lib.path()).len(), 1, "the proposal is still there");
        assert!(reject(lib.path(), "../brew").is_err());
        reject(lib.path(), "brew").unwrap();
        assert!(list(lib.path()).is_empty() && loaded(lib.path()).is_empty());
        let e = reject(lib.path(), "brew").unwrap_err();
        assert!(e.to_string().contains("no proposed skill"), "{e}");
    }
}
