//! Writing the accepted skills: the only I/O in evolution.

use std::fs;
use std::path::{Component, Path};

use super::decide::Decision;
use super::parse::Rejection;
use serde::{Deserialize, Serialize};

use crate::parse::{is_slug, parse_skill};
use crate::skill::{Skill, Source};
use crate::write::write_skill_atomically;
use crate::{history, proposals, quarantine};

/// `skills.review`: whether a learned skill goes live at once or waits for a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Review {
    /// Written into the library (the skill it improves kept in the history).
    #[default]
    Auto,
    /// Filed as a proposal (`<dir>/.proposals/`); nothing is injected until approved.
    Ask,
}

/// What `apply` did, by skill name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    pub added: Vec<String>,
    pub improved: Vec<String>,
    /// Filed for approval instead (`Review::Ask`), additions and improvements alike.
    pub proposed: Vec<String>,
    /// The decisions' rejections, then the writes that failed or were refused.
    pub rejected: Vec<Rejection>,
}

/// Writes each accepted skill to `<dir>/<name>/SKILL.md` atomically. A failure for one skill
/// becomes a rejection and the others are still written. A skill the safety gate flags is
/// quarantined instead (`<dir>/.quarantine/`) and reported as a rejection with the rules. Besides the slug check in
/// `write_skill_atomically`, a write is refused when the skill folder is a symlink (it could
/// lead outside `dir`), when an addition would replace a file that appeared since the library
/// was read, and when an improvement would replace a file that is not an evolved skill.
/// With `Review::Ask` the same checks pass a skill into `<dir>/.proposals/` instead.
pub fn apply(dir: &Path, decisions: &[Decision], review: Review) -> Applied {
    let mut out = Applied::default();
    for d in decisions {
        if let Decision::Reject(r) = d {
            out.rejected.push(r.clone());
        }
    }
    for d in decisions {
        let (skill, improving) = match d {
            Decision::Add(s) => (s, false),
            Decision::Improve { skill, .. } => (skill, true),
            Decision::Reject(_) => continue,
        };
        // A learned skill passes the same gate as an imported one: the evolver reads the
        // user's conversations, which may carry text from a malicious page or file.
        let findings = crate::gate::scan(skill);
        if !findings.is_empty() {
            let rules: Vec<&str> = findings.iter().map(|f| f.rule.as_str()).collect();
            let reason = match quarantine::hold(dir, skill, None, findings.clone(), "learned") {
                Ok(_) => format!("quarantined by the safety gate: {}", rules.join(", ")),
                Err(e) => format!("refused by the safety gate ({}); {e}", rules.join(", ")),
            };
            out.rejected
                .push(Rejection::new(skill.name.clone(), reason));
            continue;
        }
        match write(dir, skill, improving, review) {
            Ok(()) if review == Review::Ask => out.proposed.push(skill.name.clone()),
            Ok(()) if improving => out.improved.push(skill.name.clone()),
            Ok(()) => out.added.push(skill.name.clone()),
            Err(reason) => out
                .rejected
                .push(Rejection::new(skill.name.clone(), reason)),
        }
    }
    out
}

fn write(dir: &Path, skill: &Skill, improving: bool, review: Review) -> Result<(), String> {
    let rel = Path::new(&skill.name);
    let one_plain_part = rel.components().count() == 1
        && matches!(rel.components().next(), Some(Component::Normal(_)));
    if !is_slug(&skill.name) || !one_plain_part {
        return Err(format!("refused to write outside {}", dir.display()));
    }
    let folder = dir.join(rel);
    if fs::symlink_metadata(&folder).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(format!("refused: {} is a symlink", folder.display()));
    }
    let file = folder.join("SKILL.md");
    match (fs::read_to_string(&file), improving) {
        (Ok(_), false) => {
            return Err(format!(
                "{} appeared since the library was read",
                file.display()
            ));
        }
        (Ok(text), true) => {
            let evolved =
                parse_skill(&text, Some(&file)).is_ok_and(|(s, _)| s.source == Source::Evolved);
            if !evolved {
                return Err(format!("{} is not an evolved skill", file.display()));
            }
        }
        (Err(_), _) => {}
    }
    let written = match review {
        Review::Ask => proposals::propose(dir, skill, improving).map(|_| ()),
        Review::Auto if improving => history::replace(dir, skill, "learned").map(|_| ()),
        Review::Auto => write_skill_atomically(dir, skill).map(|_| ()),
    };
    written.map_err(|e| format!("write failed: {e}"))
}
