//! The built-in bank, embedded at build time, and its installation into the user's library
//! without ever overwriting the user's edits or resurrecting what they deleted.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::ErrorKind;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::parse::{SkillError, is_slug};
use crate::write::write_atomically;

/// `(folder name, SKILL.md text)` for every `skills/*/SKILL.md` in the repo, sorted by name.
static BANK: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/bank.rs"));

const MANIFEST: &str = ".builtin-manifest.json";

/// The embedded built-in skills as `(name, file text)`, sorted by name.
pub fn builtin_skills() -> Vec<(String, &'static str)> {
    BANK.iter().map(|(n, t)| (n.to_string(), *t)).collect()
}

/// What `install_builtins` did, by skill name.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct InstallReport {
    /// Newly copied into the user's library.
    pub installed: Vec<String>,
    /// Replaced by a newer bundled version; the user had not touched them.
    pub updated: Vec<String>,
    /// A newer bundled version exists but the user's file differs from what was installed.
    pub kept_user_edits: Vec<String>,
}

/// What was installed last time; lives in the user's library as a dot-file the loader skips.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
struct Manifest {
    /// Name → SHA-256 (hex) of the text last installed.
    #[serde(default)]
    installed: BTreeMap<String, String>,
    /// Names never to touch again: deleted by the user after installation, or present
    /// before we first installed them.
    #[serde(default)]
    user_owned: BTreeSet<String>,
}

/// Copies the built-in bank into `user_dir/<name>/SKILL.md` (see [`InstallReport`]).
pub fn install_builtins(user_dir: &Path) -> Result<InstallReport, SkillError> {
    install(user_dir, BANK)
}

fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn read_optional(path: &Path) -> Result<Option<String>, SkillError> {
    match fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(SkillError::io(path, e)),
    }
}

