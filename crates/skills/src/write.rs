//! Writing a `SKILL.md`: frontmatter serialized by serde so any text round-trips, and an
//! atomic replace so a reader (or the watcher) never sees half a file.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::parse::{SkillError, is_slug};
use crate::skill::{Provenance, Skill, Source};

#[derive(Serialize)]
struct Frontmatter<'a> {
    name: &'a str,
    description: &'a str,
    category: &'a str,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tags: &'a [String],
    #[serde(skip_serializing_if = "is_false")]
    always: bool,
    #[serde(skip_serializing_if = "is_false")]
    disabled: bool,
    source: Source,
    #[serde(skip_serializing_if = "Option::is_none")]
    provenance: Option<&'a Provenance>,
}

fn is_false(b: &bool) -> bool {
    !b
}

/// The file text for a skill: `---`, YAML, `---`, a blank line, the body, a trailing newline.
pub fn render_skill(skill: &Skill) -> Result<String, SkillError> {
    let fm = Frontmatter {
        name: &skill.name,
        description: &skill.description,
        category: &skill.category,
        tags: &skill.tags,
        always: skill.always,
        disabled: skill.disabled,
        source: skill.source,
        provenance: skill.provenance.as_ref(),
    };
    let yaml = serde_yaml_ng::to_string(&fm)
        .map_err(|e| SkillError::invalid(skill.path.as_deref(), None, e.to_string()))?;
    Ok(format!("---\n{yaml}---\n\n{}\n", skill.body.trim()))
}

/// Writes `<dir>/<name>/SKILL.md` through a temp file in the same folder, fsync and rename.
/// The name must be a slug, so the target can never leave `dir`.
pub fn write_skill_atomically(dir: &Path, skill: &Skill) -> Result<PathBuf, SkillError> {
    if !is_slug(&skill.name) {
        let msg = format!(
            "name: expected a slug like debug-systematically, got {:?}",
            skill.name
        );
        return Err(SkillError::invalid(None, None, msg));
    }
    let text = render_skill(skill)?;
    let folder = dir.join(&skill.name);
    fs::create_dir_all(&folder).map_err(|e| SkillError::io(&folder, e))?;
    let target = folder.join("SKILL.md");
    write_atomically(&target, text.as_bytes())?;
    Ok(target)
}

/// Replaces `target` with `bytes` atomically; the temporary file starts with a dot so the
/// library loader and the watcher's reload ignore it if it is ever left behind.
pub(crate) fn write_atomically(target: &Path, bytes: &[u8]) -> Result<(), SkillError> {
    metaclaw_files::write_atomic(target, bytes, None).map_err(|e| SkillError::io(target, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_skill;

    fn skill(name: &str) -> Skill {
        Skill {
            name: name.into(),
            description: "Use when: things # break \"badly\"\nand 'more'".into(),
            category: "coding".into(),
            tags: vec!["a: b".into(), "#c".into(), "- d".into()],
            always: true,
            disabled: false,
            source: Source::Evolved,
            provenance: Some(Provenance {
                sessions: vec!["s1".into()],
                created_at: Some("2026-01-01T00:00:00Z".into()),
                model: Some("m".into()),
                improves: None,
                ..Provenance::default()
            }),
            body: "# Title\n\n---\n\nbody: text".into(),
            path: None,
        }
    }

    #[test]
    fn render_then_parse_round_trips() {
        let s = skill("tricky");
        let text = render_skill(&s).unwrap();
        assert!(text.starts_with("---\nname: tricky\n") && text.ends_with("body: text\n"));
        let (back, warnings) = parse_skill(&text, None).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        // Descriptions are one line by contract: the newline collapses to a space.
        let expected = Skill {
            description: s.description.replace('\n', " "),
            ..s
        };
        assert_eq!(back, expected);
    }

    #[test]
    fn atomic_write_creates_the_folder_and_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_skill_atomically(dir.path(), &skill("new-one")).unwrap();
        assert_eq!(path, dir.path().join("new-one/SKILL.md"));
        let mut s = skill("new-one");
        s.body = "second".into();
        write_skill_atomically(dir.path(), &s).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.ends_with("\n\nsecond\n"), "{text}");
        let names: Vec<_> = fs::read_dir(dir.path().join("new-one"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["SKILL.md"], "no temp file left behind");
    }

    #[test]
    fn non_slug_names_are_rejected() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        for name in ["../../x", "..", "x/y", "", "Foo", "/abs"] {
            let e = write_skill_atomically(&dir, &skill(name)).unwrap_err();
            assert!(e.to_string().contains("expected a slug"), "{e}");
        }
        assert!(!root.path().join("x").exists());
        assert!(!dir.exists(), "nothing created for a rejected name");
    }
}
