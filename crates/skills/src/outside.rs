//! Edits made outside MetaClaw (an editor, a `git pull`, a script): they get a version too.
//! MetaClaw notes the bytes of each `SKILL.md` as it last saw or wrote them
//! (`<library>/.history/<name>/seen`); when the library is read again and a file no longer
//! holds those bytes, the bytes it held become the skill's newest version ("edited outside
//! MetaClaw", or "deleted outside MetaClaw" for a file that is gone), so the edit can be
//! looked at and rolled back like any other. A skill seen for the first time is only noted.

use std::fs;
use std::path::Path;

use crate::history::{self, keep_bytes, millis, slot};
use crate::parse::{SkillError, is_slug};
use crate::write::write_atomically;

const SEEN: &str = "seen";
pub const EDITED: &str = "edited outside MetaClaw";
pub const DELETED: &str = "deleted outside MetaClaw";

/// Notes `bytes` as what `name`'s file holds now (MetaClaw is writing them).
pub(crate) fn remember(library: &Path, name: &str, bytes: &[u8]) -> Result<(), SkillError> {
    let folder = slot(library, name)?;
    fs::create_dir_all(&folder).map_err(|e| SkillError::io(&folder, e))?;
    write_atomically(&folder.join(SEEN), bytes)
}

/// Compares every skill of `library` with what MetaClaw last saw of it, keeps what an
/// outside edit replaced, and notes the files as they are now. The names whose edit was kept.
pub fn note(library: &Path) -> Result<Vec<String>, SkillError> {
    let mut names: Vec<String> = Vec::new();
    for dir in [library.to_path_buf(), library.join(history::DIR)] {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.filter_map(Result::ok) {
            let name = e.file_name().to_string_lossy().into_owned();
            if is_slug(&name) && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names.sort();
    let mut kept = Vec::new();
    for name in names {
        if note_one(library, &name)? {
            kept.push(name);
        }
    }
    Ok(kept)
}

fn note_one(library: &Path, name: &str) -> Result<bool, SkillError> {
    let file = library.join(name).join("SKILL.md");
    let seen_path = slot(library, name)?.join(SEEN);
    let now = fs::read(&file).ok();
    let seen = fs::read(&seen_path).ok();
    match (seen, now) {
        (None, None) => Ok(false),
        (None, Some(bytes)) => remember(library, name, &bytes).map(|()| false),
        (Some(seen), Some(bytes)) if seen == bytes => Ok(false),
        (Some(seen), now) => {
            // Already kept (MetaClaw replaced or deleted it, then noted): nothing to add.
            let newest = history::list(library, name)?
                .first()
                .and_then(|v| history::read(library, name, v.n).ok());
            let recorded = newest.as_deref() != Some(seen.as_slice());
            if recorded {
                let written = fs::metadata(&seen_path)
                    .and_then(|m| m.modified())
                    .map_or(0, millis);
                let reason = if now.is_some() { EDITED } else { DELETED };
                keep_bytes(library, name, &seen, written, reason)?;
            }
            match now {
                Some(bytes) => remember(library, name, &bytes)?,
                None => fs::remove_file(&seen_path).map_err(|e| SkillError::io(&seen_path, e))?,
            }
            Ok(recorded)
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const FIRST: &str =
        "---\nname: tea\ndescription: Use when brewing tea\n---\n\nWarm the pot.   \n";

    #[test]
    fn an_outside_edit_and_an_outside_delete_become_versions_once() {
        let lib = tempfile::tempdir().unwrap();
        let lib = lib.path();
        let file = lib.join("tea/SKILL.md");
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(&file, FIRST).unwrap();
        // First sight: noted, nothing kept.
        assert!(note(lib).unwrap().is_empty());
        assert!(history::list(lib, "tea").unwrap().is_empty());

        let second = FIRST.replace("Warm the pot.", "Use boiling water.");
        fs::write(&file, &second).unwrap();
        assert_eq!(note(lib).unwrap(), ["tea"]);
        assert!(note(lib).unwrap().is_empty(), "kept once");
        let versions = history::list(lib, "tea").unwrap();
        assert_eq!(versions.len(), 1);
        assert_eq!(versions[0].reason, EDITED);
        assert_eq!(history::read(lib, "tea", 1).unwrap(), FIRST.as_bytes());

        // A rollback is MetaClaw's own write: no second outside version.
        history::rollback(lib, "tea", Some(1)).unwrap();
        assert_eq!(fs::read(&file).unwrap(), FIRST.as_bytes());
        assert!(note(lib).unwrap().is_empty());

        fs::remove_dir_all(lib.join("tea")).unwrap();
        assert_eq!(note(lib).unwrap(), ["tea"]);
        let versions = history::list(lib, "tea").unwrap();
        assert_eq!(versions[0].reason, DELETED);
        assert_eq!(
            history::read(lib, "tea", versions[0].n).unwrap(),
            FIRST.as_bytes()
        );
        assert!(note(lib).unwrap().is_empty());
    }
}
