//! The skills part of the injected context block, within a token budget.
//!
//! Skills come in retrieval order (pinned first, then by score); each goes in whole or not
//! at all, so the agent never sees half a procedure. A skill too large for what is left is
//! skipped and a smaller one after it may still fit.

use crate::Skill;
use crate::retrieval::STANDING_TITLE;
pub use metaclaw_wire::tokens::estimate_tokens;

const HEADING: &str = "## Skills\nGuidance picked from the skill library for this request. \
Follow a skill when it applies; ignore it when it does not.";

/// The rendered section and what it holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rendered {
    pub text: String,
    /// Names of the skills included, in order.
    pub skills: Vec<String>,
    /// Estimated tokens of `text`.
    pub tokens: usize,
}

/// Renders as many of `skills` as fit in `budget` tokens; `None` when none fits.
pub fn render_skills<'a>(
    skills: impl IntoIterator<Item = &'a Skill>,
    budget: usize,
) -> Option<Rendered> {
    render_with_standing([], skills, budget)
}

/// [`render_skills`] with the user's standing rules first, one line each in a group of
/// their own (see `retrieval::standing`), as many as fit.
pub fn render_with_standing<'a>(
    standing: impl IntoIterator<Item = &'a Skill>,
    skills: impl IntoIterator<Item = &'a Skill>,
    budget: usize,
) -> Option<Rendered> {
    let mut text = String::from(HEADING);
    let mut tokens = estimate_tokens(HEADING);
    let mut names = Vec::new();
    for rule in standing {
        let line = crate::retrieval::standing_bullet(rule);
        let heading = if names.is_empty() {
            estimate_tokens(STANDING_TITLE) + 1
        } else {
            0
        };
        let cost = estimate_tokens(&line) + 1 + heading;
        if tokens + cost > budget {
            continue;
        }
        if names.is_empty() {
            text.push_str("\n\n");
            text.push_str(STANDING_TITLE);
        }
        text.push('\n');
        text.push_str(&line);
        tokens += cost;
        names.push(rule.name.clone());
    }
    for skill in skills {
        let section = section(skill);
        let cost = estimate_tokens(&section) + 1;
        if tokens + cost > budget {
            continue;
        }
        text.push_str("\n\n");
        text.push_str(&section);
        tokens += cost;
        names.push(skill.name.clone());
    }
    if names.is_empty() {
        return None;
    }
    Some(Rendered {
        text,
        skills: names,
        tokens,
    })
}

/// `### name`, the description in italics, then the body with its title dropped (the name
/// already says it) and its headings moved below the skill's own.
fn section(skill: &Skill) -> String {
    let mut out = format!("### {}\n_{}_\n", skill.name, skill.description.trim());
    let mut in_fence = false;
    let mut lines = skill.body.lines().peekable();
    if lines.peek().is_some_and(|l| l.starts_with("# ")) {
        lines.next();
    }
    for line in lines {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        out.push('\n');
        if !in_fence && line.starts_with('#') {
            let level = line.chars().take_while(|&c| c == '#').count();
            let rest = &line[level..];
            if rest.starts_with(' ') {
                out.push_str(&"#".repeat((level + 3).min(6)));
                out.push_str(rest);
                continue;
            }
        }
        out.push_str(line);
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Source;

    fn skill(name: &str, body: &str) -> Skill {
        Skill {
            name: name.into(),
            description: format!("Use when {name} matters."),
            category: "coding".into(),
            tags: vec![],
            always: false,
            disabled: false,
            source: Source::Builtin,
            provenance: None,
            body: body.into(),
            path: None,
            extra: Default::default(),
        }
    }

    #[test]
    fn drops_title_and_demotes_headings_outside_fences() {
        let s = skill(
            "run-tests",
            "# Run tests\n\n## Steps\n1. Run.\n```md\n## not a heading\n```",
        );
        let r = render_skills([&s], 1000).unwrap();
        assert!(r.text.starts_with("## Skills\n"));
        assert!(
            r.text
                .contains("### run-tests\n_Use when run-tests matters._\n")
        );
        assert!(!r.text.contains("# Run tests"));
        assert!(r.text.contains("\n##### Steps\n"));
        assert!(
            r.text.contains("\n## not a heading\n"),
            "fenced text untouched"
        );
        assert_eq!(r.skills, vec!["run-tests"]);
        assert!(r.tokens >= estimate_tokens(&r.text), "never under-counts");
    }

    #[test]
    fn budget_skips_what_does_not_fit_and_keeps_what_does() {
        let big = skill("big", &"word ".repeat(400));
        let small = skill("small", "1. Do it.");
        let r = render_skills([&big, &small], 200).unwrap();
        assert_eq!(r.skills, vec!["small"]);
        assert!(r.tokens <= 200);
        assert!(render_skills([&big], 200).is_none());
        assert!(render_skills([], 1000).is_none());
    }
}