fn install(user_dir: &Path, bank: &[(&str, &str)]) -> Result<InstallReport, SkillError> {
    fs::create_dir_all(user_dir).map_err(|e| SkillError::io(user_dir, e))?;
    let manifest_path = user_dir.join(MANIFEST);
    let before: Manifest = match read_optional(&manifest_path)? {
        // A corrupt manifest would make us treat every file as the user's: safe, so no error.
        Some(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
            tracing::warn!(
                "{}: {e}; treating existing skills as yours",
                manifest_path.display()
            );
            Manifest::default()
        }),
        None => Manifest::default(),
    };
    let mut m = Manifest {
        installed: before.installed.clone(),
        user_owned: before.user_owned.clone(),
    };
    let mut report = InstallReport::default();

    for &(name, text) in bank {
        if !is_slug(name) || m.user_owned.contains(name) {
            continue;
        }
        let folder = user_dir.join(name);
        let target = folder.join("SKILL.md");
        let current = read_optional(&target)?;
        let bundled = sha256(text);
        match (m.installed.get(name), current) {
            (None, None) => {
                fs::create_dir_all(&folder).map_err(|e| SkillError::io(&folder, e))?;
                write_atomically(&target, text.as_bytes())?;
                m.installed.insert(name.into(), bundled);
                report.installed.push(name.into());
            }
            (None, Some(_)) => {
                m.user_owned.insert(name.into());
            }
            (Some(_), None) => {
                m.installed.remove(name);
                m.user_owned.insert(name.into());
            }
            (Some(last), Some(cur)) => {
                let cur = sha256(&cur);
                if *last == bundled {
                    continue;
                } else if cur == bundled {
                    // The user already has exactly the new text.
                    m.installed.insert(name.into(), bundled);
                } else if cur == *last {
                    crate::history::keep(user_dir, name, "updated")?;
                    write_atomically(&target, text.as_bytes())?;
                    m.installed.insert(name.into(), bundled);
                    report.updated.push(name.into());
                } else {
                    report.kept_user_edits.push(name.into());
                }
            }
        }
    }

    if m != before {
        let json = serde_json::to_string_pretty(&m)
            .map_err(|e| SkillError::invalid(Some(&manifest_path), None, e.to_string()))?;
        write_atomically(&manifest_path, json.as_bytes())?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::read_skill;
    use crate::write::render_skill;

    fn text(name: &str, version: u32) -> String {
        format!(
            "---\nname: {name}\ndescription: v{version}\nsource: builtin\n---\n\nbody {version}\n"
        )
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn read(dir: &Path, name: &str) -> String {
        fs::read_to_string(dir.join(name).join("SKILL.md")).unwrap()
    }

    #[test]
    fn install_upgrade_keeps_edits_and_deletions() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("skills");
        let (a1, b1, c1, d1) = (text("a", 1), text("b", 1), text("c", 1), text("d", 1));
        // The user had their own `d` before the bank was ever installed.
        fs::create_dir_all(dir.join("d")).unwrap();
        fs::write(dir.join("d/SKILL.md"), "mine").unwrap();
        let v1 = [("a", &*a1), ("b", &*b1), ("c", &*c1), ("d", &*d1)];

        let r = install(&dir, &v1).unwrap();
        assert_eq!(r.installed, names(&["a", "b", "c"]));
        assert!(r.updated.is_empty() && r.kept_user_edits.is_empty());
        assert_eq!(read(&dir, "a"), a1);
        assert_eq!(read(&dir, "d"), "mine");

        let manifest = fs::read_to_string(dir.join(MANIFEST)).unwrap();
        assert_eq!(install(&dir, &v1).unwrap(), InstallReport::default());
        assert_eq!(fs::read_to_string(dir.join(MANIFEST)).unwrap(), manifest);

        // The user edits `b` and deletes `c`; then the bank changes all four.
        fs::write(dir.join("b/SKILL.md"), "edited").unwrap();
        fs::remove_dir_all(dir.join("c")).unwrap();
        let (a2, b2, c2, d2) = (text("a", 2), text("b", 2), text("c", 2), text("d", 2));
        let v2 = [("a", &*a2), ("b", &*b2), ("c", &*c2), ("d", &*d2)];
        let r = install(&dir, &v2).unwrap();
        assert_eq!(r.updated, names(&["a"]));
        assert_eq!(r.kept_user_edits, names(&["b"]));
        assert!(r.installed.is_empty());
        assert_eq!(read(&dir, "a"), a2);
        assert_eq!(read(&dir, "b"), "edited");
        assert!(!dir.join("c").exists());
        assert_eq!(read(&dir, "d"), "mine");

        // Recreating a deleted skill makes it the user's for good.
        fs::create_dir_all(dir.join("c")).unwrap();
        fs::write(dir.join("c/SKILL.md"), c1.as_bytes()).unwrap();
        let (a3, c3) = (text("a", 3), text("c", 3));
        let v3 = [("a", &*a3), ("b", &*b2), ("c", &*c3), ("d", &*d2)];
        let r = install(&dir, &v3).unwrap();
        assert_eq!(r.updated, names(&["a"]));
        assert_eq!(read(&dir, "c"), c1);
    }

    #[test]
    fn builtin_bank_parses_cleanly() {
        let bank = builtin_skills();
        assert!(bank.len() >= 40, "only {} built-in skills", bank.len());
        for (name, text) in bank {
            let path = format!("skills/{name}/SKILL.md");
            let parsed = read_skill(text, Some(Path::new(&path))).unwrap();
            assert_eq!(
                parsed.skill.name, name,
                "folder and frontmatter name differ"
            );
            assert!(parsed.warnings.is_empty(), "{path}: {:?}", parsed.warnings);
            // Written as the writer writes it: nothing for the start-up rewrite to change.
            assert!(!parsed.legacy, "{path} is in the earlier format");
            assert_eq!(render_skill(&parsed.skill).unwrap(), text, "{path}");
        }
    }
}
