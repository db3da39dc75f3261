//! What a skill teaches, apart from its layout: the rule or the steps of its body. A learned
//! skill is only worth writing if it teaches something, and an improvement must keep what
//! the skill it replaces taught.
//!
//! Both are judged on tokens (`retrieval::tokenize`: stemmed, stopwords dropped), so a
//! rewording that keeps the words of a step keeps the step.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use super::prompt::instruction_passages;
use super::schema::response_schema;
use crate::retrieval::tokenize;

/// Words a model fills a required field with when it has nothing to say ("Nothing new was
/// learned in this session", "No reusable lesson; N/A").
const FILLER: &str = "nothing new none n/a na null empty no skill skills lesson lessons learn \
     learned learnt reusable session sessions turn turns conversation conversations applicable \
     add added addition found worth record recorded write written note noted relevant \
     insight insights update updates change changes needed necessary additional";

/// A step counts as kept when at least this share of its tokens is in the new body.
const KEPT_SHARE: f32 = 0.5;

fn tokens(text: &str) -> BTreeSet<String> {
    tokenize(text).into_iter().collect()
}

/// The evolver's instructions, passage by passage (each field's rule, the schema's
/// descriptions), as token sets: a body made only of one passage's words restates the
/// template instead of teaching something.
fn template() -> &'static [BTreeSet<String>] {
    static TEMPLATE: OnceLock<Vec<BTreeSet<String>>> = OnceLock::new();
    TEMPLATE.get_or_init(|| {
        let mut descriptions = Vec::new();
        collect_descriptions(&response_schema(), &mut descriptions);
        instruction_passages()
            .into_iter()
            .chain(descriptions)
            .map(|p| tokens(&p))
            .collect()
    })
}

fn collect_descriptions(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                match (k.as_str(), v) {
                    ("description", serde_json::Value::String(s)) => out.push(s.clone()),
                    _ => collect_descriptions(v, out),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| collect_descriptions(v, out)),
        _ => {}
    }
}

/// Whether `body` teaches nothing: no words beyond headings and list markers, only filler
/// ("Nothing new"), or only the words of one passage of the evolver's own instructions.
pub(crate) fn says_nothing(body: &str) -> bool {
    let words: BTreeSet<String> = items(body).into_iter().flatten().collect();
    let filler = tokens(FILLER);
    let rest: BTreeSet<&String> = words.iter().filter(|w| !filler.contains(*w)).collect();
    rest.is_empty()
        || template()
            .iter()
            .any(|passage| rest.iter().all(|w| passage.contains(*w)))
}

/// The steps and rules of `old` that `new` no longer holds, when they are at least a quarter
/// of them (one of up to four): the text of each, for the log.
pub(crate) fn dropped(old: &str, new: &str) -> Option<Vec<String>> {
    let kept_words = tokens(new);
    let old_items = item_texts(old);
    let lost: Vec<String> = old_items
        .iter()
        .filter(|(_, words)| {
            let kept = words.iter().filter(|w| kept_words.contains(*w)).count();
            (kept as f32) < KEPT_SHARE * words.len() as f32
        })
        .map(|(text, _)| text.clone())
        .collect();
    (!lost.is_empty() && lost.len() * 4 >= old_items.len()).then_some(lost)
}

fn items(body: &str) -> Vec<BTreeSet<String>> {
    item_texts(body).into_iter().map(|(_, w)| w).collect()
}

/// The body's items with their tokens: each list item (with its continuation lines), each
/// sentence of other text, each code block; headings and blank lines are layout. Items
/// without a token ("---", "Steps:") are left out.
fn item_texts(body: &str) -> Vec<(String, BTreeSet<String>)> {
    let mut items: Vec<String> = Vec::new();
    let mut paragraph = String::new();
    let mut code: Option<String> = None;
    let mut in_list = false;
    let flush = |paragraph: &mut String, items: &mut Vec<String>| {
        items.extend(sentences(paragraph));
        paragraph.clear();
    };
    for line in body.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            match code.take() {
                Some(block) => items.push(block),
                None => {
                    flush(&mut paragraph, &mut items);
                    code = Some(String::new());
                }
            }
            in_list = false;
            continue;
        }
        if let Some(block) = code.as_mut() {
            block.push_str(line);
            block.push('\n');
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') {
            flush(&mut paragraph, &mut items);
            in_list = false;
        } else if let Some(item) = list_item(trimmed) {
            flush(&mut paragraph, &mut items);
            items.push(item.to_string());
            in_list = true;
        } else if in_list && line.starts_with([' ', '\t']) {
            if let Some(last) = items.last_mut() {
                last.push(' ');
                last.push_str(trimmed);
            }
        } else {
            in_list = false;
            paragraph.push_str(trimmed);
            paragraph.push(' ');
        }
    }
    flush(&mut paragraph, &mut items);
    items.extend(code);
    items
        .into_iter()
        .map(|text| {
            let words = tokens(&text);
            (text.trim().to_string(), words)
        })
        .filter(|(_, words)| !words.is_empty())
        .collect()
}

