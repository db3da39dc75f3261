//! Rewrites the skill files of a library written in the earlier format (see `format`) in
//! the current one, so every file conforms to the Agent Skills specification. Runs at start;
//! a library already in the current format is only read.
//!
//! Each original is copied to `<library>/.backup/format-<unix seconds>/<folder>/SKILL.md`
//! before its file is replaced, and a rewrite must load back as exactly the same skill. A
//! file that cannot be read, parsed, backed up or rewritten is left as it is and reported.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::parse::{SkillError, read_skill};
use crate::write::{render_skill, write_atomically};

/// What [`migrate_library`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct MigrationReport {
    /// Folders whose `SKILL.md` was rewritten.
    pub rewritten: Vec<String>,
    /// Files left as they were, each with why (`path: reason`).
    pub failed: Vec<String>,
    /// Where the originals of the rewritten files are.
    pub backup: Option<PathBuf>,
}

/// Rewrites every `<dir>/*/SKILL.md` of the earlier format (see the module doc).
pub fn migrate_library(dir: &Path) -> MigrationReport {
    let mut report = MigrationReport::default();
    let Ok(entries) = fs::read_dir(dir) else {
        return report;
    };
    let mut folders: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|p| p.join("SKILL.md").is_file())
        .collect();
    folders.sort();
    let backup = dir
        .join(".backup")
        .join(format!("format-{}", unix_seconds()));
    for folder in folders {
        let file = folder.join("SKILL.md");
        let name = folder
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        match migrate_file(&file, &backup.join(&name)) {
            Ok(false) => {}
            Ok(true) => {
                report.rewritten.push(name);
                report.backup = Some(backup.clone());
            }
            Err(e) => report.failed.push(e.to_string()),
        }
    }
    report
}

/// Rewrites one file if it is of the earlier format; true when it did.
fn migrate_file(file: &Path, backup: &Path) -> Result<bool, SkillError> {
    let text = fs::read_to_string(file).map_err(|e| SkillError::io(file, e))?;
    let before = read_skill(&text, Some(file))?;
    if !before.legacy {
        return Ok(false);
    }
    if !before.unkept.is_empty() {
        let msg = format!(
            "left in the earlier format: a rewrite would lose {}",
            before.unkept.join(", ")
        );
        return Err(SkillError::invalid(Some(file), None, msg));
    }
    let new_text = render_skill(&before.skill)?;
    let after = read_skill(&new_text, Some(file))?;
    if after.legacy || after.skill != before.skill {
        let msg = "left in the earlier format: the rewrite would not load as the same skill";
        return Err(SkillError::invalid(Some(file), None, msg.into()));
    }
    fs::create_dir_all(backup).map_err(|e| SkillError::io(backup, e))?;
    write_atomically(&backup.join("SKILL.md"), text.as_bytes())?;
    write_atomically(file, new_text.as_bytes())?;
    Ok(true)
}

fn unix_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::Library;

    const OLD: &str = "---\nname: deploy-billing\ndescription: Use when deploying billing.\ncategory: automation\ntags: [deploy, billing]\nalways: true\nsource: evolved\nprovenance:\n  sessions: [s-1, s-2]\n  created_at: '2026-01-02T03:04:05Z'\n  model: m\n  requests: ['deploy billing, then check']\nversion: 1.2.0\n---\n\n# Deploy\n\n1. Run the migrations first.\n";

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let file = dir.join(name).join("SKILL.md");
        fs::create_dir_all(dir.join(name)).unwrap();
        fs::write(&file, text).unwrap();
        file
    }

    #[test]
    fn an_old_file_is_rewritten_loads_the_same_and_its_original_is_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let file = write(dir, "deploy-billing", OLD);
        let current = write(
            dir,
            "current",
            "---\nname: current\ndescription: Already conforming.\n---\n\nBody.\n",
        );
        let broken = write(dir, "broken", "---\nname: [unclosed\n---\n");
        let both = "---\nname: both\ndescription: Category written twice.\ncategory: coding\nmetadata:\n  metaclaw-category: research\n---\n\nBody.\n";
        let both_file = write(dir, "both", both);
        let before = Library::load(&[dir.to_path_buf()]);

        let report = migrate_library(dir);
        assert_eq!(report.rewritten, ["deploy-billing"]);
        assert_eq!(report.failed.len(), 2, "{report:?}");
        assert!(
            report.failed[0].contains(
                "both/SKILL.md: left in the earlier format: a rewrite would lose category"
            ),
            "{report:?}"
        );
        assert!(report.failed[1].contains("broken"), "{report:?}");
        assert_eq!(fs::read_to_string(&both_file).unwrap(), both);
        let backup = report.backup.unwrap();
        assert_eq!(
            fs::read_to_string(backup.join("deploy-billing/SKILL.md")).unwrap(),
            OLD
        );
        let text = fs::read_to_string(&file).unwrap();
        assert!(!read_skill(&text, None).unwrap().legacy, "{text}");
        assert!(text.contains("  version: 1.2.0\n"), "{text}");
        // Untouched: the conforming file and the one that cannot be read.
        assert!(fs::read_to_string(&current).unwrap().contains("Already"));
        assert_eq!(
            fs::read_to_string(&broken).unwrap(),
            "---\nname: [unclosed\n---\n"
        );

        let after = Library::load(&[dir.to_path_buf()]);
        assert_eq!(after.skills, before.skills);
        assert_eq!(after.fingerprint(), before.fingerprint());
        // Once is enough.
        assert_eq!(migrate_library(dir).rewritten, Vec::<String>::new());
    }
}
