//! The user's standing rules among the skills: learned one-sentence rules ("From now on,
//! write every timestamp in ISO 8601") stand in every main turn's block while together they
//! fit `standing_tokens`, like memory's standing-rules profile.
//!
//! A rule applies to requests that share no word with it ("Log the meeting that started at
//! nine" needs the timestamp rule), which neither words nor meaning reliably bridge; the
//! lessons lane finds a rule only through a shared topic word. Shown whole, the rules are
//! the same bytes on every turn (sorted by name), so they stay in the provider's prompt
//! cache. Past the budget none stands and each is found by relevance, as before: the cost of
//! a rule in every prompt is only worth paying for a few short ones.

use super::bm25::Doc;
use crate::Skill;
use crate::render::estimate_tokens;
use crate::skill::Source;

/// A stated rule is one or two plain sentences: this short, on a few lines, no headings.
const RULE_BODY_CHARS: usize = 400;
const RULE_LINES: usize = 3;

/// The heading of the standing rules' group in the skills block.
pub const STANDING_TITLE: &str = "### Standing rules (apply them whenever they fit)";

/// Whether `body` is a one-sentence rule rather than a procedure.
pub fn is_rule(body: &str) -> bool {
    let lines: Vec<&str> = body.lines().filter(|l| !l.trim().is_empty()).collect();
    body.chars().count() <= RULE_BODY_CHARS
        && lines.len() <= RULE_LINES
        && !lines.iter().any(|l| l.trim_start().starts_with('#'))
}

/// A standing rule's line in the block: its body on one line.
pub fn bullet(skill: &Skill) -> String {
    let text: Vec<&str> = skill.body.split_whitespace().collect();
    format!("- {}", text.join(" "))
}

/// What the group costs with these rules in it.
pub fn cost<'a>(rules: impl IntoIterator<Item = &'a Skill>) -> usize {
    let mut tokens = estimate_tokens(STANDING_TITLE) + 1;
    for rule in rules {
        tokens += estimate_tokens(&bullet(rule)) + 1;
    }
    tokens
}

/// Doc ids (in `docs`, which index `skills` minus the disabled ones) of the learned rules,
/// by name, when all of them fit `cap` tokens; none otherwise (or when `cap` is 0).
pub(crate) fn standing(skills: &[Skill], docs: &[Doc], cap: usize) -> Vec<u32> {
    if cap == 0 {
        return Vec::new();
    }
    let mut rules: Vec<&Skill> = skills
        .iter()
        .filter(|s| s.source == Source::Evolved && !s.always && !s.disabled && is_rule(&s.body))
        .collect();
    if rules.is_empty() || cost(rules.iter().copied()) > cap {
        return Vec::new();
    }
    rules.sort_by(|a, b| a.name.cmp(&b.name));
    rules
        .iter()
        .filter_map(|r| docs.iter().position(|d| d.name == r.name))
        .filter_map(|i| u32::try_from(i).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_skill;
    use crate::render::render_with_standing;
    use crate::retrieval::{RetrievalConfig, Retriever};

    fn skill(name: &str, source: &str, body: &str) -> Skill {
        let text = format!(
            "---\nname: {name}\ndescription: Use when it applies.\ncategory: productivity\nsource: {source}\n---\n{body}\n"
        );
        parse_skill(&text, None).unwrap().0
    }

    fn bank() -> Vec<Skill> {
        vec![
            skill(
                "rule-timestamps",
                "evolved",
                "Always write every timestamp in ISO 8601.",
            ),
            skill(
                "rule-commits",
                "evolved",
                "Start commit messages with feat: or fix:.",
            ),
            skill(
                "deploy-steps",
                "evolved",
                "# Deploy\n\n1. Build\n2. Test\n3. Ship\n4. Tag the release",
            ),
            skill(
                "weather-reports",
                "builtin",
                "Give the forecast for the trip.",
            ),
        ]
    }

    #[test]
    fn learned_rules_stand_in_every_turn_while_they_fit() {
        let skills = bank();
        let r = Retriever::new(&skills, RetrievalConfig::default());
        let hits = r.retrieve("Log the meeting that started at nine this morning.");
        let standing: Vec<&str> = hits
            .iter()
            .filter(|h| h.standing)
            .map(|h| h.name.as_str())
            .collect();
        // Rules only (not the procedure, not a built-in), by name, whatever the request.
        assert_eq!(standing, ["rule-commits", "rule-timestamps"]);
        assert_eq!(r.retrieve("hello").len(), 2);

        let by_name = |n: &str| skills.iter().find(|s| s.name == n).unwrap();
        let rendered = render_with_standing(
            [by_name("rule-commits"), by_name("rule-timestamps")],
            [by_name("weather-reports")],
            1_000,
        )
        .unwrap();
        let text = &rendered.text;
        let group = text.find(STANDING_TITLE).unwrap();
        assert!(text[group..].starts_with(&format!(
            "{STANDING_TITLE}\n- Start commit messages with feat: or fix:.\n- Always write"
        )));
        assert!(text.find("### weather-reports").unwrap() > group, "{text}");
        assert_eq!(rendered.skills.len(), 3);
    }

    #[test]
    fn past_the_budget_no_rule_stands() {
        let skills = bank();
        let tight = RetrievalConfig {
            standing_tokens: cost(skills.iter().take(2)) - 1,
            ..RetrievalConfig::default()
        };
        let r = Retriever::new(&skills, tight);
        assert!(r.retrieve("hello").is_empty());
        let exact = RetrievalConfig {
            standing_tokens: cost(skills.iter().take(2)),
            ..RetrievalConfig::default()
        };
        assert_eq!(Retriever::new(&skills, exact).retrieve("hello").len(), 2);
        let off = RetrievalConfig {
            standing_tokens: 0,
            ..RetrievalConfig::default()
        };
        assert!(Retriever::new(&skills, off).retrieve("hello").is_empty());
    }

    #[test]
    fn a_rule_is_short_plain_text() {
        assert!(is_rule("Always write dates as DD.MM.YYYY."));
        assert!(is_rule(
            "以后所有时间都写成 ISO 8601 格式，带 +08:00 时区。"
        ));
        assert!(!is_rule("# Deploy\n\n1. Build\n2. Test\n3. Ship\n4. Tag"));
        assert!(!is_rule(&"word ".repeat(100)));
    }
}
