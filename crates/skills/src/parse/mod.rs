//! Reading a `SKILL.md`: real YAML frontmatter between `---` lines, then a Markdown body.

use std::fmt;
use std::path::{Path, PathBuf};

mod fields;

use serde::Deserialize;
use serde_yaml_ng::Mapping;

use crate::skill::Skill;

/// Why a skill file could not be read, parsed or written.
#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    /// The file's content is wrong; `line` is 1-based in the file when known.
    #[error("{}{message}", Location(path.as_deref(), *line))]
    Invalid {
        path: Option<PathBuf>,
        line: Option<usize>,
        message: String,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl SkillError {
    pub(crate) fn invalid(path: Option<&Path>, line: Option<usize>, message: String) -> Self {
        SkillError::Invalid {
            path: path.map(Path::to_path_buf),
            line,
            message,
        }
    }

    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        SkillError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// The file the error is about, when known.
    pub fn path(&self) -> Option<&Path> {
        match self {
            SkillError::Invalid { path, .. } => path.as_deref(),
            SkillError::Io { path, .. } => Some(path),
        }
    }
}

/// `path:line: ` prefix in the style compilers use, so editors can jump to it.
pub(crate) struct Location<'a>(Option<&'a Path>, Option<usize>);

impl fmt::Display for Location<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.0, self.1) {
            (Some(p), Some(l)) => write!(f, "{}:{l}: ", p.display()),
            (Some(p), None) => write!(f, "{}: ", p.display()),
            (None, Some(l)) => write!(f, "line {l}: "),
            (None, None) => Ok(()),
        }
    }
}

/// True for a lowercase slug `^[a-z0-9][a-z0-9-]{0,63}$`: safe as a folder name anywhere.
pub fn is_slug(s: &str) -> bool {
    let b = s.as_bytes();
    let ok = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    (1..=64).contains(&b.len()) && ok(&b[0]) && b[1..].iter().all(|c| ok(c) || *c == b'-')
}

/// Frontmatter text and body, with the 1-based file line of the opening `---`.
pub(crate) struct Split<'a> {
    pub(crate) open_line: usize,
    pub(crate) yaml: String,
    pub(crate) body: Vec<&'a str>,
}

fn split<'a>(text: &'a str, path: Option<&Path>) -> Result<Split<'a>, SkillError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let Some(open) = lines.iter().position(|l| !l.trim().is_empty()) else {
        return Err(SkillError::invalid(path, None, "file is empty".into()));
    };
    if lines[open].trim() != "---" {
        let msg = "expected the file to start with a `---` frontmatter line".into();
        return Err(SkillError::invalid(path, Some(open + 1), msg));
    }
    let Some(len) = lines[open + 1..].iter().position(|l| *l == "---") else {
        let msg = "frontmatter is not closed by a `---` line".into();
        return Err(SkillError::invalid(path, Some(open + 1), msg));
    };
    let close = open + 1 + len;
    Ok(Split {
        open_line: open + 1,
        yaml: lines[open + 1..close].join("\n"),
        body: lines[close + 1..].to_vec(),
    })
}

/// The file line of the first `key:` in the frontmatter (indented too, for `metadata`
/// entries), for errors about that field.
pub(crate) fn key_line(s: &Split<'_>, key: &str) -> usize {
    s.yaml
        .lines()
        .position(|l| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|r| r.trim_start().starts_with(':'))
        })
        .map_or(s.open_line, |i| s.open_line + 1 + i)
}

/// A skill as read from its file.
#[derive(Debug)]
pub struct Parsed {
    pub skill: Skill,
    /// Non-fatal: unknown MetaClaw keys, categories.
    pub warnings: Vec<String>,
    /// Written in the earlier format (see `format`): MetaClaw's fields or another tool's keys
    /// at the top level, or nested `metadata`. It loads as it is; `migrate` rewrites it.
    pub legacy: bool,
    /// What the file holds that the skill does not keep: a field written both at the top
    /// level and under `metadata` (the latter is used), unknown provenance keys. A rewrite
    /// would lose them, so such a file is left as it is.
    pub unkept: Vec<String>,
}

/// Parses a `SKILL.md`. Returns the skill and non-fatal warnings (unknown keys, categories).
pub fn parse_skill(text: &str, path: Option<&Path>) -> Result<(Skill, Vec<String>), SkillError> {
    read_skill(text, path).map(|p| (p.skill, p.warnings))
}

