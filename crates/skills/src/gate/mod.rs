//! The safety gate every skill passes before it enters the library — imported, synced from
//! a team, or learned by the evolver. A skill is text injected into the agent's prompt, so a
//! malicious one is a prompt injection with the user's own authority: it may tell the agent
//! to ignore its instructions, hide what it does, run a downloaded script, or read and send
//! the user's secrets. A flagged skill is quarantined (see `quarantine`), never injected.
//!
//! The rules are in `rules`, each with its reason and tests.

mod rules;

use serde::{Deserialize, Serialize};

pub use rules::MAX_BYTES;

use crate::skill::Skill;

/// One reason a skill was flagged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The rule's stable id, e.g. `download-and-execute`.
    pub rule: String,
    /// Why that is dangerous, for people.
    pub reason: String,
    /// Where: the field (`name`, `description`, `tags`, `body`) and, in the body, the
    /// 1-based line.
    pub field: String,
    pub line: Option<usize>,
    /// The offending text, at most 120 characters, invisible characters spelled out.
    pub excerpt: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{} (body line {line}): ", self.rule)?,
            None => write!(f, "{} ({}): ", self.rule, self.field)?,
        }
        write!(f, "{} — {}", self.reason, self.excerpt)
    }
}

/// Every finding for `skill`; empty means it may enter the library.
pub fn scan(skill: &Skill) -> Vec<Finding> {
    let tags = skill.tags.join(", ");
    let fields = [
        ("name", skill.name.as_str()),
        ("description", skill.description.as_str()),
        ("tags", tags.as_str()),
        ("body", skill.body.as_str()),
    ];
    let mut out = Vec::new();
    let size: usize = fields.iter().map(|(_, text)| text.len()).sum();
    if size > MAX_BYTES {
        out.push(finding(
            rules::OVERSIZED,
            "body",
            None,
            &format!("{size} bytes, at most {MAX_BYTES}"),
        ));
    }
    for (field, text) in fields {
        for (n, line) in text.lines().enumerate() {
            let at = (field == "body").then_some(n + 1);
            if let Some(c) = line.chars().find(|&c| rules::is_hidden(c)) {
                let shown = format!("U+{:04X} in “{}”", u32::from(c), spell_out(line));
                out.push(finding(rules::HIDDEN_TEXT, field, at, &shown));
            }
            for (rule, re) in rules::line_rules() {
                let hit = re
                    .find_iter(line)
                    .find(|m| !rules::quoted(line, m.start(), m.end()));
                if let Some(m) = hit {
                    out.push(finding(*rule, field, at, m.as_str()));
                }
            }
        }
    }
    out
}

fn finding(rule: rules::Rule, field: &str, line: Option<usize>, text: &str) -> Finding {
    let mut excerpt: String = spell_out(text.trim()).chars().take(120).collect();
    if excerpt.len() < text.trim().len() && excerpt.chars().count() == 120 {
        excerpt.push('…');
    }
    Finding {
        rule: rule.id.to_owned(),
        reason: rule.reason.to_owned(),
        field: field.to_owned(),
        line,
        excerpt,
    }
}

/// `text` with invisible characters written as `<U+200B>`, so people can see them.
fn spell_out(text: &str) -> String {
    text.chars()
        .map(|c| {
            if rules::is_hidden(c) {
                format!("<U+{:04X}>", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect()
}