/// The text of a list item line (`- x`, `* x`, `+ x`, `1. x`, `1) x`), or `None`.
fn list_item(line: &str) -> Option<&str> {
    if let Some(rest) = line
        .strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))
        .or_else(|| line.strip_prefix("+ "))
    {
        return Some(rest);
    }
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let rest = &line[digits..];
    (digits > 0)
        .then(|| rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")))
        .flatten()
}

/// Sentences of running text, split after `.`, `!`, `?` and their CJK forms.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        current.push(c);
        let ends = matches!(c, '。' | '！' | '？')
            || matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|n| n.is_whitespace());
        if ends {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.trim().is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEPLOY: &str = "# Deploy billing\n\n## When to use\nBefore a billing release.\n\n## Steps\n1. Run the database migrations first.\n2. Deploy the API, then the workers.\n3. Check the invoices page loads.\n\n```sh\nmake smoke-test\n```\n";

    #[test]
    fn items_are_steps_sentences_and_code_blocks() {
        let texts: Vec<String> = item_texts(DEPLOY).into_iter().map(|(t, _)| t).collect();
        assert_eq!(
            texts,
            [
                "Before a billing release.",
                "Run the database migrations first.",
                "Deploy the API, then the workers.",
                "Check the invoices page loads.",
                "make smoke-test",
            ]
        );
        let wrapped = "- Run the tests\n  before every push.\nThen rest. Then sleep!";
        let texts: Vec<String> = item_texts(wrapped).into_iter().map(|(t, _)| t).collect();
        assert_eq!(
            texts,
            [
                "Run the tests before every push.",
                "Then rest.",
                "Then sleep!"
            ]
        );
    }

    #[test]
    fn filler_and_restated_templates_say_nothing() {
        for body in [
            "Nothing new was learned in this session.",
            "No new skill: nothing reusable in these turns. N/A",
            "# Title\n\n## When to use\n\n## Steps\n\n## Anti-patterns\n",
            "Markdown as short as the lesson: one or two sentences for a stated rule.",
            "",
        ] {
            assert!(says_nothing(body), "{body:?}");
        }
        for body in [
            "Always write dates as YYYY-MM-DD in reports.",
            "Keep answers short.",
            "以后代码注释一律用英文写，不要用中文。",
            DEPLOY,
        ] {
            assert!(!says_nothing(body), "{body:?}");
        }
    }

    #[test]
    fn every_built_in_skill_says_something() {
        for (name, text) in crate::bank::builtin_skills() {
            let (skill, _) = crate::parse_skill(text, None).unwrap();
            assert!(!says_nothing(&skill.body), "{name}");
            assert!(item_texts(&skill.body).len() >= 3, "{name}");
        }
    }

    #[test]
    fn an_improvement_keeps_the_steps_or_drops_them() {
        let reworded = "# Deploy billing\n\n1. Run the DB migrations first.\n2. Deploy the API, then workers.\n3. Check the invoices page.\n4. Tell support.\n\n```sh\nmake smoke-test\n```\n";
        assert_eq!(dropped(DEPLOY, reworded), None);
        // One step of five lost: a trim, not a loss of what the skill held.
        let trimmed = DEPLOY.replace("make smoke-test", "");
        assert_eq!(dropped(DEPLOY, &trimmed), None);
        let other =
            "# Deploy billing\n\n1. Announce the release in the channel.\n2. Wait for approval.\n";
        let lost = dropped(DEPLOY, other).unwrap();
        assert!(
            lost.contains(&"Run the database migrations first.".to_string()),
            "{lost:?}"
        );
        // A one-sentence rule replaced by another.
        assert!(dropped("Write dates as YYYY-MM-DD.", "Reply in three bullets.").is_some());
        assert_eq!(
            dropped(
                "Write dates as YYYY-MM-DD.",
                "Always write dates as YYYY-MM-DD, in UTC."
            ),
            None
        );
    }
}