/// Parses a `SKILL.md` in either format, saying which (see [`Parsed::legacy`]).
pub fn read_skill(text: &str, path: Option<&Path>) -> Result<Parsed, SkillError> {
    let s = split(text, path)?;
    let at = |line: usize, msg: String| SkillError::invalid(path, Some(line), msg);
    if s.yaml.trim().is_empty() {
        return Err(at(s.open_line, "frontmatter is empty".into()));
    }
    let de = serde_yaml_ng::Deserializer::from_str(&s.yaml);
    let fm = Mapping::deserialize(de).map_err(|e| {
        let line = e.location().map_or(s.open_line, |l| s.open_line + l.line());
        let msg = e.to_string();
        // The location is re-reported as a file line in the prefix.
        let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
        at(line, msg)
    })?;
    fields::Reader::new(&s, path).read(fm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::Source;

    const GOOD: &str = "---\nname: debug-systematically\ndescription: Use this skill when\n  a bug resists.\ncategory: debugging\ntags: [bugs, triage]\nalways: true\nsource: builtin\n---\n\n# Debug Systematically\n\nSteps.\n";

    fn err(text: &str) -> String {
        match parse_skill(text, Some(Path::new("skills/foo/SKILL.md"))) {
            Ok(_) => panic!("expected an error for {text:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn good_file() {
        let (s, w) = parse_skill(GOOD, None).unwrap();
        assert_eq!(s.name, "debug-systematically");
        assert_eq!(s.description, "Use this skill when a bug resists.");
        assert_eq!(s.category, "debugging");
        assert_eq!(s.tags, ["bugs", "triage"]);
        assert!(s.always && !s.disabled);
        assert_eq!(s.source, Source::Builtin);
        assert_eq!(s.body, "# Debug Systematically\n\nSteps.");
        assert!(w.is_empty(), "{w:?}");
        assert!(read_skill(GOOD, None).unwrap().legacy, "the earlier format");
    }

    #[test]
    fn defaults() {
        let (s, _) = parse_skill("---\nname: a\ndescription: d\n---\nbody", None).unwrap();
        assert_eq!(s.category, "general");
        assert_eq!(s.source, Source::User);
        assert!(!s.always && !s.disabled && s.tags.is_empty() && s.provenance.is_none());
    }

    #[test]
    fn bom_crlf_and_leading_blank_lines() {
        let text = format!("\u{feff}\r\n  \r\n{}", GOOD.replace('\n', "\r\n"));
        let (s, _) = parse_skill(&text, None).unwrap();
        assert_eq!(s.name, "debug-systematically");
        assert_eq!(
            s.body,
            "# Debug Systematically\r\n\r\nSteps.".replace('\r', "")
        );
    }

    #[test]
    fn missing_name_and_description() {
        let e = err("---\ndescription: d\n---\n");
        assert!(
            e.starts_with("skills/foo/SKILL.md:1: missing required field `name`"),
            "{e}"
        );
        let e = err("---\nname: a\n---\n");
        assert!(e.contains("missing required field `description`"), "{e}");
        let e = err("---\nname: a\ndescription: \"  \"\n---\n");
        assert!(e.starts_with("skills/foo/SKILL.md:3: "), "{e}");
    }

    #[test]
    fn bad_slug_names_the_line() {
        let e = err("---\ndescription: d\nname: Foo Bar\n---\n");
        assert_eq!(
            e,
            "skills/foo/SKILL.md:3: name: expected a slug like debug-systematically, got \"Foo Bar\""
        );
        assert!(!is_slug("../x") && !is_slug("-a") && !is_slug(&"a".repeat(65)));
        assert!(is_slug("a") && is_slug(&"a".repeat(64)) && is_slug("0-x"));
    }

    #[test]
    fn yaml_error_reports_the_file_line() {
        // Line 4 of the file (after a BOM and a blank line) is line 2 of the frontmatter.
        let e = err("\u{feff}\n---\nname: a\n  bad: indent\ndescription: d\n---\n");
        assert_eq!(
            e,
            "skills/foo/SKILL.md:4: mapping values are not allowed in this context"
        );
        // An unclosed list is noticed where the frontmatter ends: the closing `---` line.
        let e = err("\n---\nname: a\ndescription: d\ntags: [x, y\n---\nbody\n");
        assert!(e.starts_with("skills/foo/SKILL.md:6: "), "{e}");
        let e = err("---\nname: a\ndescription: d\nalways: maybe\n---\n");
        assert!(e.starts_with("skills/foo/SKILL.md:4: always: "), "{e}");
    }

    #[test]
    fn framing_errors() {
        assert!(err("name: a\n").contains(":1: expected the file to start"));
        assert!(err("---\nname: a\n").contains("not closed"));
        assert!(err("").contains("empty"));
        // A `---` that is not a whole line does not close the frontmatter.
        assert!(err("---\nname: a\ndescription: x --- y\n ---\n").contains("not closed"));
    }

    #[test]
    fn tags_as_list_or_string() {
        let (s, _) =
            parse_skill("---\nname: a\ndescription: d\ntags: x, y ,,z\n---\n", None).unwrap();
        assert_eq!(s.tags, ["x", "y", "z"]);
        let (s, _) = parse_skill(
            "---\nname: a\ndescription: d\ntags:\n  - x\n  - y\n---\n",
            None,
        )
        .unwrap();
        assert_eq!(s.tags, ["x", "y"]);
    }

    #[test]
    fn other_tools_keys_are_kept_under_metadata_and_unknown_categories_warn() {
        let text = "---\nname: a\ndescription: d\nversion: 2\ncategory: Cooking\nmetadata:\n  openclaw:\n    requires:\n      bins: [curl]\n  author: ann\n---\n";
        let p = read_skill(text, Some(Path::new("p/SKILL.md"))).unwrap();
        assert!(p.legacy);
        assert_eq!(p.skill.category, "Cooking");
        assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
        assert!(
            p.warnings[0].starts_with("p/SKILL.md:5: category \"Cooking\""),
            "{}",
            p.warnings[0]
        );
        let meta: Vec<(&str, &str)> = p
            .skill
            .extra
            .metadata
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            meta,
            [
                ("author", "ann"),
                ("openclaw", r#"{"requires":{"bins":["curl"]}}"#),
                ("version", "2")
            ]
        );
    }

    #[test]
    fn what_a_rewrite_would_lose_is_named() {
        let text = "---\nname: a\ndescription: d\nversion: 1\nsource: user\nprovenance:\n  color: red\nmetadata:\n  version: 2\n  metaclaw-source: team\n---\n";
        let p = read_skill(text, None).unwrap();
        assert_eq!(p.skill.source, Source::Team);
        assert_eq!(p.skill.extra.metadata["version"], "2");
        assert_eq!(p.unkept, ["provenance.color", "version", "source"]);
        let same = "---\nname: a\ndescription: d\nversion: 2\nmetadata:\n  version: 2\n---\n";
        assert!(read_skill(same, None).unwrap().unkept.is_empty());
    }

    #[test]
    fn the_current_format_reads_metaclaw_fields_from_metadata() {
        let text = "---\nname: a\ndescription: d\nlicense: MIT\nallowed-tools: Read Grep\nmetadata:\n  metaclaw-category: coding\n  metaclaw-tags: x, y\n  metaclaw-always: 'true'\n  metaclaw-source: evolved\n  metaclaw-sessions: '[\"s1\"]'\n  metaclaw-generation: '7'\n  metaclaw-requests: '[\"fix it, now\"]'\n  version: 1.0.0\n---\nbody\n";
        let p = read_skill(text, None).unwrap();
        assert!(!p.legacy && p.warnings.is_empty(), "{:?}", p.warnings);
        let s = p.skill;
        assert_eq!((s.category.as_str(), s.source), ("coding", Source::Evolved));
        assert_eq!(s.tags, ["x", "y"]);
        assert!(s.always && !s.disabled);
        let prov = s.provenance.unwrap();
        assert_eq!(prov.sessions, ["s1"]);
        assert_eq!(prov.generation, Some(7));
        assert_eq!(prov.requests, ["fix it, now"]);
        assert_eq!(s.extra.license.as_deref(), Some("MIT"));
        assert_eq!(s.extra.allowed_tools.as_deref(), Some("Read Grep"));
        assert_eq!(s.extra.metadata["version"], "1.0.0");

        let e = err("---\nname: a\ndescription: d\nmetadata:\n  metaclaw-always: maybe\n---\n");
        assert!(
            e.starts_with("skills/foo/SKILL.md:5: metaclaw-always: "),
            "{e}"
        );
        let e = err("---\nname: a\ndescription: d\nmetadata:\n  metaclaw-sessions: s1\n---\n");
        assert!(
            e.contains(":5: metaclaw-sessions: expected a JSON array"),
            "{e}"
        );
        let e = err("---\nname: a\ndescription: d\nmetadata: [x]\n---\n");
        assert!(e.contains(":4: metadata: expected a map"), "{e}");
    }

    #[test]
    fn provenance_and_source() {
        let text = "---\nname: a\ndescription: d\nsource: evolved\nprovenance:\n  sessions: [s1]\n  model: m\n  improves: b\n---\n";
        let (s, _) = parse_skill(text, None).unwrap();
        assert_eq!(s.source, Source::Evolved);
        let p = s.provenance.unwrap();
        assert_eq!(
            (p.sessions, p.model, p.improves),
            (vec!["s1".to_string()], Some("m".into()), Some("b".into()))
        );
        assert!(err("---\nname: a\ndescription: d\nsource: alien\n---\n").contains(":4: source: "));
    }
}
