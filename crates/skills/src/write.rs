//! Writing a `SKILL.md`: frontmatter serialized by serde so any text round-trips, and an
//! atomic replace so a reader (or the watcher) never sees half a file.

use std::fs;
use std::path::{Path, PathBuf};

use serde_yaml_ng::{Mapping, Value};

use crate::format;
use crate::parse::{SkillError, is_slug};
use crate::skill::Skill;

/// The frontmatter as the specification allows it (see `format`): MetaClaw's fields and
/// other tools' metadata under `metadata`, every value a string.
fn frontmatter(skill: &Skill) -> Mapping {
    let mut top = Mapping::new();
    put(&mut top, "name", &skill.name);
    put(&mut top, "description", &skill.description);
    let extra = &skill.extra;
    for (key, value) in [
        ("license", &extra.license),
        ("compatibility", &extra.compatibility),
        ("allowed-tools", &extra.allowed_tools),
    ] {
        if let Some(v) = value {
            put(&mut top, key, v);
        }
    }
    let mut meta = Mapping::new();
    put(&mut meta, format::CATEGORY, &skill.category);
    if !skill.tags.is_empty() {
        put(&mut meta, format::TAGS, &format::join_tags(&skill.tags));
    }
    if skill.always {
        put(&mut meta, format::ALWAYS, "true");
    }
    if skill.disabled {
        put(&mut meta, format::DISABLED, "true");
    }
    put(&mut meta, format::SOURCE, skill.source.key());
    if let Some(p) = &skill.provenance {
        if !p.sessions.is_empty() {
            put(&mut meta, format::SESSIONS, &format::join_list(&p.sessions));
        }
        for (key, value) in [
            (format::CREATED_AT, &p.created_at),
            (format::MODEL, &p.model),
            (format::IMPROVES, &p.improves),
        ] {
            if let Some(v) = value {
                put(&mut meta, key, v);
            }
        }
        if let Some(g) = p.generation {
            put(&mut meta, format::GENERATION, &g.to_string());
        }
        if let Some(o) = &p.origin {
            put(&mut meta, format::ORIGIN, o);
        }
        if !p.requests.is_empty() {
            put(&mut meta, format::REQUESTS, &format::join_list(&p.requests));
        }
    }
    for (key, value) in &extra.metadata {
        if !meta.contains_key(key.as_str()) {
            put(&mut meta, key, value);
        }
    }
    top.insert(Value::from("metadata"), Value::Mapping(meta));
    top
}

fn put(m: &mut Mapping, key: &str, value: &str) {
    m.insert(Value::from(key), Value::from(value));
}

/// The file text for a skill: `---`, YAML, `---`, a blank line, the body, a trailing newline.
pub fn render_skill(skill: &Skill) -> Result<String, SkillError> {
    let fm = frontmatter(skill);
    let mut yaml = serde_yaml_ng::to_string(&fm)
        .map_err(|e| SkillError::invalid(skill.path.as_deref(), None, e.to_string()))?;
    // Readers that cut the file at the first `---` (the reference validator among them)
    // would end the frontmatter inside such a value: every value is then written escaped.
    if yaml.contains("---") {
        yaml = escaped_yaml(&fm);
    }
    Ok(format!("---\n{yaml}---\n\n{}\n", skill.body.trim()))
}

/// The frontmatter with every string double-quoted as JSON (which YAML reads as is) and
/// each `-` of a `---` as `\u002d`.
fn escaped_yaml(fm: &Mapping) -> String {
    let quote = |v: &Value| {
        serde_json::to_string(&format::text_of(v))
            .unwrap_or_default()
            .replace("---", "\\u002d--")
    };
    let key = |k: &Value| {
        let k = format::text_of(k);
        let plain = !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && !k.contains("---");
        if plain { k } else { quote(&Value::from(k)) }
    };
    let mut out = String::new();
    for (k, v) in fm {
        match v {
            Value::Mapping(inner) => {
                out.push_str(&format!("{}:\n", key(k)));
                for (k, v) in inner {
                    out.push_str(&format!("  {}: {}\n", key(k), quote(v)));
                }
            }
            v => out.push_str(&format!("{}: {}\n", key(k), quote(v))),
        }
    }
    out
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
    use crate::skill::{Provenance, Source};

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
            extra: Default::default(),
        }
    }

    #[test]
    fn render_then_parse_round_trips() {
        let mut s = skill("tricky");
        s.extra.license = Some("MIT".into());
        s.extra.metadata.insert(
            "openclaw".into(),
            r#"{"requires":{"bins":["curl"]}}"#.into(),
        );
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
        assert!(!crate::parse::read_skill(&text, None).unwrap().legacy);
    }

    #[test]
    fn a_value_holding_three_dashes_cannot_end_the_frontmatter() {
        let mut s = skill("dashes");
        s.description = "Use when a --- line splits a file".into();
        s.extra.metadata.insert("odd key".into(), "x---y".into());
        let text = render_skill(&s).unwrap();
        let frontmatter = &text[3..text.find("\n---\n").unwrap()];
        assert!(!frontmatter.contains("---"), "{text}");
        let (back, _) = parse_skill(&text, None).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn only_the_specification_keys_and_string_values_are_written() {
        let text = render_skill(&skill("tricky")).unwrap();
        let yaml = text
            .split("\n---\n")
            .next()
            .unwrap()
            .trim_start_matches("---\n");
        let fm: serde_yaml_ng::Mapping = serde_yaml_ng::from_str(yaml).unwrap();
        let keys: Vec<&str> = fm.keys().filter_map(Value::as_str).collect();
        assert_eq!(keys, ["name", "description", "metadata"]);
        let meta = fm["metadata"].as_mapping().unwrap();
        assert!(meta.values().all(Value::is_string), "{yaml}");
        assert!(
            meta.keys()
                .all(|k| k.as_str().unwrap().starts_with("metaclaw-"))
        );
        // No flow collections: strict YAML readers refuse them.
        for line in yaml.lines() {
            let value = line.split_once(": ").map_or("", |(_, v)| v);
            assert!(!value.starts_with(['[', '{']), "{line}");
        }
        assert_eq!(meta["metaclaw-tags"].as_str(), Some("a: b, #c, - d"));
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
